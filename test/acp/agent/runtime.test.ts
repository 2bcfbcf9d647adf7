import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { AcpHeadlessRuntime, AcpIntegration, AutoApproveResolver, AgentUpdateMapper } from "../../../src/acp/agent/index.js";
import { silentLogger } from "../../../src/core/index.js";
import { defineTool } from "../../../src/tools/index.js";
import { script } from "../../../src/testing/index.js";
import { initialize, startInMemory } from "./fixtures.js";
import { memoryPipes, RecordingClient, tempDir } from "./support.js";

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function setup(options: Parameters<typeof startInMemory>[0]) {
  const env = startInMemory(options);
  const dir = tempDir();
  cleanups.push(() => dir.remove(), () => env.close());
  return { ...env, dir: dir.path };
}

async function promptOnce(env: ReturnType<typeof setup>, text = "go") {
  await initialize(env.agent);
  const { sessionId } = await env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, mcpServers: [] });
  const response = await env.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  return { sessionId, response, updates: env.client.updates(sessionId) };
}

describe("AcpIntegration builder", () => {
  it("refuses to build without an approval resolver, and says so", () => {
    expect(() => AcpIntegration.builder().name("x").build()).toThrow(/approval resolver is required/);
  });

  it("ignores events of loop sessions that are not bound to ACP", () => {
    const integration = AcpIntegration.builder().approvalResolver(new AutoApproveResolver()).logger(silentLogger).build();
    expect(() => integration.handleEvent({ sessionId: "local-only", event: { type: "content_delta", delta: { type: "append_text", partId: "p", text: "x" } } })).not.toThrow();
    expect(integration.interruptSession("nope")).toBe(false);
    expect(() => integration.cancellationHandle("nope")).toThrow(/session nope/);
  });
});

describe("stop reasons", () => {
  it.each([
    ["length", "max_tokens"],
    ["content_filter", "refusal"],
    ["other", "end_turn"],
  ] as const)("model finish %s → %s", async (reason, stopReason) => {
    const env = setup({ scripts: [[[{ type: "text_delta", text: "partial" }, { type: "finish", reason }]]] });
    expect((await promptOnce(env)).response.stopReason).toBe(stopReason);
  });

  it("max turns → max_turn_requests", async () => {
    const env = setup({ scripts: [[script.toolCall("read_file", { path: "a" }), script.toolCall("read_file", { path: "b" })]], modelOptions: { onExhausted: "repeat-last" } });
    // The default maxTurns is 50; the scripted model repeats the tool call forever.
    const { response } = await promptOnce(env);
    expect(response.stopReason).toBe("max_turn_requests");
    expect(env.models[0]!.callCount).toBe(50);
  });
});

describe("event → session/update mapping", () => {
  it("usage_update only when the context window is known", async () => {
    const known = setup({ scripts: [[script.text("hi", { usage: { inputTokens: 100, outputTokens: 20, totalTokens: 120 } })]], modelOptions: { capabilities: { contextWindow: 8000 } } });
    expect((await promptOnce(known)).updates.filter((u) => u.sessionUpdate === "usage_update")).toEqual([{ sessionUpdate: "usage_update", used: 120, size: 8000 }]);
    const unknown = setup({ scripts: [[script.text("hi")]] });
    expect((await promptOnce(unknown)).updates.some((u) => u.sessionUpdate === "usage_update")).toBe(false);
  });

  it("tool progress: text content accumulates, terminal content replaces it; results carry rawOutput", async () => {
    const progressTool = defineTool({
      name: "slow",
      description: "reports progress",
      kind: "execute",
      input: z.object({}),
      async execute(_input, ctx) {
        ctx.progress({ text: "line 1\n" });
        ctx.progress({ text: "line 2\n", message: "half way" });
        ctx.progress({ terminalId: "term_7" });
        return { text: "ok", isError: false, data: { exitCode: 0 }, terminalId: "term_7" };
      },
    });
    const env = setup({ scripts: [[script.toolCall("slow", {}, { callId: "s1" }), script.text("done")]], tools: [progressTool], resolver: new AutoApproveResolver() });
    const { updates } = await promptOnce(env);
    const forCall = updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "s1");
    expect(forCall).toEqual([
      { sessionUpdate: "tool_call_update", toolCallId: "s1", status: "in_progress" },
      { sessionUpdate: "tool_call_update", toolCallId: "s1", status: "in_progress", content: [{ type: "content", content: { type: "text", text: "line 1\n" } }] },
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "s1",
        status: "in_progress",
        content: [{ type: "content", content: { type: "text", text: "line 1\nline 2\n" } }],
        _meta: { agentkit: { progress: "half way" } },
      },
      { sessionUpdate: "tool_call_update", toolCallId: "s1", status: "in_progress", content: [{ type: "terminal", terminalId: "term_7" }] },
      { sessionUpdate: "tool_call_update", toolCallId: "s1", status: "completed", rawOutput: { exitCode: 0 }, content: [{ type: "terminal", terminalId: "term_7" }] },
    ]);
  });

  it("an append without begin_part is sent as message text, never dropped", () => {
    const mapper = new AgentUpdateMapper();
    expect(mapper.map({ type: "content_delta", delta: { type: "append_text", partId: "orphan", text: "hi" } })).toMatchObject([
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" } },
    ]);
    expect(mapper.map({ type: "warning", message: "careful" })).toEqual([]);
  });
});

