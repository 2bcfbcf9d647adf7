import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import * as V2 from "@agentclientprotocol/sdk/experimental/v2/unstable";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { AcpClient, ClientPermissionPolicy } from "../../../src/acp/client/index.js";
import { ListeningServe, TOKEN } from "./http-support.js";
import { connectServe, gone, hanging, ServeProcess, startedPid, writeScript } from "./serve-support.js";
import { advertised, tempDir } from "./support.js";
import { Workspace, serveEnv } from "./services-support.js";
import { startMockAnthropic } from "../../../src/testing/index.js";
import { fromMcpServer } from "@agentclientprotocol/sdk/experimental/mcp-server";
import { McpServer } from "@modelcontextprotocol/server";
import * as z from "zod/v4";

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function workspace(): string {
  const dir = tempDir("agentkit-serve-v2-");
  cleanups.push(() => dir.remove());
  return dir.path;
}

/** The official SDK's v2 client on a spawned `serve`, recording updates and permission requests. */
class V2Client {
  readonly updates: V2.UpdateSessionNotification[] = [];
  readonly permissions: V2.RequestPermissionRequest[] = [];
  readonly elicitations: V2.CreateElicitationRequest[] = [];
  /** MCP over ACP: MCP servers this client serves to the agent (`mcp/message`). */
  readonly mcp = new V2.McpOverAcpProvider();
  /** How to answer an elicitation/create (default: decline). */
  elicit: (request: V2.CreateElicitationRequest) => Promise<V2.CreateElicitationResponse> = () => Promise.resolve({ action: "decline" });
  /** How to answer a permission request (default: the first allow option). */
  answer: (request: V2.RequestPermissionRequest, signal: AbortSignal) => Promise<V2.RequestPermissionResponse> = (request) =>
    Promise.resolve({ outcome: { outcome: "selected", optionId: request.options.find((o) => o.kind === "allow_once")!.optionId } });
  readonly #waiters: Array<{ test: () => boolean; resolve: () => void }> = [];
  readonly connection: V2.ClientConnection;

