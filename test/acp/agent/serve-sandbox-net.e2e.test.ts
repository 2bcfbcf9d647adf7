import { createServer as createHttpServer, type Server } from "node:http";
import { createServer } from "node:net";
import * as acp from "@agentclientprotocol/sdk";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../support/cli.js";
import { startListening, type ListeningProcess, TOKEN, connectOver, exitWithin } from "./http-support.js";
import { cleanEnv, writeScript } from "./serve-support.js";
import { tempDir, textOf } from "./support.js";
import { sandboxOrSkip } from "../../support/sandbox-engine.js";

const engine = await sandboxOrSkip("serve --sandbox-net", { curl: true });

/**
 * `serve --sandbox-net allow=…` through the real CLI and real bubblewrap: a sandboxed `shell`
 * command reaches a loopback "registry" named in the allow-list through the proxy; another
 * loopback server and a public host that are not named are refused with the proxy's answer in
 * the command's output; serve's own listener is refused even though the allow-list names it.
 * Each refusal, and a command that hits the process bound, is in the audit trail that
 * `agentkit-acp audit` prints, with the session and principal.
 */

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)));
}

function toolOutputs(updates: SessionUpdate[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const u of updates) {
    if (u.sessionUpdate !== "tool_call_update" || (u.status !== "completed" && u.status !== "failed")) continue;
    out.set(u.toolCallId, (u.content ?? []).map((c) => (c.type === "content" && c.content.type === "text" ? c.content.text : "")).join("\n"));
  }
  return out;
}

