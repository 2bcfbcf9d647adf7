import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import * as V2 from "@agentclientprotocol/sdk/experimental/v2/unstable";
import { afterEach, describe, expect, it } from "vitest";
import { AcpClient, ClientPermissionPolicy } from "../../../src/acp/client/index.js";
import { startListening, TOKEN } from "./http-support.js";
import { connectServe, openServe, writeScript } from "./serve-support.js";
import { tempDir } from "./support.js";
import { info, V2Client } from "./v2-support.js";
import { sandboxOrSkip } from "../../support/sandbox-engine.js";

const engine = await sandboxOrSkip("serve --listen --protocol auto");

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function workspace(): string {
  const dir = tempDir("agentkit-serve-v2-");
  cleanups.push(() => dir.remove());
  return dir.path;
}

/** serve (`openServe`: in-process, or `{ process: true }` for a test about its exit) with the SDK's v2 client, ended after the test. */
function serveV2(args: string[], cwd: string, where: { process?: true } = {}): V2Client {
  const proc = openServe(args, { cwd, ...where });
  const client = new V2Client(proc);
  cleanups.push(async () => {
    client.connection.close();
    await proc.end();
  });
  return client;
}


describe("serve --protocol auto|v2 with the official SDK's v2 client", () => {
  it("negotiates v2 and runs a full turn: message and thought chunks, a tool call upsert, a permission, a structured diff, idle end_turn", async () => {
    const dir = workspace();
    const script = writeScript(dir, [
      { toolCall: { name: "write_file", input: { path: "out.txt", content: "from v2\n" }, callId: "call_1" }, reasoning: "Plan: write out.txt.", text: "Writing." },
      { text: "All done.", chunks: 3 },
    ]);
    const client = serveV2(["--model", `scripted:${script}`, "--protocol", "auto"], dir);
    const init = await client.agent.request(V2.methods.agent.initialize, { protocolVersion: 2, info, capabilities: {} });
    expect(init).toMatchObject({ protocolVersion: 2, info: { name: "agentkit-acp" }, capabilities: { session: { mcp: { stdio: {}, http: {} } } } });
    const { sessionId } = await client.agent.request(V2.methods.agent.session.new, { cwd: dir });
    const ack = await client.agent.request(V2.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "write out.txt" }] });
    expect(typeof ack.messageId).toBe("string");
    await client.until(() => client.idle(sessionId).length > 0, "the idle state_update");

    const all = client.of(sessionId);
    // The turn: from the running state on (available_commands_update came with the session).
    const updates = all.slice(all.findIndex((u) => u.sessionUpdate === "state_update"));
    expect(updates[0]).toMatchObject({ sessionUpdate: "state_update", state: "running" });
    // Waiting for the permission answer, the turn cannot go on: requires_action, then running again.
    const states = (list: V2.SessionUpdate[]) => list.filter((u) => u.sessionUpdate === "state_update").map((u) => (u as { state?: string }).state);
    expect(states(updates)).toEqual(["running", "requires_action", "running", "idle"]);
    expect(client.idle(sessionId)).toEqual([expect.objectContaining({ stopReason: "end_turn" })]);
    expect(client.text(sessionId, "agent_thought_chunk")).toBe("Plan: write out.txt.");
    expect(client.text(sessionId, "agent_message_chunk")).toBe("Writing.All done.");
    // Every chunk carries a messageId; the chunks of one message share it.
    const chunks = updates.filter((u) => u.sessionUpdate === "agent_message_chunk") as V2.ContentChunk[];
    expect(chunks.every((c) => typeof c.messageId === "string" && c.messageId.length > 0)).toBe(true);
    // No v1 tool_call: the first tool_call_update is the upsert.
    expect(updates.some((u) => (u.sessionUpdate as string) === "tool_call")).toBe(false);
    expect(updates.find((u) => u.sessionUpdate === "tool_call_update")).toMatchObject({ toolCallId: "call_1", kind: "edit", status: "pending" });
    expect(client.permissions).toHaveLength(1);
    expect(client.permissions[0]).toMatchObject({ sessionId, title: expect.any(String), subject: { type: "tool_call", toolCall: { toolCallId: "call_1" } } });
    const done = updates.find((u) => u.sessionUpdate === "tool_call_update" && (u as V2.ToolCallUpdate).status === "completed") as V2.ToolCallUpdate;
    expect(done.content?.[0]).toMatchObject({ type: "diff", changes: [{ operation: "add", path: join(dir, "out.txt") }] });
    expect(readFileSync(join(dir, "out.txt"), "utf8")).toBe("from v2\n");
    // The idle state is the last thing of the turn.
    expect(updates.at(-1)).toMatchObject({ sessionUpdate: "state_update", state: "idle" });
  });

  it("cancel while a permission is pending: the request is cancelled, the turn ends idle/cancelled, the session takes the next prompt", async () => {
    const dir = workspace();
    const script = writeScript(dir, [{ toolCall: { name: "shell", input: { command: "touch never.txt" } } }, { text: "second turn" }]);
    const client = serveV2(["--model", `scripted:${script}`, "--protocol", "v2"], dir);
    let cancelledRequest = false;
    client.answer = (_request, signal) =>
      new Promise((resolve) => {
        signal.addEventListener("abort", () => {
          cancelledRequest = true;
          resolve({ outcome: { outcome: "cancelled" } });
        });
      });
    await client.agent.request(V2.methods.agent.initialize, { protocolVersion: 2, info });
    const { sessionId } = await client.agent.request(V2.methods.agent.session.new, { cwd: dir });
    await client.agent.request(V2.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "run it" }] });
    await client.until(() => client.permissions.length === 1, "the permission request");
    await client.agent.notify(V2.methods.agent.session.cancel, { sessionId });
    await client.until(() => client.idle(sessionId).length === 1, "the idle state_update");
    expect(client.idle(sessionId)[0]).toMatchObject({ stopReason: "cancelled" });
    const states = client.of(sessionId).filter((u) => u.sessionUpdate === "state_update").map((u) => (u as { state?: string }).state);
    expect(states).toEqual(["running", "requires_action", "idle"]);
    await client.until(() => cancelledRequest, "$/cancel_request for the permission");
    expect(() => readFileSync(join(dir, "never.txt"))).toThrow();

    await client.agent.request(V2.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "again" }] });
    await client.until(() => client.idle(sessionId).length === 2, "the second idle");
    expect(client.idle(sessionId)[1]).toMatchObject({ stopReason: "end_turn" });
    expect(client.text(sessionId, "agent_message_chunk")).toContain("second turn");
  });

  it("stdin closed during a running turn: the turn ends idle/cancelled on stdout before serve exits 0 (as over v1)", async () => {
    const dir = workspace();
    const script = writeScript(dir, [{ hang: true, text: "long job" }]);
    const client = serveV2(["--model", `scripted:${script}`, "--protocol", "v2"], dir, { process: true });
    await client.agent.request(V2.methods.agent.initialize, { protocolVersion: 2, info });
    const { sessionId } = await client.agent.request(V2.methods.agent.session.new, { cwd: dir });
    await client.agent.request(V2.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] });
    await client.until(() => client.text(sessionId, "agent_message_chunk").length > 0, "streaming to start");
    client.proc.pipes().stdin.end();
    expect(await client.proc.exited).toEqual({ code: 0, signal: null });
    expect(client.idle(sessionId)).toMatchObject([{ stopReason: "cancelled" }]);
    // Every line on stdout is a JSON-RPC message (stdoutLines parses each).
    expect(client.proc.stdoutLines()).toEqual(expect.arrayContaining([expect.objectContaining({ jsonrpc: "2.0" })]));
    expect(client.proc.stdoutLines().every((message) => (message as { jsonrpc?: unknown }).jsonrpc === "2.0")).toBe(true);
  });

  it("a prompt sent while a turn runs is held and runs after it; list and resume with replay; close", async () => {
    const dir = workspace();
    const script = writeScript(dir, [{ text: "first answer" }, { text: "second answer" }]);
    const client = serveV2(["--model", `scripted:${script}`, "--protocol", "v2", "--state-dir", join(dir, ".state")], dir);
    await client.agent.request(V2.methods.agent.initialize, { protocolVersion: 2, info });
    const { sessionId } = await client.agent.request(V2.methods.agent.session.new, { cwd: dir });
    const [a, b] = await Promise.all([
      client.agent.request(V2.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "one" }] }),
      client.agent.request(V2.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "two" }] }),
    ]);
    expect(a.messageId).not.toBe(b.messageId);
    await client.until(() => client.idle(sessionId).length === 2, "two idle state_updates");
    expect(client.idle(sessionId).map((u) => u.stopReason)).toEqual(["end_turn", "end_turn"]);
    expect(client.text(sessionId, "agent_message_chunk")).toBe("first answersecond answer");

    const listed = await client.agent.request(V2.methods.agent.session.list, {});
    expect(listed.sessions.map((s) => s.sessionId)).toContain(sessionId);
    await client.agent.request(V2.methods.agent.session.close, { sessionId });
    const before = client.of(sessionId).length;
    await client.agent.request(V2.methods.agent.session.resume, { sessionId, cwd: dir, replayFrom: { type: "start" } });
    // On the wire the snapshot precedes the answer; the SDK client may run handlers after it resolves.
    await client.until(() => client.of(sessionId).slice(before).some((u) => u.sessionUpdate === "state_update"), "the state snapshot of resume");
    const replayed = client.of(sessionId).slice(before);
    expect(replayed.findIndex((u) => u.sessionUpdate === "state_update")).toBe(replayed.findIndex((u) => u.sessionUpdate === "agent_message_chunk" && ((u as V2.ContentChunk).content as { text?: string }).text === "second answer") + 1);
    const text = (kind: string) =>
      replayed
        .filter((u) => u.sessionUpdate === kind)
        .map((u) => ((u as V2.ContentChunk).content as { text?: string }).text)
        .join("");
    expect(text("user_message_chunk")).toBe("onetwo");
    expect(text("agent_message_chunk")).toBe("first answersecond answer");
    expect(replayed.find((u) => u.sessionUpdate === "state_update")).toMatchObject({ state: "idle" });
  });

  it("serve --protocol v2 refuses a v1 client's initialize with -32022 naming the supported version", async () => {
    const dir = workspace();
    const { agent, proc, connection } = connectServe(["--model", "demo", "--protocol", "v2"], { cwd: dir });
    cleanups.push(async () => {
      connection.close();
      await proc.end();
    });
    const refused = await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} }).then(
      () => undefined,
      (error: unknown) => error as acp.RequestError,
    );
    expect(refused?.code).toBe(-32022);
    expect(refused?.data).toMatchObject({ requested: 1, supported: [2] });
  });

  it("serve --protocol auto leaves v1 clients on v1 (full v1 turn, v1 shapes)", async () => {
    const dir = workspace();
    const script = writeScript(dir, [{ text: "hello v1" }]);
    const { agent, client, proc, connection } = connectServe(["--model", `scripted:${script}`, "--protocol", "auto"], { cwd: dir });
    cleanups.push(async () => {
      connection.close();
      await proc.end();
    });
    const init = await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    expect(init).toMatchObject({ protocolVersion: 1, agentInfo: { name: "agentkit-acp" }, agentCapabilities: { loadSession: true } });
    const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const response = await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hi" }] });
    expect(response.stopReason).toBe("end_turn");
    expect(client.updates(sessionId).filter((u) => u.sessionUpdate === "agent_message_chunk").length).toBeGreaterThan(0);
  });

  it.skipIf(!engine.available)("serve --listen --protocol auto: our v2 client over WebSocket and over Streamable HTTP, and a v1 client, each run a turn with a permission", async () => {
    const dir = workspace();
    const script = writeScript(dir, [{ toolCall: { name: "write_file", input: { path: "x.txt", content: "x" } }, text: "wrote" }, { text: "ok" }], "script.json");
    const proc = startListening(["--model", `scripted:${script}`, "--protocol", "auto", "--state-dir", join(dir, ".state")], { cwd: dir });
    cleanups.push(() => proc.kill());
    const http = await proc.url;
    const ws = http.replace(/^http/, "ws");
    for (const [url, protocol] of [
      [ws, "v2"],
      [http, "v2"],
      [ws, "v1"],
    ] as const) {
      const client = await AcpClient.start({ url, token: TOKEN, cwd: dir, protocol }, ClientPermissionPolicy.allowAll());
      cleanups.push(() => client.close());
      expect(client.protocolVersion, `${url} ${protocol}`).toBe(protocol === "v2" ? 2 : 1);
      const session = await client.newSession();
      const result = await session.prompt("write x");
      expect(result.stopReason, `${url} ${protocol}`).toBe("end_turn");
      expect(result.permissions).toHaveLength(1);
      expect(result.toolCalls[0]).toMatchObject({ status: "completed", kind: "edit" });
      expect(result.text).toBe("wroteok");
      await client.close();
    }
  });

  it.skipIf(!engine.available)("serve --listen --protocol auto: /metrics counts a v2 turn as running until its idle state_update (the answer only acknowledges it)", async () => {
    const dir = workspace();
    const script = writeScript(dir, [{ hang: true, text: "working" }], "script.json");
    const proc = startListening(["--model", `scripted:${script}`, "--protocol", "auto", "--no-persist"], { cwd: dir });
    cleanups.push(() => proc.kill());
    const url = (await proc.url).replace(/^http/, "ws");
    const metric = async (name: string): Promise<number> => {
      const text = await (await fetch(`${await proc.base()}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } })).text();
      const line = text.split("\n").find((l) => l.startsWith(`${name} `));
      return line === undefined ? 0 : Number(line.slice(name.length + 1));
    };
    const client = await AcpClient.start({ url, token: TOKEN, cwd: dir, protocol: "v2" });
    cleanups.push(() => client.close());
    const session = await client.newSession();
    const stream = session.stream("go");
    for await (const event of stream) {
      if (event.type !== "message_chunk") continue;
      // The v2 prompt was acknowledged before this chunk; the turn still runs.
      expect(await metric("agentkit_acp_active_turns")).toBe(1);
      await stream.cancel();
    }
    expect((await stream.result).stopReason).toBe("cancelled");
    expect(await metric("agentkit_acp_active_turns")).toBe(0);
    expect(await metric('agentkit_acp_prompts_total{outcome="cancelled"}')).toBe(1);
  });
});
