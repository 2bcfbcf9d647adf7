import type * as V1 from "@agentclientprotocol/sdk/unstable";
import type * as V2 from "@agentclientprotocol/sdk/experimental/v2/unstable";
import { describe, expect, it } from "vitest";
import {
  V1ToV2Updates,
  V2ToV1Updates,
  v1ConfigOptions,
  v1PermissionRequest,
  v1StopReason,
  v1AgentCapabilities,
  v2AgentCapabilities,
  v2ConfigOptions,
  v2PermissionRequest,
} from "../../../src/acp/v2/convert.js";

describe("v1 <-> v2 draft conversions", () => {
  it("an edit's diff survives v1 → v2 → v1 (texts in _meta), and a foreign v2 diff becomes text naming the change", () => {
    const there = new V1ToV2Updates();
    const back = new V2ToV1Updates();
    const v2 = there.convert({ sessionUpdate: "tool_call", toolCallId: "t", title: "Edit a.txt", kind: "edit", status: "completed", content: [{ type: "diff", path: "/w/a.txt", oldText: "a", newText: "b" }] });
    expect(v2).toMatchObject({ sessionUpdate: "tool_call_update", toolCallId: "t", content: [{ type: "diff", changes: [{ operation: "modify", path: "/w/a.txt" }] }] });
    expect(back.convert(v2!)).toEqual([expect.objectContaining({ sessionUpdate: "tool_call", title: "Edit a.txt", content: [{ type: "diff", path: "/w/a.txt", oldText: "a", newText: "b" }] })]);
    const foreign = { sessionUpdate: "tool_call_update", toolCallId: "t", content: [{ type: "diff", changes: [{ operation: "delete", path: "/w/gone.txt" }] }] } as V2.SessionUpdate;
    expect(back.convert(foreign)).toEqual([expect.objectContaining({ sessionUpdate: "tool_call_update", content: [{ type: "content", content: { type: "text", text: "delete /w/gone.txt" } }] })]);
  });

  it("an update's _meta goes along both ways (serve's sandbox description rides on the first update)", () => {
    const meta = { agentkit: { sandbox: { mode: "workspace", engine: "bubblewrap" } } };
    const v2 = new V1ToV2Updates().convert({ sessionUpdate: "available_commands_update", availableCommands: [], _meta: meta });
    expect(v2).toMatchObject({ sessionUpdate: "available_commands_update", _meta: meta });
    expect(new V2ToV1Updates().convert(v2!)).toEqual([expect.objectContaining({ sessionUpdate: "available_commands_update", _meta: meta })]);
    expect(new V1ToV2Updates().convert({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "x" } })).not.toHaveProperty("_meta");
  });

  it("chunks without a messageId continue the message of their kind; another kind starts a new one", () => {
    const there = new V1ToV2Updates();
    const chunk = (sessionUpdate: "agent_message_chunk" | "agent_thought_chunk", text: string) => there.convert({ sessionUpdate, content: { type: "text", text } }) as V2.ContentChunk;
    const a = chunk("agent_message_chunk", "a");
    const b = chunk("agent_message_chunk", "b");
    const t = chunk("agent_thought_chunk", "t");
    const c = chunk("agent_message_chunk", "c");
    expect(a.messageId).toBe(b.messageId);
    expect(t.messageId).not.toBe(a.messageId);
    expect(c.messageId).not.toBe(a.messageId);
    expect(there.convert({ sessionUpdate: "agent_message_chunk", messageId: "given", content: { type: "text", text: "x" } })).toMatchObject({ messageId: "given" });
  });

  it("tool_call_content_chunk adds to the call's content (v1 replaces the list); plan_update ↔ plan; state and unknown updates are not passed as v1 updates", () => {
    const back = new V2ToV1Updates();
    back.convert({ sessionUpdate: "tool_call_update", toolCallId: "t", title: "Run", content: [{ type: "content", content: { type: "text", text: "one" } }] } as V2.SessionUpdate);
    const added = back.convert({ sessionUpdate: "tool_call_content_chunk", toolCallId: "t", content: { type: "content", content: { type: "text", text: "two" } } } as V2.SessionUpdate);
    expect(added).toEqual([{ sessionUpdate: "tool_call_update", toolCallId: "t", content: [expect.objectContaining({ content: { type: "text", text: "one" } }), expect.objectContaining({ content: { type: "text", text: "two" } })] }]);
    const entries = [{ content: "x", priority: "high", status: "pending" }] as V1.PlanEntry[];
    const plan = new V1ToV2Updates().convert({ sessionUpdate: "plan", entries });
    expect(plan).toMatchObject({ sessionUpdate: "plan_update", plan: { type: "items", entries } });
    expect(back.convert(plan!)).toEqual([{ sessionUpdate: "plan", entries }]);
    expect(back.convert({ sessionUpdate: "state_update", state: "idle" } as V2.SessionUpdate)).toEqual([]);
    expect(back.convert({ sessionUpdate: "_vendor_thing", x: 1 } as V2.SessionUpdate)).toEqual([]);
    expect(new V1ToV2Updates().convert({ sessionUpdate: "current_mode_update", currentModeId: "ask" })).toBeUndefined();
  });

  it("permission requests: v1 → v2 gets a title and a tool-call subject; a v2 command subject becomes a v1 execute call", () => {
    const options: V1.PermissionOption[] = [{ optionId: "y", name: "Allow", kind: "allow_once" }];
    expect(v2PermissionRequest({ sessionId: "s", toolCall: { toolCallId: "t", title: "Write x" }, options })).toEqual({ sessionId: "s", title: "Write x", subject: { type: "tool_call", toolCall: { toolCallId: "t", title: "Write x" } }, options });
    const v1 = v1PermissionRequest({ sessionId: "s", title: "Run make?", subject: { type: "command", command: "make", cwd: "/w", toolCallId: "c" }, options } as V2.RequestPermissionRequest);
    expect(v1).toEqual({ sessionId: "s", toolCall: { toolCallId: "c", title: "Run make?", kind: "execute", rawInput: { command: "make", cwd: "/w" } }, options });
  });

  it("config options (id ↔ configId), capabilities (booleans → objects), stop reasons", () => {
    const options = [{ id: "model", name: "Model", type: "select", currentValue: "a", options: [{ value: "a", name: "A" }] }] as V1.SessionConfigOption[];
    expect(v2ConfigOptions(options)).toEqual([{ configId: "model", name: "Model", type: "select", currentValue: "a", options: [{ value: "a", name: "A" }] }]);
    expect(v1ConfigOptions(v2ConfigOptions(options))).toEqual(options);
    expect(v2AgentCapabilities({ promptCapabilities: { image: true, audio: false }, mcpCapabilities: { http: true }, sessionCapabilities: { delete: {} } })).toEqual({
      session: { prompt: { image: {} }, mcp: { stdio: {}, http: {} }, delete: {} },
    });
    // The bridged unstable capabilities, both ways (MCP over ACP: mcpCapabilities.acp ↔ session.mcp.acp).
    const v1 = { sessionCapabilities: { fork: {}, title: {}, archive: {}, status: {} }, auth: { logout: {}, status: {} }, providers: {}, mcpCapabilities: { acp: true } };
    const v2 = v2AgentCapabilities(v1 as Parameters<typeof v2AgentCapabilities>[0]);
    expect(v2).toEqual({ session: { prompt: {}, mcp: { stdio: {}, acp: {} }, fork: {}, title: {}, archive: {}, status: {} }, auth: { status: {} }, providers: {} });
    expect(v1AgentCapabilities(v2)).toMatchObject({ sessionCapabilities: { fork: {}, title: {}, archive: {}, status: {} }, auth: { logout: {}, status: {} }, providers: {}, mcpCapabilities: { http: false, sse: false, acp: true } });
    expect(v1AgentCapabilities({ session: {} })).not.toHaveProperty("providers");
    expect(["end_turn", "cancelled", "max_tokens", "_vendor", null].map(v1StopReason)).toEqual(["end_turn", "cancelled", "max_tokens", "end_turn", "end_turn"]);
  });
});