describe.skipIf(!engine.available)("serve --sandbox --sandbox-net allow=…", () => {
  const workspace = tempDir("agentkit-net-ws-");
  const state = tempDir("agentkit-net-state-");
  const registry = createHttpServer((req, res) => res.end(`registry-ok ${req.url ?? ""}\n`));
  const other = createHttpServer((_req, res) => res.end("other-reached\n"));
  let serve: ListeningProcess;
  let outputs: Map<string, string>;
  let final = "";
  let initMeta: unknown;
  let firstUpdate: SessionUpdate | undefined;
  let registryPort = 0;
  let servePort = 0;
  let sessionId = "";
  let otherPort = 0;

  beforeAll(async () => {
    registryPort = await listen(registry);
    otherPort = await listen(other);
    servePort = await freePort();
    const curl = (url: string) => `curl -sS --max-time 20 ${url}; echo " exit=$?"`;
    const script = writeScript(workspace.path, [
      { toolCall: { name: "shell", input: { command: curl(`http://127.0.0.1:${registryPort}/left-pad`) }, callId: "registry" } },
      { toolCall: { name: "shell", input: { command: curl(`http://127.0.0.1:${otherPort}/`) }, callId: "other" } },
      { toolCall: { name: "shell", input: { command: curl(`http://127.0.0.1:${servePort}/acp`) }, callId: "own" } },
      { toolCall: { name: "shell", input: { command: curl("https://example.com/") }, callId: "public" } },
      { toolCall: { name: "shell", input: { command: 'i=0; while [ $i -lt 60 ]; do sleep 30 & i=$((i+1)); done; echo "started $i"' }, callId: "bound" } },
      { text: "net done" },
    ]);
    // The allow-list names serve's own port too: it must stay refused.
    const allow = `allow=127.0.0.1:${registryPort},127.0.0.1:${servePort}`;
    serve = startListening(["--model", `scripted:${script}`, "--state-dir", state.path, "--log-level", "info", "--sandbox", "--sandbox-limit", "processes=24", "--sandbox-net", allow], {
      cwd: workspace.path,
      listen: `127.0.0.1:${servePort}`,
      env: cleanEnv({ AGENTKIT_ACP_TOKEN: TOKEN }),
      process: true, // sandboxing, and SIGTERM
    });
    const { agent, client, connection } = connectOver("ws", await serve.url);
    const init = await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "net-test", version: "1" } });
    initMeta = init._meta;
    ({ sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: workspace.path, mcpServers: [] }));
    const response = await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "fetch" }] });
    expect(response.stopReason).toBe("end_turn");
    const updates = client.updates(sessionId);
    firstUpdate = updates[0];
    outputs = toolOutputs(updates);
    final = textOf(updates, "agent_message_chunk");
    connection.close();
  }, 90_000);

  afterAll(async () => {
    await serve?.kill();
    registry.close();
    other.close();
    workspace.remove();
    state.remove();
  });

  it("the allowed registry answers through the proxy", () => {
    expect(final).toContain("net done");
    expect(outputs.get("registry")).toContain("registry-ok /left-pad");
    expect(outputs.get("registry")).toContain("exit=0");
  });

  it("a loopback server not named is refused, and the command's output says why", () => {
    const output = outputs.get("other") ?? "";
    expect(output).not.toContain("other-reached");
    expect(output).toMatch(/connection to 127\.0\.0\.1:\d+ refused: not in the --sandbox-net allow-list/);
  });

  it("serve's own listener is refused even when the allow-list names it", () => {
    const output = outputs.get("own") ?? "";
    expect(output).toContain(`port ${servePort} here is this server's own listener`);
    expect(output).not.toMatch(/401|Unauthorized|Bearer/);
  });

  it("an HTTPS host not named: the tunnel is refused, and a note in the result names it", () => {
    const output = outputs.get("public") ?? "";
    expect(output).toContain("CONNECT tunnel failed, response 403");
    expect(output).toContain("[sandbox: network to example.com:443 refused: not in the --sandbox-net allow-list]");
  });

  it("initialize and the start-up log say what the network allows", () => {
    expect((initMeta as { agentkit?: { sandbox?: unknown } }).agentkit?.sandbox).toMatchObject({ mode: "workspace", network: { allow: [`127.0.0.1:${registryPort}`, `127.0.0.1:${servePort}`], via: "http-proxy" } });
    // The session's first update says it with the session's own roots.
    expect(firstUpdate?._meta).toMatchObject({ agentkit: { sandbox: { mode: "workspace", writable: [workspace.path], network: { allow: [`127.0.0.1:${registryPort}`, `127.0.0.1:${servePort}`] } } } });
    expect(serve.stderr).toContain(`network: only 127.0.0.1:${registryPort}, 127.0.0.1:${servePort} (through the sandbox's proxy)`);
  });

  // Last: stops serve, which writes its queued audit records.
  it("the audit trail records each refused destination and the bound hit, with session and principal", async () => {
    serve.signal("SIGTERM");
    expect((await exitWithin(serve)).code).toBe(0);
    const audit = await runCli(["audit", "--state-dir", state.path, "--json"], { cwd: workspace.path, env: cleanEnv() });
    expect(audit.code).toBe(0);
    const records = audit.lines as Array<{ principal: string; action: string; sessionId?: string; detail: Record<string, unknown> }>;
    const principal = records.find((r) => r.action === "session/new")?.principal;
    expect(principal).toBeDefined();
    const refused = records.filter((r) => r.action === "sandbox_network_refused");
    expect(refused.map((r) => r.detail)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ host: "127.0.0.1", port: otherPort, reason: "not in the --sandbox-net allow-list" }),
        expect.objectContaining({ host: "127.0.0.1", port: servePort, reason: expect.stringContaining("this server's own listener") }),
        expect.objectContaining({ host: "example.com", port: 443, reason: "not in the --sandbox-net allow-list" }),
      ]),
    );
    // The allowed registry is not a refusal.
    expect(refused.some((r) => r.detail.port === registryPort)).toBe(false);
    const bound = records.filter((r) => r.action === "sandbox_bound_hit");
    expect(bound.map((r) => r.detail)).toEqual([expect.objectContaining({ bound: "processes", limit: "24" })]);
    for (const r of [...refused, ...bound]) expect(r).toMatchObject({ principal, sessionId });
    // The text form names them too.
    const text = await runCli(["audit", "--state-dir", state.path], { cwd: workspace.path, env: cleanEnv() });
    expect(text.stdout).toMatch(/sandbox_network_refused .*host=example\.com port=443/);
  });
});
