import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { WebSocket } from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { startListening, TOKEN, connectOver, exitWithin } from "./http-support.js";
import { cleanEnv, writeScript } from "./serve-support.js";
import { deferred, select, tempDir, textOf } from "./support.js";
import { runCli } from "../../support/cli.js";
import { sandboxOrSkip } from "../../support/sandbox-engine.js";

const engine = await sandboxOrSkip("the serve --listen tests");

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function workspace(): string {
  const dir = tempDir("agentkit-http-");
  cleanups.push(() => dir.remove());
  return dir.path;
}

/** `startListening`, ended after the test; `{ process: true }` where the test signals it. */
function listen<O extends { process?: true } = Record<never, never>>(args: string[], cwd: string, env?: NodeJS.ProcessEnv, where?: O) {
  const proc = startListening(args, { cwd, ...(env ? { env } : {}), ...where } as { cwd: string } & O);
  cleanups.push(() => proc.kill());
  return proc;
}

const init = { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "http-test", version: "1" } };
const auth = { Authorization: `Bearer ${TOKEN}` };

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers }, body: JSON.stringify(body) });
}

/** The status a WebSocket upgrade is answered with (101 when accepted). */
function upgradeStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url.replace(/^http/, "ws"), { headers });
    ws.once("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once("open", () => {
      resolve(101);
      ws.terminate();
    });
    ws.once("error", (error) => reject(error));
  });
}

function metricValue(text: string, name: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  if (line === undefined) throw new Error(`no metric ${name} in:\n${text}`);
  return Number(line.slice(name.length + 1));
}

describe.skipIf(!engine.available)("serve --listen: auth, health, readiness", () => {
  it("without the bearer token every /acp and /metrics request gets 401 and nothing else; /healthz and /readyz need none", async () => {
    const dir = workspace();
    const proc = listen(["--model", "demo"], dir);
    const url = await proc.url;
    const base = await proc.base();

    for (const headers of [{} as Record<string, string>, { Authorization: "Bearer wrong-token" }, { Authorization: `Basic ${TOKEN}` }, { Authorization: `Bearer ${TOKEN}x` }]) {
      const res = await post(url, { jsonrpc: "2.0", id: 1, method: "initialize", params: init }, headers);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect(res.headers.get("acp-connection-id")).toBeNull();
      expect(await res.text()).toBe("");
      expect(await upgradeStatus(url, headers)).toBe(401);
    }
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(401);
    expect(await metrics.text()).toBe("");

    expect(await (await fetch(`${base}/healthz`)).text()).toBe("ok\n");
    const ready = await fetch(`${base}/readyz`);
    expect([ready.status, await ready.text()]).toEqual([200, "ready\n"]);
    expect((await fetch(`${base}/other`, { headers: auth })).status).toBe(404);
    // With it: initialize is answered with a connection id; the upgrade is accepted.
    const ok = await post(url, { jsonrpc: "2.0", id: 1, method: "initialize", params: init }, auth);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("acp-connection-id")).toMatch(/\S/);
    expect(await upgradeStatus(url, auth)).toBe(101);
  });

  it("bad --listen values, a port in use and a missing token exit 2 naming what to fix", async () => {
    const dir = workspace();
    // In-process: the flags, the port and the token are checked by the same code as in the bin.
    const check = (args: string[], env = cleanEnv({ AGENTKIT_ACP_TOKEN: TOKEN })) => runCli(["serve", "--model", "demo", ...args], { cwd: dir, env });
    for (const [value, said] of [["nonsense", "not an address"], ["127.0.0.1:70000", "the port must be 0–65535"], ["[::1]", "not an address"], ["host:", "not an address"]] as const) {
      const r = await check(["--listen", value]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`--listen "${value}": ${said}`);
    }
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
    const port = (blocker.address() as { port: number }).port;
    const inUse = await check(["--listen", `127.0.0.1:${port}`]);
    expect(inUse.code).toBe(2);
    expect(inUse.stderr).toContain(`--listen 127.0.0.1:${port}: the port is already in use`);

    const noToken = await check(["--listen", "127.0.0.1:0"], cleanEnv());
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain("--listen needs a bearer token: set AGENTKIT_ACP_TOKEN or pass --token-file FILE");
    const emptyFile = join(dir, "empty-token");
    spawnSync("touch", [emptyFile]);
    const empty = await check(["--listen", "127.0.0.1:0", "--token-file", emptyFile], cleanEnv());
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain("is empty");
    const stray = await check(["--token-file", emptyFile]);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain("--token-file only applies with --listen");
  });
});

