import { describe, expect, it } from "vitest";
import { INTERRUPTED_TOOL_TEXT, repairDanglingToolCalls, replayUpdates } from "../../../../src/acp/agent/index.js";
import type { Item } from "../../../../src/core/index.js";

const at = "2026-01-01T00:00:00.000Z";
const item = (id: string, role: Item["role"], parts: Item["parts"], meta?: Item["meta"]): Item => ({ id, role, parts, createdAt: at, ...(meta ? { meta } : {}) });

describe("replayUpdates", () => {
  it("maps every user part back to its ACP block, and tool calls without recorded info through `describe`", () => {
    const items = [
      item("u1", "user", [
        { type: "text", text: "look" },
        { type: "media", mediaType: "image/png", data: "AAAA" },
        { type: "media", mediaType: "audio/wav", data: "BBBB" },
        { type: "resource_link", uri: "file:///a.log", name: "a.log", mimeType: "text/plain" },
        { type: "resource", uri: "file:///n.md", text: "notes" },
      ]),
      item("a1", "assistant", [{ type: "tool_call", callId: "c1", toolName: "read_file", input: { path: "x" } }]),
      item("t1", "tool", [{ type: "tool_result", callId: "c1", toolName: "read_file", result: { text: "content of x", isError: false } }]),
    ];
    const updates = replayUpdates(items, (toolName, input) => ({ title: `Read ${(input as { path: string }).path}`, kind: "read", locations: [{ path: "/ws/x" }] }));
    expect(updates).toEqual([
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "look" }, messageId: "u1" },
      { sessionUpdate: "user_message_chunk", content: { type: "image", data: "AAAA", mimeType: "image/png" }, messageId: "u1" },
      { sessionUpdate: "user_message_chunk", content: { type: "audio", data: "BBBB", mimeType: "audio/wav" }, messageId: "u1" },
      { sessionUpdate: "user_message_chunk", content: { type: "resource_link", uri: "file:///a.log", name: "a.log", mimeType: "text/plain" }, messageId: "u1" },
      { sessionUpdate: "user_message_chunk", content: { type: "resource", resource: { uri: "file:///n.md", text: "notes" } }, messageId: "u1" },
      {
        sessionUpdate: "tool_call",
        toolCallId: "c1",
        title: "Read x",
        kind: "read",
        status: "completed",
        locations: [{ path: "/ws/x" }],
        rawInput: { path: "x" },
        rawOutput: { text: "content of x", isError: false },
        content: [{ type: "content", content: { type: "text", text: "content of x" } }],
      },
    ]);
  });

  it("uses meta.calls when present, and shows failed calls as failed", () => {
    const items = [
      item("a1", "assistant", [{ type: "text", text: "running" }, { type: "tool_call", callId: "c1", toolName: "shell", input: { command: "false" } }]),
      item("t1", "tool", [{ type: "tool_result", callId: "c1", toolName: "shell", result: { text: "[exit code: 1]", isError: true, data: { exitCode: 1 } } }], {
        calls: [{ callId: "c1", title: "Run `false`", kind: "execute", locations: [] }],
      }),
    ];
    const updates = replayUpdates(items, () => {
      throw new Error("not needed");
    });
    expect(updates[1]).toMatchObject({ sessionUpdate: "tool_call", title: "Run `false`", kind: "execute", status: "failed", rawOutput: { exitCode: 1 } });
  });
});

describe("repairDanglingToolCalls", () => {
  it("adds an error result right after an assistant item whose calls never got one; leaves complete transcripts alone", () => {
    const complete = [
      item("a1", "assistant", [{ type: "tool_call", callId: "c1", toolName: "shell", input: {} }]),
      item("t1", "tool", [{ type: "tool_result", callId: "c1", toolName: "shell", result: { text: "ok", isError: false } }]),
    ];
    expect(repairDanglingToolCalls(complete)).toEqual(complete);

    const dangling = [...complete, item("a2", "assistant", [{ type: "tool_call", callId: "c2", toolName: "shell", input: {} }]), item("u3", "user", [{ type: "text", text: "next" }])];
    const repaired = repairDanglingToolCalls(dangling);
    expect(repaired.map((i) => i.id)).toEqual(["a1", "t1", "a2", expect.any(String), "u3"]);
    expect(repaired[3]).toMatchObject({ role: "tool", parts: [{ type: "tool_result", callId: "c2", result: { isError: true, text: INTERRUPTED_TOOL_TEXT } }], meta: { repaired: true } });
    expect(dangling).toHaveLength(4); // the input is not changed
  });

  it("finds the interrupted call by its place when call ids repeat (local models number calls per turn)", () => {
    const call = (id: string) => item(id, "assistant", [{ type: "tool_call", callId: "call_1", toolName: "shell", input: { id } }]);
    const result = (id: string) => item(id, "tool", [{ type: "tool_result", callId: "call_1", toolName: "shell", result: { text: "ok", isError: false } }]);
    const repaired = repairDanglingToolCalls([call("a1"), result("t1"), item("u2", "user", [{ type: "text", text: "again" }]), call("a2"), item("u3", "user", [{ type: "text", text: "next" }]), call("a3"), result("t3")]);
    expect(repaired.map((i) => i.id)).toEqual(["a1", "t1", "u2", "a2", expect.any(String), "u3", "a3", "t3"]);
    expect(repaired[4]).toMatchObject({ role: "tool", parts: [{ callId: "call_1", result: { isError: true, text: INTERRUPTED_TOOL_TEXT } }], meta: { repaired: true } });
  });
});

describe("test environment", () => {
  it("serve processes spawned by tests write to a throwaway state dir (global setup)", () => {
    expect(process.env.AGENTKIT_STATE_DIR).toMatch(/agentkit-test-state-/);
  });
});
