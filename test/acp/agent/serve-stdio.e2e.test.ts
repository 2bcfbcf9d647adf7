import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { connectServe, openServe, writeScript, type ServeProcess } from "./serve-support.js";
import { deferred, select, tempDir, textOf, waitForAbort } from "./support.js";

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function workspace() {
  const dir = tempDir("agentkit-serve-");
  cleanups.push(() => dir.remove());
  return dir.path;
}

/** serve with the SDK client, ended after the test; `{ process: true }` for what is about the process (exit code, signals, stdout purity of the bin). */
function serve<O extends { process?: true } = Record<never, never>>(args: string[], cwd: string, where?: O) {
  return ended(connectServe(args, { cwd, ...where } as { cwd: string } & O));
}

function ended<T extends { connection: { close(): void }; proc: { end(): Promise<unknown> } }>(env: T): T {
  cleanups.push(async () => {
    env.connection.close();
    await env.proc.end();
  });
  return env;
}

async function init(agent: acp.ClientContext) {
  return agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "stdio-test", version: "1" } });
}

/** Every line on stdout is a JSON-RPC 2.0 message. */
function expectPureStdout(stdout: string): void {
  const lines = stdout.split("\n").filter((l) => l.length > 0);
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: "2.0" });
}

describe("agentkit-acp serve over stdio, driven by the official SDK client", () => {
  it("full turn: thought + message chunks, tool call, permission, allow, diff, completed, end_turn; exits 0 on EOF", async () => {
    const dir = workspace();
    const scriptPath = writeScript(dir, [
      { toolCall: { name: "write_file", input: { path: "out.txt", content: "from serve\n" }, callId: "call_1" }, reasoning: "Plan: write out.txt.", text: "Writing." },
      { text: "All done.", chunks: 3 },
    ]);
    const { agent, client, proc, connection } = serve(["--model", `scripted:${scriptPath}`], dir, { process: true });
    const initResponse = await init(agent);
    expect(initResponse).toMatchObject({ protocolVersion: 1, agentInfo: { name: "agentkit-acp" } });
    const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const response = await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "write out.txt" }] });
    expect(response.stopReason).toBe("end_turn");

    const updates = client.updates(sessionId);
    expect(textOf(updates, "agent_thought_chunk")).toBe("Plan: write out.txt.");
    expect(textOf(updates, "agent_message_chunk")).toBe("Writing.All done.");
    expect(updates.find((u) => u.sessionUpdate === "tool_call")).toMatchObject({ toolCallId: "call_1", kind: "edit", status: "pending", rawInput: { path: "out.txt" } });
    expect(client.permissionRequests.map((r) => r.toolCall.toolCallId)).toEqual(["call_1"]);
    expect(updates.some((u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress")).toBe(true);
    expect(updates.find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed")).toMatchObject({
      content: [{ type: "diff", path: join(dir, "out.txt"), oldText: null, newText: "from serve\n" }, { type: "content" }],
    });
    expect(readFileSync(join(dir, "out.txt"), "utf8")).toBe("from serve\n");

    await agent.request(acp.methods.agent.session.close, { sessionId });
    connection.close();
    expect(await proc.end()).toEqual({ code: 0, signal: null });
    expectPureStdout(proc.stdout);
    expect(proc.stderr).toContain("serving ACP on stdio");
  });

  it("a denied call: the model is told (it echoes the tool result) and the turn continues", async () => {
    const dir = workspace();
    const scriptPath = writeScript(dir, [{ toolCall: { name: "shell", input: { command: "touch pwned.txt" } } }, { echo: "last_tool_result" }]);
    const { agent, client } = serve(["--model", `scripted:${scriptPath}`], dir);
    client.answer = () => select("reject_once");
    await init(agent);
    const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const response = await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "run it" }] });
    expect(response.stopReason).toBe("end_turn");
    expect(textOf(client.updates(sessionId), "agent_message_chunk")).toMatch(/denied this shell call/);
    expect(existsSync(join(dir, "pwned.txt"))).toBe(false);
  });

  it("session/cancel during streaming and during a permission wait → cancelled within 200 ms; next prompts work", async () => {
    const dir = workspace();
    const scriptPath = writeScript(dir, [
      { hang: true, text: "streaming…" },
      { toolCall: { name: "write_file", input: { path: "w.txt", content: "x" }, callId: "call_wait" } },
      { text: "still alive" },
    ]);
    const { agent, client } = serve(["--model", `scripted:${scriptPath}`], dir);
    await init(agent);
    const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });

    const streaming = agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "one" }] });
    await client.waitFor(() => textOf(client.updates(sessionId), "agent_message_chunk") === "streaming…", "the first chunk");
    let started = performance.now();
    await agent.notify(acp.methods.agent.session.cancel, { sessionId });
    expect((await streaming).stopReason).toBe("cancelled");
    expect(performance.now() - started).toBeLessThan(200);

    client.answer = (_request, signal) => waitForAbort(signal);
    const waiting = agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "two" }] });
    await client.waitFor(() => client.permissionRequests.length === 1, "the permission request");
    started = performance.now();
    await agent.notify(acp.methods.agent.session.cancel, { sessionId });
    expect((await waiting).stopReason).toBe("cancelled");
    expect(performance.now() - started).toBeLessThan(200);
    expect(existsSync(join(dir, "w.txt"))).toBe(false);

    const next = await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "three" }] });
    expect(next.stopReason).toBe("end_turn");
    expect(textOf(client.updates(sessionId), "agent_message_chunk")).toContain("still alive");
  });

  it("two sessions in parallel: one blocked on a permission, the other finishes; close frees both", async () => {
    const dir = workspace();
    const scriptPath = writeScript(dir, [{ toolCall: { name: "write_file", input: { path: "p.txt", content: "p" } } }, { text: "finished" }]);
    const { agent, client } = serve(["--model", `scripted:${scriptPath}`, "--approve", "auto-reads"], dir);
    const gate = deferred<acp.RequestPermissionResponse>();
    client.answer = () => gate.promise;
    await init(agent);
    const a = await agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const b = await agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const promptA = agent.request(acp.methods.agent.session.prompt, { sessionId: a.sessionId, prompt: [{ type: "text", text: "a" }] });
    await client.waitFor(() => client.permissionRequests.some((r) => r.sessionId === a.sessionId), "A's permission request");
    // B runs the same script; its own permission request is answered at once while A's stays open.
    client.answer = (request) => (request.sessionId === b.sessionId ? select("allow_once") : gate.promise);
    const responseB = await agent.request(acp.methods.agent.session.prompt, { sessionId: b.sessionId, prompt: [{ type: "text", text: "b" }] });
    expect(responseB.stopReason).toBe("end_turn");
    expect(textOf(client.updates(b.sessionId), "agent_message_chunk")).toBe("finished");
    gate.resolve(select("allow_once"));
    expect((await promptA).stopReason).toBe("end_turn");
    await agent.request(acp.methods.agent.session.close, { sessionId: a.sessionId });
    await agent.request(acp.methods.agent.session.close, { sessionId: b.sessionId });
    await expect(agent.request(acp.methods.agent.session.prompt, { sessionId: b.sessionId, prompt: [{ type: "text", text: "x" }] })).rejects.toMatchObject({ code: -32002 });
  });

  const endings: Array<[string, (proc: ServeProcess) => void]> = [
    ["SIGTERM during a running turn", (proc) => proc.child.kill("SIGTERM")],
    ["stdin closed during a running turn (not lost)", (proc) => proc.child.stdin!.end()],
  ];
  for (const [when, end] of endings) {
    it(`${when}: the prompt answers cancelled and the process exits 0`, async () => {
      const dir = workspace();
      const scriptPath = writeScript(dir, [{ hang: true, text: "long job" }]);
      const { agent, client, proc } = serve(["--model", `scripted:${scriptPath}`], dir, { process: true });
      await init(agent);
      const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
      const pending = agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] });
      await client.waitFor(() => client.updates(sessionId).some((u) => u.sessionUpdate === "agent_message_chunk"), "streaming to start");
      end(proc);
      expect((await pending).stopReason).toBe("cancelled");
      expect(await proc.exited).toEqual({ code: 0, signal: null });
      expectPureStdout(proc.stdout);
    });
  }

  it("requests written before stdin closes are all answered (`printf … | serve`), over v1 and v2", async () => {
    const dir = workspace();
    const piped = async (protocol: string, lines: object[]): Promise<Array<{ id?: unknown; result?: unknown }>> => {
      const proc = openServe(["--model", "demo", "--no-persist", "--protocol", protocol], { cwd: dir, process: true });
      cleanups.push(() => proc.kill());
      proc.child.stdin!.end(lines.map((line) => `${JSON.stringify(line)}\n`).join(""));
      expect(await proc.exited).toEqual({ code: 0, signal: null });
      // The answers (session/update notifications, e.g. the commands after session/new, may come too).
      return (proc.stdoutLines() as Array<{ id?: unknown; result?: unknown }>).filter((message) => message.id !== undefined);
    };
    const v1 = await piped("v1", [
      { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } },
      { jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: dir, mcpServers: [] } },
    ]);
    expect(v1.map((m) => m.id)).toEqual([1, 2]);
    expect(v1[1]!.result).toMatchObject({ sessionId: expect.any(String) });
    // v2: the bridge answers initialize by asking the v1 runtime, which took longer than the end of input.
    const v2 = await piped("v2", [{ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 2, info: { name: "t", version: "1" }, capabilities: {} } }]);
    expect(v2).toMatchObject([{ id: 1, result: { protocolVersion: 2 } }]);
  });

  it("without any model setting or key: the labelled demo model, whose first reply says so", async () => {
    const dir = workspace();
    const { agent, client, proc } = serve([], dir);
    client.answer = () => select("reject_once");
    await init(agent);
    const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const response = await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hello" }] });
    expect(response.stopReason).toBe("end_turn");
    const updates = client.updates(sessionId);
    const firstReply = textOf(updates.slice(0, updates.findIndex((u) => u.sessionUpdate === "tool_call")), "agent_message_chunk");
    expect(firstReply).toMatch(/demo model/);
    expect(firstReply).toMatch(/--model provider:model/);
    expect(proc.stderr).toMatch(/demo/);
  });

  it("stdio MCP servers from session/new: their tools work in that session and the server is gone after close", async () => {
    const dir = workspace();
    const fixture = new URL("../../../dist/testing/mcp-fixture-stdio.js", import.meta.url).pathname;
    const scriptPath = writeScript(dir, [{ toolCall: { name: "fx__status", input: {} } }, { echo: "last_tool_result" }]);
    const { agent, client } = serve(["--model", `scripted:${scriptPath}`, "--approve", "auto-all"], dir);
    await init(agent);
    const { sessionId } = await agent.request(acp.methods.agent.session.new, {
      cwd: dir,
      mcpServers: [{ name: "fx", command: process.execPath, args: [fixture], env: [] }],
    });
    expect((await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "status?" }] })).stopReason).toBe("end_turn");
    const reply = textOf(client.updates(sessionId), "agent_message_chunk");
    const pid = (JSON.parse(reply) as { pid: number }).pid;
    expect(isAlive(pid)).toBe(true);
    await agent.request(acp.methods.agent.session.close, { sessionId });
    expect(isAlive(pid)).toBe(false);
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
