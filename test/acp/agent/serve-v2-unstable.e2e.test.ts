import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as V2 from "@agentclientprotocol/sdk/experimental/v2/unstable";
import { fromMcpServer } from "@agentclientprotocol/sdk/experimental/mcp-server";
import { McpServer } from "@modelcontextprotocol/server";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import * as z from "zod/v4";
import { startMockAnthropic } from "../../../src/testing/index.js";
import { gone, hanging, openServe, startedPid, writeScript } from "./serve-support.js";
import { Workspace, serveEnv } from "./services-support.js";
import { advertised, tempDir } from "./support.js";
import { info, V2Client } from "./v2-support.js";

// The unstable ACP methods over v2: the official SDK's v2 unstable client ↔ serve --protocol v2.

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("serve --protocol v2: elicitation with the official SDK's v2 client", () => {
  it("elicitation: the ask_user tool's form reaches a v2 client with elicitation.form (requires_action meanwhile); its answers reach the model", async () => {
    const tmp = tempDir("agentkit-serve-v2e-");
    const dir = tmp.path;
    const script = writeScript(dir, [
      { toolCall: { name: "ask_user", callId: "ask1", input: { question: "Which colour?", fields: [{ name: "color", type: "choice", options: ["red", "blue"] }] } } },
      { echo: "last_user_message" },
    ]);
    const client = new V2Client(openServe(["--model", `scripted:${script}`, "--protocol", "v2", "--no-persist"], { cwd: dir }));
    cleanups.push(
      () => tmp.remove(),
      async () => {
        client.connection.close();
        await client.proc.end();
      },
    );
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
});

describe("serve --protocol v2: the unstable session methods with the official SDK's v2 unstable client (one serve)", () => {
  let dir: { path: string; remove(): void };
  let client: V2Client;
  let caps: V2.AgentCapabilities;

  beforeAll(async () => {
    dir = tempDir("agentkit-serve-v2u-");
    // The model answers with the transcript it was sent: a fork's history shows in its answer.
    writeFileSync(join(dir.path, "script.json"), JSON.stringify({ steps: [{ echo: "transcript" }], onExhausted: "repeat-last" }));
    client = new V2Client(openServe(["--model", `scripted:${join(dir.path, "script.json")}`, "--protocol", "v2", "--state-dir", join(dir.path, ".state")], { cwd: dir.path }));
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
    expect(await titleOf(fork.sessionId)).toBe("Fork of first question");
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
    const proc = openServe(["--model", "anthropic:claude-sonnet-4-5", "--base-url", first.baseUrl, "--protocol", "v2"], { cwd: ws.cwd, env: serveEnv(ws, { ANTHROPIC_API_KEY: "sk-test" }) });
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
      .connect(V2.ndJsonStream(Writable.toWeb(proc.pipes().stdin) as WritableStream<Uint8Array>, Readable.toWeb(proc.pipes().stdout) as ReadableStream<Uint8Array>));
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