describe("session/new", () => {
  it("refuses a missing cwd, relative additional directories, and sessions beyond maxSessions", async () => {
    const env = setup({ scripts: [[script.text("a")], [script.text("b")]], maxSessions: 1 });
    await initialize(env.agent);
    await expect(env.agent.request(acp.methods.agent.session.new, { cwd: join(env.dir, "missing"), mcpServers: [] })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("not an existing directory"),
    });
    await expect(env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, additionalDirectories: ["rel"], mcpServers: [] })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("additionalDirectories[0] must be an absolute path"),
    });
    await env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, mcpServers: [] });
    await expect(env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, mcpServers: [] })).rejects.toMatchObject({
      code: -32600,
      message: expect.stringContaining("too many open sessions (the limit is 1)"),
    });
  });

  it("a failing agent factory → -32603 with the reason", async () => {
    const integration = AcpIntegration.builder().approvalResolver(new AutoApproveResolver()).logger(silentLogger).build();
    const runtime = AcpHeadlessRuntime.builder()
      .integration(integration)
      .agentFactory(() => {
        throw new Error("no model configured");
      })
      .build();
    const pipes = memoryPipes();
    const served = runtime.serve(pipes.agent);
    const client = new RecordingClient();
    const connection = client.connect(pipes.client);
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    await initialize(connection.agent);
    await expect(connection.agent.request(acp.methods.agent.session.new, { cwd: dir.path, mcpServers: [] })).rejects.toMatchObject({
      code: -32603,
      message: expect.stringContaining("no model configured"),
    });
    await pipes.closeClientSide();
    await served.closed;
  });

  it("the connection's end (EOF) cancels running turns and frees its sessions", async () => {
    const env = setup({ scripts: [[script.hang()]] });
    await initialize(env.agent);
    const { sessionId } = await env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, mcpServers: [] });
    const pending = env.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] }).catch((e: unknown) => e);
    await env.client.waitFor(() => env.client.updates(sessionId).length > 0, "streaming");
    await env.close();
    expect(env.runtime.sessionCount).toBe(0);
    expect(env.integration.sessionRegistry().size).toBe(0);
    expect(await pending).toBeInstanceOf(Error); // the client's own connection closed under it
  });

  it("a $/cancel_request for the prompt cancels the turn like session/cancel", async () => {
    const env = setup({ scripts: [[script.hang(), script.text("after")]] });
    await initialize(env.agent);
    const { sessionId } = await env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, mcpServers: [] });
    const abort = new AbortController();
    const pending = env.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] }, { cancellationSignal: abort.signal });
    await env.client.waitFor(() => env.client.updates(sessionId).length > 0, "streaming");
    abort.abort();
    expect((await pending).stopReason).toBe("cancelled");
    expect((await env.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "again" }] })).stopReason).toBe("end_turn");
  });
});

describe("connection end during a permission wait", () => {
  it("cancels the turn (no further model call) instead of treating the lost answer as a denial", async () => {
    const env = setup({ scripts: [[script.toolCall("write_file", { path: "x.txt", content: "x" }), script.text("should not run")]] });
    env.client.answer = () => new Promise(() => undefined); // never answers
    await initialize(env.agent);
    const { sessionId } = await env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, mcpServers: [] });
    void env.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] }).catch(() => undefined);
    await env.client.waitFor(() => env.client.permissionRequests.length === 1, "the permission request");
    await env.close();
    expect(env.models[0]!.callCount).toBe(1);
    expect(env.runtime.sessionCount).toBe(0);
  });
});

describe("shutdown", () => {
  it("runtime.shutdown() answers running prompts `cancelled`, then closes the connection", async () => {
    const env = setup({ scripts: [[script.hang()], [script.hang()]] });
    await initialize(env.agent);
    const a = await env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, mcpServers: [] });
    const b = await env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, mcpServers: [] });
    const pa = env.agent.request(acp.methods.agent.session.prompt, { sessionId: a.sessionId, prompt: [{ type: "text", text: "a" }] });
    const pb = env.agent.request(acp.methods.agent.session.prompt, { sessionId: b.sessionId, prompt: [{ type: "text", text: "b" }] });
    await env.client.waitFor(() => env.client.updates(a.sessionId).length > 0 && env.client.updates(b.sessionId).length > 0, "both to stream");
    await env.runtime.shutdown();
    expect((await pa).stopReason).toBe("cancelled");
    expect((await pb).stopReason).toBe("cancelled");
    await env.served.closed;
    expect(env.runtime.sessionCount).toBe(0);
  });
});

describe("initialize", () => {
  it.each([1, 2, 99])("answers protocol version 1 whatever the client asks (asked %i)", async (asked) => {
    const env = setup({ scripts: [] });
    const response = await env.agent.request(acp.methods.agent.initialize, { protocolVersion: asked, clientCapabilities: {} });
    expect(response.protocolVersion).toBe(1);
  });
});
