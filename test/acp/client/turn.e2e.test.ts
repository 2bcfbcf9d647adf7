import { describe, expect, it } from "vitest";
import type { AcpSessionEvent } from "../../../src/acp/client/index.js";
import { allowAll, startClient, startSession } from "./helpers.js";

async function collect(stream: AsyncIterable<AcpSessionEvent>): Promise<AcpSessionEvent[]> {
  const events: AcpSessionEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe("AcpSession over stdio: a full turn", () => {
  it("streams message and thought chunks and usage, and prompt() collects them", async () => {
    const session = await startSession();
    const events = await collect(session.stream("hello"));
    const types = events.map((e) => e.type);
    expect(types.filter((t) => t === "message_chunk")).toHaveLength(3);
    expect(types).toContain("thought_chunk");
    expect(types).toContain("usage");
    expect(types.at(-1)).toBe("done");
    const done = events.at(-1);
    if (done?.type !== "done") throw new Error("no done event");
    expect(done.stopReason).toBe("end_turn");
    expect(done.result.text).toBe("Hello, world");
    expect(done.result.thoughts).toBe("thinking about greetings");
    expect(done.result.usage).toEqual({ used: 1234, size: 200000, cost: { amount: 0.01, currency: "USD" } });

    const again = await session.prompt("hello");
    expect(again).toMatchObject({ stopReason: "end_turn", text: "Hello, world", toolCalls: [], permissions: [] });
  });

  it("reports a tool call with its permission, updates with diff content, and a plan", async () => {
    const session = await startSession([], allowAll());
    const events = await collect(session.stream("edit /tmp/fixture-notes.txt"));
    const types = events.map((e) => e.type);
    expect(types).toEqual(
      expect.arrayContaining(["plan", "tool_call", "permission_requested", "permission_answered", "tool_call_update", "done"]),
    );
    expect(types.indexOf("tool_call")).toBeLessThan(types.indexOf("permission_requested"));
    expect(types.indexOf("permission_requested")).toBeLessThan(types.indexOf("permission_answered"));
    const completed = events.find((e) => e.type === "tool_call_update" && e.toolCall.status === "completed");
    if (completed?.type !== "tool_call_update") throw new Error("no completed update");
    expect(completed.diffs).toEqual([{ type: "diff", path: "/tmp/fixture-notes.txt", oldText: "old line\n", newText: "new line\n" }]);
    expect(completed.toolCall).toMatchObject({ title: "Edit /tmp/fixture-notes.txt", kind: "edit", status: "completed", rawOutput: { ok: true } });
    const plans = events.filter((e) => e.type === "plan");
    expect(plans.at(-1)).toMatchObject({ entries: [{ status: "completed" }, { status: "completed" }] });
    const done = events.at(-1);
    if (done?.type !== "done") throw new Error("no done");
    expect(done.result.toolCalls).toHaveLength(1);
    expect(done.result.toolCalls[0]).toMatchObject({ toolCallId: completed.toolCall.toolCallId, status: "completed" });
    expect(done.result.permissions).toEqual([expect.objectContaining({ decision: "allow", optionKind: "allow_once", outcome: { outcome: "selected", optionId: "opt-allow-once" } })]);
    expect(done.result.text).toBe("permission allow_once");
  });

  it("passes other stop reasons through", async () => {
    const session = await startSession();
    expect((await session.prompt("refuse")).stopReason).toBe("refusal");
    expect((await session.prompt("max")).stopReason).toBe("max_tokens");
  });

  it("delivers updates that arrive after the prompt's answer to the session listeners", async () => {
    const session = await startSession();
    const late = new Promise<string>((resolve) => {
      session.onEvent((e) => {
        if (e.type === "message_chunk" && e.text === "late") resolve(e.text);
      });
    });
    const result = await session.prompt("late");
    expect(result.text).toBe("on time");
    expect(await late).toBe("late");
  });

  it("buffers updates sent before the session/new answer and delivers them to the session", async () => {
    const client = await startClient(["--early-update"]);
    const early: AcpSessionEvent[] = [];
    const session = await client.newSession({ onEvent: (e) => early.push(e) });
    expect(early.map((e) => e.type)).toEqual(["commands", "message_chunk"]);
    expect(session.availableCommands).toEqual([{ name: "early", description: "sent before the session/new answer" }]);
    // The listener stays attached for the session's life.
    const result = await session.prompt("hello");
    expect(result.text).toBe("Hello, world");
    expect(early.filter((e) => e.type === "message_chunk")).toHaveLength(4);
  });

  it("survives an agent that writes garbage to stdout", async () => {
    const session = await startSession(["--garbage"]);
    const result = await session.prompt("hello");
    expect(result).toMatchObject({ stopReason: "end_turn", text: "Hello, world" });
    expect((await session.prompt("hello")).text).toBe("Hello, world");
  });

  it("refuses a second prompt while one is running", async () => {
    const session = await startSession();
    const first = session.prompt("slow");
    await expect(session.prompt("hello")).rejects.toThrow(/already running/);
    await session.cancel();
    expect((await first).stopReason).toBe("cancelled");
  });
});