describe.skipIf(!engine.available).each(["http", "ws"] as const)("serve --listen: a full turn over %s", (transport) => {
  it("streams the updates (thought, message, tool call, permission, diff) and ends end_turn; /metrics counts it", async () => {
    const dir = workspace();
    const script = writeScript(dir, [
      { toolCall: { name: "write_file", input: { path: "out.txt", content: `over ${transport}\n` }, callId: "call_1" }, reasoning: "Plan: write out.txt.", text: "Writing." },
      { text: "All done.", chunks: 3 },
    ]);
    const tokenFile = join(dir, "token");
    spawnSync("sh", ["-c", `printf '%s\\n' '${TOKEN}' > '${tokenFile}'`]);
    // The token from --token-file (the environment has none).
    const proc = listen(["--model", `scripted:${script}`, "--token-file", tokenFile], dir, cleanEnv());
    const { agent, client, connection } = connectOver(transport, await proc.url);
    cleanups.push(() => connection.close());
    expect(await agent.request(acp.methods.agent.initialize, init)).toMatchObject({ protocolVersion: 1, agentCapabilities: { loadSession: true } });
    const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const response = await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "write out.txt" }] });
    expect(response.stopReason).toBe("end_turn");
    const updates = client.updates(sessionId);
    expect(textOf(updates, "agent_thought_chunk")).toBe("Plan: write out.txt.");
    expect(textOf(updates, "agent_message_chunk")).toBe("Writing.All done.");
    expect(updates.filter((u) => u.sessionUpdate === "agent_message_chunk").length).toBeGreaterThanOrEqual(4);
    expect(client.permissionRequests.map((r) => r.toolCall.toolCallId)).toEqual(["call_1"]);
    expect(updates.find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed")).toMatchObject({
      content: [{ type: "diff", path: join(dir, "out.txt"), newText: `over ${transport}\n` }, { type: "content" }],
    });
    expect(readFileSync(join(dir, "out.txt"), "utf8")).toBe(`over ${transport}\n`);

    const metrics = await (await fetch(`${await proc.base()}/metrics`, { headers: auth })).text();
    expect(metricValue(metrics, 'agentkit_acp_prompts_total{outcome="end_turn"}')).toBe(1);
    expect(metricValue(metrics, "agentkit_acp_prompt_duration_seconds_count")).toBe(1);
    expect(metricValue(metrics, 'agentkit_acp_prompt_duration_seconds_bucket{le="+Inf"}')).toBe(1);
    expect(metricValue(metrics, "agentkit_acp_open_sessions")).toBe(1);
    expect(metricValue(metrics, "agentkit_acp_connections")).toBe(1);
    expect(metricValue(metrics, "agentkit_acp_active_turns")).toBe(0);
    expect(metricValue(metrics, 'agentkit_acp_tokens_total{direction="output"}')).toBeGreaterThan(0);
    expect(metricValue(metrics, "agentkit_acp_model_errors_total")).toBe(0);
  });
});

describe.skipIf(!engine.available)("serve --listen: limits and draining", () => {
  it("--max-connections refuses one more connection (503); --max-message-bytes refuses a larger body (413)", async () => {
    const dir = workspace();
    const proc = listen(["--model", "demo", "--max-connections", "1", "--max-message-bytes", "2000"], dir);
    const url = await proc.url;
    const first = await post(url, { jsonrpc: "2.0", id: 1, method: "initialize", params: init }, auth);
    expect(first.status).toBe(200);
    const second = await post(url, { jsonrpc: "2.0", id: 1, method: "initialize", params: init }, auth);
    expect(second.status).toBe(503);
    expect(await second.text()).toContain("too many connections (the limit is 1)");
    expect(await upgradeStatus(url, auth)).toBe(503);
    const big = await post(url, { jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: dir, mcpServers: [], pad: "x".repeat(3000) } }, {
      ...auth,
      "Acp-Connection-Id": first.headers.get("acp-connection-id") ?? "",
    });
    expect(big.status).toBe(413);
  });

  it("SIGTERM drains: no new connections or sessions, the running turn finishes, then exit 0", async () => {
    const dir = workspace();
    const script = writeScript(dir, [{ toolCall: { name: "write_file", input: { path: "d.txt", content: "drained\n" }, callId: "call_d" } }, { text: "Finished after the drain began." }]);
    const proc = listen(["--model", `scripted:${script}`], dir, undefined, { process: true });
    const url = await proc.url;
    const { agent, client, connection } = connectOver("http", url);
    cleanups.push(() => connection.close());
    const answer = deferred<acp.RequestPermissionResponse>();
    client.answer = () => answer.promise;
    await agent.request(acp.methods.agent.initialize, init);
    const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const prompt = agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] });
    await client.waitFor(() => client.permissionRequests.length === 1, "the permission request");

    proc.signal("SIGTERM");
    await proc.waitForLog("SIGTERM: draining");
    const refused = await post(url, { jsonrpc: "2.0", id: 1, method: "initialize", params: init }, auth);
    expect(refused.status).toBe(503);
    await expect(agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] })).rejects.toThrow(/shutting down/);
    answer.resolve(select("allow_once"));
    expect((await prompt).stopReason).toBe("end_turn");
    expect(textOf(client.updates(sessionId), "agent_message_chunk")).toBe("Finished after the drain began.");
    expect(await exitWithin(proc)).toEqual({ code: 0, signal: null });
  });

  it("a turn still running at --drain-timeout is cancelled (stopReason cancelled) and serve exits 0", async () => {
    const dir = workspace();
    const script = writeScript(dir, [{ hang: true, text: "working" }]);
    const proc = listen(["--model", `scripted:${script}`, "--drain-timeout", "300"], dir, undefined, { process: true });
    const { agent, client, connection } = connectOver("ws", await proc.url);
    cleanups.push(() => connection.close());
    await agent.request(acp.methods.agent.initialize, init);
    const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const prompt = agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] });
    await client.waitFor(() => textOf(client.updates(sessionId), "agent_message_chunk") === "working", "the hanging turn's text");
    proc.signal("SIGTERM");
    expect((await prompt).stopReason).toBe("cancelled");
    expect(await exitWithin(proc)).toEqual({ code: 0, signal: null });
    expect(proc.stderr).toContain("running turns did not finish within --drain-timeout");
  });
});