  constructor(readonly proc: ServeProcess) {
    const app = V2.client({ name: "v2-test" })
      .onNotification(V2.methods.client.session.update, ({ params }) => {
        this.updates.push(params);
        this.#check();
      })
      .onRequest(V2.methods.client.session.requestPermission, ({ params, signal }) => {
        this.permissions.push(params);
        this.#check();
        return this.answer(params, signal);
      })
      .onRequest(V2.methods.client.elicitation.create, ({ params }) => {
        this.elicitations.push(params);
        this.#check();
        return this.elicit(params);
      })
      .onRequest(V2.methods.client.mcp.message, this.mcp.handleRequest);
    this.connection = app.connect(V2.ndJsonStream(Writable.toWeb(proc.child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(proc.child.stdout!) as ReadableStream<Uint8Array>));
  }

  get agent(): V2.ClientContext {
    return this.connection.agent;
  }

  #check(): void {
    for (const w of [...this.#waiters]) {
      if (w.test()) {
        this.#waiters.splice(this.#waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  }

  /** Resolves when `test` holds (checked on every update/request); bounded. */
  until(test: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
    if (test()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; stderr:\n${this.proc.stderr}`)), timeoutMs);
      this.#waiters.push({ test, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }

  of(sessionId: string): V2.SessionUpdate[] {
    return this.updates.filter((u) => u.sessionId === sessionId).map((u) => u.update);
  }

  idle(sessionId: string): Array<V2.SessionUpdate & { stopReason?: unknown }> {
    return this.of(sessionId).filter((u) => u.sessionUpdate === "state_update" && (u as { state?: unknown }).state === "idle") as Array<V2.SessionUpdate & { stopReason?: unknown }>;
  }

  text(sessionId: string, kind: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk"): string {
    return this.of(sessionId)
      .filter((u) => u.sessionUpdate === kind)
      .map((u) => ((u as V2.ContentChunk).content as { text?: string }).text ?? "")
      .join("");
  }
}

function serveV2(args: string[], cwd: string): V2Client {
  const proc = new ServeProcess(args, { cwd });
  const client = new V2Client(proc);
  cleanups.push(async () => {
    client.connection.close();
    await proc.end();
  });
  return client;
}

const info = { name: "v2-test", version: "1" };

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

  it("elicitation: the ask_user tool's form reaches a v2 client with elicitation.form (requires_action meanwhile); its answers reach the model", async () => {
    const dir = workspace();
    const script = writeScript(dir, [
      { toolCall: { name: "ask_user", callId: "ask1", input: { question: "Which colour?", fields: [{ name: "color", type: "choice", options: ["red", "blue"] }] } } },
      { echo: "last_user_message" },
    ]);
    const client = serveV2(["--model", `scripted:${script}`, "--protocol", "v2", "--no-persist"], dir);
    client.elicit = () => Promise.resolve({ action: "accept", content: { color: "blue" } });
    await client.agent.request(V2.methods.agent.initialize, { protocolVersion: 2, info, capabilities: { elicitation: { form: {} } } });
    const { sessionId } = await client.agent.request(V2.methods.agent.session.new, { cwd: dir });
    await client.agent.request(V2.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "ask me" }] });
    await client.until(() => client.idle(sessionId).length > 0, "the idle state_update");
    expect(client.idle(sessionId)[0]).toMatchObject({ stopReason: "end_turn" });
    expect(client.permissions).toEqual([]);
    expect(client.elicitations).toEqual([
      expect.objectContaining({ mode: "form", message: "Which colour?", sessionId, toolCallId: "ask1", requestedSchema: expect.objectContaining({ properties: { color: { type: "string", enum: ["red", "blue"] } } }) }),
    ]);
    const states = client.of(sessionId).filter((u) => u.sessionUpdate === "state_update").map((u) => (u as { state?: string }).state);
    expect(states).toEqual(["running", "requires_action", "running", "idle"]);
    const done = client.of(sessionId).find((u) => u.sessionUpdate === "tool_call_update" && (u as V2.ToolCallUpdate).toolCallId === "ask1" && (u as V2.ToolCallUpdate).status === "completed");
    expect(done).toMatchObject({ rawOutput: { answers: { color: "blue" } } });
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

  it("serve --listen --protocol auto: our v2 client over WebSocket and over Streamable HTTP, and a v1 client, each run a turn with a permission", async () => {
    const dir = workspace();
    const script = writeScript(dir, [{ toolCall: { name: "write_file", input: { path: "x.txt", content: "x" } }, text: "wrote" }, { text: "ok" }], "script.json");
    const proc = new ListeningServe(["--model", `scripted:${script}`, "--protocol", "auto", "--state-dir", join(dir, ".state")], { cwd: dir });
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

  it("serve --listen --protocol auto: /metrics counts a v2 turn as running until its idle state_update (the answer only acknowledges it)", async () => {
    const dir = workspace();
    const script = writeScript(dir, [{ hang: true, text: "working" }], "script.json");
    const proc = new ListeningServe(["--model", `scripted:${script}`, "--protocol", "auto", "--no-persist"], { cwd: dir });
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

describe("serve --protocol v2: the unstable session methods with the official SDK's v2 unstable client (one serve)", () => {
  let dir: { path: string; remove(): void };
  let client: V2Client;
  let caps: V2.AgentCapabilities;

  beforeAll(async () => {
    dir = tempDir("agentkit-serve-v2u-");
    // The model answers with the transcript it was sent: a fork's history shows in its answer.
    writeFileSync(join(dir.path, "script.json"), JSON.stringify({ steps: [{ echo: "transcript" }], onExhausted: "repeat-last" }));
    client = new V2Client(new ServeProcess(["--model", `scripted:${join(dir.path, "script.json")}`, "--protocol", "v2", "--state-dir", join(dir.path, ".state")], { cwd: dir.path }));
    caps = (await client.agent.request(V2.methods.agent.initialize, { protocolVersion: 2, info, capabilities: {} })).capabilities ?? {};
  });
  afterAll(async () => {
    client.connection.close();
    await client.proc.end();
    dir.remove();
  });

  const turn = async (sessionId: string, text: string): Promise<string> => {
    const before = client.idle(sessionId).length;
    await client.agent.request(V2.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
    await client.until(() => client.idle(sessionId).length > before, `the idle state after "${text}"`);
    return client.text(sessionId, "agent_message_chunk");
  };
  const titleOf = async (sessionId: string): Promise<unknown> => {
    await client.until(() => client.of(sessionId).some((u) => u.sessionUpdate === "session_info_update" && typeof (u as V2.SessionInfoUpdate).title === "string"), "a session_info_update title");
    return (client.of(sessionId).filter((u) => u.sessionUpdate === "session_info_update").at(-1) as V2.SessionInfoUpdate).title;
  };

  it("advertises exactly the bridged capabilities, and each one works", async () => {
    const checks: Record<string, () => Promise<void>> = {
      // Exercised by the v1 capability tests through the same runtime (the bridge maps them 1:1).
      "session.mcp.stdio": () => Promise.resolve(),
      "session.mcp.http": () => Promise.resolve(),
      "session.prompt.embeddedContext": () => Promise.resolve(),
      "session.delete": async () => {
        const { sessionId } = await client.agent.request(V2.methods.agent.session.new, { cwd: dir.path });
        await turn(sessionId, "delete me");
        await client.agent.request(V2.methods.agent.session.delete, { sessionId });
        expect((await client.agent.request(V2.methods.agent.session.list, { archived: "include" })).sessions.map((s) => s.sessionId)).not.toContain(sessionId);
      },
      "session.additionalDirectories": () => Promise.resolve(),
      "session.fork": () => forkWorks(),
      "session.title": () => titleWorks(),
      "session.status": () => statusWorks(),
      "session.archive": () => archiveWorks(),
      "session.mcp.acp": () => mcpOverAcpWorks(),
      // The scripted model needs no key: not_required (logout and providers: the next describe).
      "auth.status": async () => expect(await client.agent.request(V2.methods.agent.auth.status, {})).toEqual({ state: "not_required" }),
    };
    expect(advertised(caps)).toEqual(Object.keys(checks).sort());
    for (const check of Object.values(checks)) await check();
  });

  it("$/cancel_request: a session/new stuck starting an MCP server answers -32800, the server is stopped, no session is kept", async () => {
    const slow = hanging(dir.path, "v2-new");
    const abort = new AbortController();
    const opening = client.agent.request(V2.methods.agent.session.new, { cwd: dir.path, mcpServers: [{ type: "stdio", ...slow.server }] }, { cancellationSignal: abort.signal }).then(
      () => "answered",
      (e: unknown) => e,
    );
    const pid = await startedPid(slow.pidFile);
    const before = (await client.agent.request(V2.methods.agent.session.list, { archived: "include" })).sessions.length;
    abort.abort();
    expect(await opening).toMatchObject({ code: -32800 });
    expect(await gone(pid), "the MCP server of the cancelled session/new is stopped").toBe(true);
    expect((await client.agent.request(V2.methods.agent.session.list, { archived: "include" })).sessions).toHaveLength(before);
  });

  /** An MCP server (official MCP SDK) served by the SDK's v2 McpOverAcpProvider: serve lists its tools over mcp/message. */
  async function mcpOverAcpWorks(): Promise<void> {
    const methods: string[] = [];
    const adapter = fromMcpServer(() => {
      const server = new McpServer({ name: "calc", version: "1.0.0" });
      server.registerTool("add", { description: "Adds two numbers", inputSchema: z.object({ a: z.number(), b: z.number() }) }, ({ a, b }) => ({ content: [{ type: "text", text: `sum=${a + b}` }] }));
      return server;
    });
    const registration = client.mcp.registerServer(client.connection.agent, {
      name: "calc",
      serverId: "calc-1",
      handler: (context) => {
        methods.push(context.method);
        return adapter.handler(context);
      },
    });
    try {
      const { sessionId } = await client.agent.request(V2.methods.agent.session.new, { cwd: dir.path, mcpServers: [registration.declaration as V2.McpServer] });
      await client.until(() => methods.includes("tools/list"), "serve listing the acp MCP server's tools");
      await client.agent.request(V2.methods.agent.session.close, { sessionId });
    } finally {
      await registration.dispose();
      await adapter.close();
    }
  }

  async function forkWorks(): Promise<void> {
    const { sessionId } = await client.agent.request(V2.methods.agent.session.new, { cwd: dir.path });
    await turn(sessionId, "first question");
    const fork = await client.agent.request(V2.methods.agent.session.fork, { sessionId, cwd: dir.path });
    expect(fork.sessionId).not.toBe(sessionId);
    expect(await titleOf(fork.sessionId)).toBe("first question");
    const answer = await turn(fork.sessionId, "in the fork");
    expect(answer).toContain("first question");
    expect(answer).toContain("in the fork");
    expect(await turn(sessionId, "original again")).not.toContain("in the fork");
    await expect(client.agent.request(V2.methods.agent.session.fork, { sessionId: "no-such-session", cwd: dir.path })).rejects.toMatchObject({ code: -32002 });
  }

  async function titleWorks(): Promise<void> {
    const { sessionId } = await client.agent.request(V2.methods.agent.session.new, { cwd: dir.path });
    await turn(sessionId, "derive my title");
    expect(await titleOf(sessionId)).toBe("derive my title");
    expect(await client.agent.request(V2.methods.agent.session.setTitle, { sessionId, title: "  Set   by v2 " })).toEqual({ title: "Set by v2" });
    await client.until(() => client.of(sessionId).some((u) => u.sessionUpdate === "session_info_update" && (u as V2.SessionInfoUpdate).title === "Set by v2"), "the new title's session_info_update");
    const listed = await client.agent.request(V2.methods.agent.session.list, {});
    expect(listed.sessions.find((s) => s.sessionId === sessionId)).toMatchObject({ title: "Set by v2" });
  }

  async function statusWorks(): Promise<void> {
    const { sessionId } = await client.agent.request(V2.methods.agent.session.new, { cwd: dir.path });
    expect(await client.agent.request(V2.methods.agent.session.status, { sessionId })).toMatchObject({ status: "open", state: { state: "idle" } });
    await turn(sessionId, "save me");
    await client.agent.request(V2.methods.agent.session.close, { sessionId });
    expect(await client.agent.request(V2.methods.agent.session.status, { sessionId })).toEqual({ status: "saved" });
    await expect(client.agent.request(V2.methods.agent.session.status, { sessionId: "no-such-session" })).rejects.toMatchObject({ code: -32002 });
  }

  async function archiveWorks(): Promise<void> {
    const { sessionId } = await client.agent.request(V2.methods.agent.session.new, { cwd: dir.path });
    await turn(sessionId, "archive me");
    const ids = async (archived?: "include" | "only"): Promise<string[]> =>
      (await client.agent.request(V2.methods.agent.session.list, archived ? { archived } : {})).sessions.map((s) => `${s.sessionId}${s.archived ? "*" : ""}`);
    expect(await ids()).toContain(sessionId);
    await client.agent.request(V2.methods.agent.session.archive, { sessionId });
    expect(await ids()).not.toContain(sessionId);
    expect(await ids("only")).toEqual([`${sessionId}*`]);
    expect(await ids("include")).toContain(`${sessionId}*`);
    // Archiving closed the open session: a prompt is refused until it is resumed.
    await expect(client.agent.request(V2.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "x" }] })).rejects.toMatchObject({ code: -32002 });
    await client.agent.request(V2.methods.agent.session.unarchive, { sessionId });
    expect(await ids("only")).toEqual([]);
    expect(await ids()).toContain(sessionId);
  }
});

describe("serve --protocol v2 with a keyed provider: providers/* and auth/status + auth/status_update with the official SDK's v2 unstable client", () => {
  it("advertises providers and auth.status; list, set (routes new sessions), refusals, disable; logout → status_update, prompts refused; login → status_update", async () => {
    const first = await startMockAnthropic({ responses: [{ text: "from first" }] });
    const second = await startMockAnthropic({ responses: [{ text: "from second" }] });
    const ws = new Workspace("agentkit-serve-v2p-");
    const proc = new ServeProcess(["--model", "anthropic:claude-sonnet-4-5", "--base-url", first.baseUrl, "--protocol", "v2"], { cwd: ws.cwd, env: serveEnv(ws, { ANTHROPIC_API_KEY: "sk-test" }) });
    const statusUpdates: V2.AuthStatusUpdateNotification[] = [];
    const idles: string[] = [];
    const waiters = new Set<() => void>();
    const changed = (): void => waiters.forEach((w) => w());
    /** Resolves when `test` holds, checked on each notification; bounded. */
    const until = (test: () => boolean, what: string): Promise<void> =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; stderr:\n${proc.stderr}`)), 30_000);
        const check = (): void => {
          if (!test()) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      });
    const connection = V2.client({ name: "v2-test" })
      .onNotification(V2.methods.client.session.update, ({ params }) => {
        if (params.update.sessionUpdate === "state_update" && (params.update as { state?: string }).state === "idle") idles.push(params.sessionId);
        changed();
      })
      .onNotification(V2.methods.client.auth.statusUpdate, ({ params }) => {
        statusUpdates.push(params);
        changed();
      })
      .connect(V2.ndJsonStream(Writable.toWeb(proc.child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(proc.child.stdout!) as ReadableStream<Uint8Array>));
    cleanups.push(
      () => ws.cleanup(),
      () => first.close(),
      () => second.close(),
      async () => {
        connection.close();
        await proc.end();
      },
    );
    const agent = connection.agent;
    const init = await agent.request(V2.methods.agent.initialize, { protocolVersion: 2, info });
    expect(init.capabilities).toMatchObject({ providers: {}, auth: { status: {} } });
    expect(await agent.request(V2.methods.agent.providers.list, {})).toEqual({
      providers: [{ providerId: "main", supported: ["anthropic"], required: true, current: { apiType: "anthropic", baseUrl: first.baseUrl } }],
    });
    const prompt = async (sessionId: string): Promise<void> => {
      await agent.request(V2.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hi" }] });
    };
    await agent.request(V2.methods.agent.providers.set, { providerId: "main", apiType: "anthropic", baseUrl: second.baseUrl, headers: { "x-gateway": "g1" } });
    const { sessionId } = await agent.request(V2.methods.agent.session.new, { cwd: ws.cwd });
    await prompt(sessionId);
    await until(() => idles.includes(sessionId), "the turn's idle state");
    expect(second.requests).toHaveLength(1);
    expect(first.requests).toHaveLength(0);
    expect(second.requests[0]?.headers["x-gateway"]).toBe("g1");
    await expect(agent.request(V2.methods.agent.providers.set, { providerId: "other", apiType: "anthropic", baseUrl: second.baseUrl })).rejects.toMatchObject({ code: -32602 });
    await expect(agent.request(V2.methods.agent.providers.disable, { providerId: "main" })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("required") });

    expect(await agent.request(V2.methods.agent.auth.status, {})).toMatchObject({ state: "authenticated" });
    await agent.request(V2.methods.agent.auth.logout, {});
    await until(() => statusUpdates.length === 1, "auth/status_update after logout");
    expect(statusUpdates[0]).toMatchObject({ state: "unauthenticated" });
    expect(await agent.request(V2.methods.agent.auth.status, {})).toMatchObject({ state: "unauthenticated" });
    await expect(prompt(sessionId)).rejects.toMatchObject({ code: -32000 });
    await agent.request(V2.methods.agent.auth.login, { methodId: "env-api-key" });
    await until(() => statusUpdates.length === 2, "auth/status_update after login");
    expect(statusUpdates.map((u) => u.state)).toEqual(["unauthenticated", "authenticated"]);
  });
});

