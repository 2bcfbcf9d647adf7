import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { AcpHttpService, ServiceMetrics } from "../../../src/acp/agent/http.js";
import { AcpHeadlessRuntime, AcpIntegration, ClientPermissionResolver } from "../../../src/acp/agent/index.js";
import { silentLogger } from "../../../src/core/index.js";
import { Agent } from "../../../src/loop/index.js";
import { ScriptedModel, script } from "../../../src/testing/index.js";
import { ToolRegistry, defaultPermissionPolicy } from "../../../src/tools/index.js";
import { TOKEN, connectOver } from "./http-support.js";
import { tempDir } from "./support.js";

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The library route: a runtime, served over HTTP/WebSocket by AcpHttpService. */
async function service(options: { idleConnectionMs?: number; ready?: () => Promise<void> } = {}) {
  const metrics = new ServiceMetrics();
  const integration = AcpIntegration.builder().name("http-lib").approvalResolver(new ClientPermissionResolver()).logger(silentLogger).build();
  const runtime = AcpHeadlessRuntime.builder()
    .integration(integration)
    .logger(silentLogger)
    .agentFactory((ctx) =>
      Agent.builder()
        .model(new ScriptedModel([script.text("hello from the library")], { onExhausted: "repeat-last" }))
        .tools(new ToolRegistry([]))
        .permissions(defaultPermissionPolicy())
        .observer(ctx.integration)
        .observer(metrics)
        .cancellation(ctx.cancellation)
        .logger(silentLogger)
        .build(),
    )
    .build();
  const http = await AcpHttpService.listen({ runtime, token: TOKEN, port: 0, metrics, logger: silentLogger, ...options });
  cleanups.push(() => http.close());
  return { http, runtime };
}

/** Resolves once `predicate` holds, checking after each scrape of /metrics (bounded). */
async function until(predicate: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("AcpHttpService (agentkit-acp/agent/http)", () => {
  it("serves a runtime over HTTP: a turn end to end; the library reports its URL and counts", async () => {
    const { http, runtime } = await service();
    expect(http.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/acp$/);
    const { agent, client, connection } = connectOver("http", http.url);
    cleanups.push(() => connection.close());
    await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: dir.path, mcpServers: [] });
    expect((await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hi" }] })).stopReason).toBe("end_turn");
    expect(client.updates(sessionId).some((u) => u.sessionUpdate === "agent_message_chunk")).toBe(true);
    expect([http.connectionCount, runtime.sessionCount, http.metrics.activeTurns]).toEqual([1, 1, 0]);
  });

  it("an HTTP connection whose client vanished (no event stream, no requests) is closed after the idle time, freeing its sessions", async () => {
    const { http, runtime } = await service({ idleConnectionMs: 300 });
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    // A raw client: initialize and session/new by POST, never an SSE stream, then silence.
    const headers = { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
    const init = await fetch(http.url, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } }) });
    const connectionId = init.headers.get("acp-connection-id") ?? "";
    await init.text();
    const posted = await fetch(http.url, {
      method: "POST",
      headers: { ...headers, "Acp-Connection-Id": connectionId },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: dir.path, mcpServers: [] } }),
    });
    expect(posted.status).toBe(202);
    await until(() => runtime.sessionCount === 1, "the session to open");
    await until(() => http.connectionCount === 0 && runtime.sessionCount === 0, "the idle connection to be closed");
    const late = await fetch(http.url, { method: "POST", headers: { ...headers, "Acp-Connection-Id": connectionId }, body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "session/list", params: {} }) });
    expect(late.status).toBe(404);
  });

  it("/readyz is 503 with the reason while the store probe fails, and the service keeps serving", async () => {
    let down = true;
    const { http } = await service({ ready: async () => (down ? Promise.reject(new Error("database unreachable")) : undefined) });
    const base = http.url.replace(/\/acp$/, "");
    const notReady = await fetch(`${base}/readyz`);
    expect([notReady.status, await notReady.text()]).toEqual([503, "not ready: database unreachable\n"]);
    const metrics = await (await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } })).text();
    expect(metrics).toContain("agentkit_acp_up 0");
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    down = false;
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
  });
});
