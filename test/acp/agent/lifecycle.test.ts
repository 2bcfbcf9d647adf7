import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { script } from "../../../src/testing/index.js";
import { initialize, startInMemory } from "./fixtures.js";
import { deferred, select, tempDir, textOf, waitForAbort } from "./support.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function setup(...args: Parameters<typeof startInMemory>) {
  const env = startInMemory(...args);
  const dir = tempDir();
  cleanups.push(() => dir.remove(), () => env.close());
  return { ...env, dir: dir.path };
}

describe("AcpHeadlessRuntime over in-memory ndjson pipes, with the official SDK client", () => {
  it("initialize → new → prompt: thought and message chunks, tool call, permission, diff, end_turn", async () => {
    const env = setup({
      scripts: [
        [
          script.toolCall("write_file", { path: "hello.txt", content: "hi there\n" }, { callId: "call_w1", reasoning: "I should write the file.", text: "Writing it now." }),
          script.text("Done: hello.txt is written.", { chunks: 3 }),
        ],
      ],
    });
    const init = await initialize(env.agent);
    expect(init.protocolVersion).toBe(1);
    expect(init.agentInfo).toEqual({ name: "test-agent", version: "9.9.9" });

    const { sessionId } = await env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, mcpServers: [] });
    const response = await env.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "write hello.txt" }] });
    expect(response.stopReason).toBe("end_turn");

    const updates = env.client.updates(sessionId);
    expect(textOf(updates, "agent_thought_chunk")).toBe("I should write the file.");
    expect(textOf(updates, "agent_message_chunk")).toBe("Writing it now.Done: hello.txt is written.");
    // Three chunks of the final text, each with a message id shared within the message.
    const finalChunks = updates.filter((u) => u.sessionUpdate === "agent_message_chunk").slice(1);
    expect(finalChunks).toHaveLength(3);
    expect(new Set(finalChunks.map((u) => (u as { messageId?: string }).messageId)).size).toBe(1);

    const target = join(env.dir, "hello.txt");
    const kinds = updates.map((u) => u.sessionUpdate + ("status" in u && u.status ? `:${u.status}` : ""));
    expect(kinds).toEqual([
      "agent_thought_chunk",
      "agent_message_chunk",
      "tool_call:pending",
      "tool_call_update:in_progress",
      "tool_call_update:completed",
      "agent_message_chunk",
      "agent_message_chunk",
      "agent_message_chunk",
    ]);
    const call = updates.find((u) => u.sessionUpdate === "tool_call");
    expect(call).toMatchObject({
      toolCallId: "call_w1",
      title: "Write hello.txt",
      kind: "edit",
      status: "pending",
      locations: [{ path: target }],
      rawInput: { path: "hello.txt", content: "hi there\n" },
    });
    expect(env.client.permissionRequests).toHaveLength(1);
    const permission = env.client.permissionRequests[0]!;
    expect(permission.sessionId).toBe(sessionId);
    expect(permission.toolCall).toMatchObject({ toolCallId: "call_w1", title: "Write hello.txt", kind: "edit", rawInput: { path: "hello.txt" } });
    expect(permission.options.map((o) => [o.optionId, o.kind])).toEqual([
      ["allow_once", "allow_once"],
      ["allow_always", "allow_always"],
      ["reject_once", "reject_once"],
      ["reject_always", "reject_always"],
    ]);
    const done = updates.find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
    expect(done).toMatchObject({
      toolCallId: "call_w1",
      rawOutput: { path: target, created: true },
      content: [{ type: "diff", path: target, oldText: null, newText: "hi there\n" }, { type: "content", content: { type: "text" } }],
    });
    expect(readFileSync(target, "utf8")).toBe("hi there\n");
  });

  it("a denied call: the model is told, continues, and the file is untouched", async () => {
    const env = setup({
      scripts: [[script.toolCall("write_file", { path: "nope.txt", content: "x" }, { callId: "call_d" }), script.text("Understood, I will not write it.")]],
    });
    env.client.answer = () => select("reject_once");
    await initialize(env.agent);
    const { sessionId } = await env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, mcpServers: [] });
    const response = await env.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "write nope.txt" }] });
    expect(response.stopReason).toBe("end_turn");
    expect(existsSync(join(env.dir, "nope.txt"))).toBe(false);
    const failed = env.client.updates(sessionId).find((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed");
    expect(failed).toMatchObject({ toolCallId: "call_d" });
    // The second model call saw the denial as the tool result.
    const secondRequest = env.models[0]!.requests[1]!;
    const toolItem = secondRequest.items.find((i) => i.role === "tool");
    const result = toolItem?.parts.find((p) => p.type === "tool_result");
    expect(result).toMatchObject({ type: "tool_result", callId: "call_d", result: { isError: true } });
    expect(result?.type === "tool_result" && result.result.text).toMatch(/denied/);
    expect(textOf(env.client.updates(sessionId), "agent_message_chunk")).toBe("Understood, I will not write it.");
  });

  it("session/cancel during streaming → cancelled within 200 ms; the next prompt works", async () => {
    const env = setup({ scripts: [[script.hang([{ type: "text_delta", text: "streaming…" }]), script.text("second turn ok")]] });
    await initialize(env.agent);
    const { sessionId } = await env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, mcpServers: [] });
    const pending = env.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] });
    await env.client.waitFor(() => textOf(env.client.updates(sessionId), "agent_message_chunk") === "streaming…", "the first chunk");
    const started = performance.now();
    await env.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    expect((await pending).stopReason).toBe("cancelled");
    expect(performance.now() - started).toBeLessThan(200);
    const next = await env.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "again" }] });
    expect(next.stopReason).toBe("end_turn");
    expect(textOf(env.client.updates(sessionId), "agent_message_chunk")).toBe("streaming…second turn ok");
  });

  it("session/cancel during a permission wait → cancelled within 200 ms, the request is cancelled, the next prompt works", async () => {
    const env = setup({
      scripts: [[script.toolCall("write_file", { path: "wait.txt", content: "x" }, { callId: "call_p" }), script.text("after cancel")]],
    });
    env.client.answer = (_request, signal) => waitForAbort(signal);
    await initialize(env.agent);
    const { sessionId } = await env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, mcpServers: [] });
    const pending = env.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] });
    await env.client.waitFor(() => env.client.permissionRequests.length === 1, "the permission request");
    const started = performance.now();
    await env.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    expect((await pending).stopReason).toBe("cancelled");
    expect(performance.now() - started).toBeLessThan(200);
    await env.client.waitFor(() => env.client.cancelledPermissions.includes("call_p"), "$/cancel_request for the permission");
    expect(existsSync(join(env.dir, "wait.txt"))).toBe(false);
    const failed = env.client.updates(sessionId).find((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed");
    expect(failed).toMatchObject({ toolCallId: "call_p" });

    env.client.answer = () => select("allow_once");
    const next = await env.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "again" }] });
    expect(next.stopReason).toBe("end_turn");
    // The cancelled call is in the transcript as an error result, so the provider sees a valid history.
    const request = env.models[0]!.requests[1]!;
    expect(request.items.some((i) => i.role === "tool" && i.parts.some((p) => p.type === "tool_result" && p.callId === "call_p" && p.result.isError))).toBe(true);
  });

  it("a `cancelled` permission outcome from the client ends the prompt cancelled", async () => {
    const env = setup({ scripts: [[script.toolCall("write_file", { path: "c.txt", content: "x" }), script.text("next")]] });
    env.client.answer = () => ({ outcome: { outcome: "cancelled" } });
    await initialize(env.agent);
    const { sessionId } = await env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, mcpServers: [] });
    const response = await env.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] });
    expect(response.stopReason).toBe("cancelled");
    expect(existsSync(join(env.dir, "c.txt"))).toBe(false);
    const next = await env.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "again" }] });
    expect(next.stopReason).toBe("end_turn");
  });

  it("two sessions in parallel: one blocked on a permission, the other finishes", async () => {
    const env = setup({
      scripts: [
        [script.toolCall("write_file", { path: "a.txt", content: "a" }, { callId: "call_a" }), script.text("A done")],
        [script.text("B done", { chunks: 2 })],
      ],
    });
    const gate = deferred<acp.RequestPermissionResponse>();
    env.client.answer = () => gate.promise;
    await initialize(env.agent);
    const a = await env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, mcpServers: [] });
    const b = await env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, mcpServers: [] });
    const promptA = env.agent.request(acp.methods.agent.session.prompt, { sessionId: a.sessionId, prompt: [{ type: "text", text: "write a" }] });
    await env.client.waitFor(() => env.client.permissionRequests.length === 1, "session A's permission request");
    const responseB = await env.agent.request(acp.methods.agent.session.prompt, { sessionId: b.sessionId, prompt: [{ type: "text", text: "hello" }] });
    expect(responseB.stopReason).toBe("end_turn");
    expect(textOf(env.client.updates(b.sessionId), "agent_message_chunk")).toBe("B done");
    // A is still waiting; a second prompt to it is refused clearly.
    await expect(env.agent.request(acp.methods.agent.session.prompt, { sessionId: a.sessionId, prompt: [{ type: "text", text: "again" }] })).rejects.toMatchObject({
      code: -32600,
      message: expect.stringContaining("already running a prompt"),
    });
    gate.resolve(select("allow_once"));
    expect((await promptA).stopReason).toBe("end_turn");
    expect(readFileSync(join(env.dir, "a.txt"), "utf8")).toBe("a");
  });

  it("session/close cancels a running turn, frees the session; unknown ids get -32002 with the id", async () => {
    const env = setup({ scripts: [[script.hang()]] });
    await initialize(env.agent);
    const { sessionId } = await env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, mcpServers: [] });
    expect(env.runtime.sessionCount).toBe(1);
    const pending = env.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] });
    await env.client.waitFor(() => env.client.updates(sessionId).length > 0, "streaming to start");
    await env.agent.request(acp.methods.agent.session.close, { sessionId });
    expect((await pending).stopReason).toBe("cancelled");
    expect(env.runtime.sessionCount).toBe(0);
    expect(env.integration.sessionRegistry().has(sessionId)).toBe(false);
    const error = await env.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "x" }] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: -32002, data: { sessionId } });
    expect((error as Error).message).toContain(sessionId);
  });

  it("a failed run answers the prompt with a JSON-RPC error that says why; the session keeps working", async () => {
    const env = setup({
      scripts: [
        [
          () => {
            throw new Error("provider exploded");
          },
          script.text("recovered"),
        ],
      ],
    });
    await initialize(env.agent);
    const { sessionId } = await env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, mcpServers: [] });
    const error = await env.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: -32603 });
    expect((error as Error).message).toContain("provider exploded");
    const next = await env.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "again" }] });
    expect(next.stopReason).toBe("end_turn");
  });

  it("an edit shows as a diff with the old text", async () => {
    const env = setup({ scripts: [[script.toolCall("edit_file", { path: "e.txt", old_text: "one", new_text: "two" }), script.text("edited")]] });
    writeFileSync(join(env.dir, "e.txt"), "one\n");
    await initialize(env.agent);
    const { sessionId } = await env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, mcpServers: [] });
    await env.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "edit" }] });
    const done = env.client.updates(sessionId).find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
    expect(done).toMatchObject({ content: [{ type: "diff", path: join(env.dir, "e.txt"), oldText: "one\n", newText: "two\n" }, { type: "content" }] });
  });
});
