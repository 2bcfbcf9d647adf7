import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { OutputBudget } from "../../../src/acp/agent/output-budget.js";
import { UpdateQueue } from "../../../src/acp/agent/update-queue.js";
import { createStderrLogger } from "../../../src/core/index.js";

const text = (t: string, messageId = "m1", kind: "agent_message_chunk" | "agent_thought_chunk" = "agent_message_chunk"): SessionUpdate => ({
  sessionUpdate: kind,
  content: { type: "text", text: t },
  messageId,
});
const toolCall: SessionUpdate = { sessionUpdate: "tool_call", toolCallId: "c1", title: "read", status: "pending" };

/** A sink whose writes complete only when the test says so (a busy output). */
function gatedSink() {
  const sent: SessionUpdate[] = [];
  let open: (() => void) | undefined;
  let gate = new Promise<void>((resolve) => (open = resolve));
  let arrived: (() => void) | undefined;
  return {
    sent,
    sink: async (update: SessionUpdate): Promise<void> => {
      sent.push(update);
      arrived?.();
      await gate;
    },
    release(): void {
      open?.();
      gate = Promise.resolve();
    },
    next: () => new Promise<void>((resolve) => (arrived = resolve)),
  };
}

const logger = createStderrLogger("silent");

describe("UpdateQueue coalescing", () => {
  it("off by default: one update per push, in order", async () => {
    const out = gatedSink();
    out.release();
    const queue = new UpdateQueue(out.sink, logger);
    for (const t of ["a", "b", "c"]) queue.push(text(t));
    await queue.flushed();
    expect(out.sent).toEqual([text("a"), text("b"), text("c")]);
  });

  it("merges chunks of one message while the output is busy; other updates split runs and keep their place", async () => {
    const out = gatedSink();
    const queue = new UpdateQueue(out.sink, logger, { coalesceMs: 60_000 });
    queue.push(toolCall); // starts sending at once and stays in flight
    for (const t of ["Hel", "lo", " wor", "ld"]) queue.push(text(t));
    queue.push(text("hmm", "m1", "agent_thought_chunk"));
    queue.push(text("!", "m1"));
    queue.push(text("next", "m2"));
    queue.push({ ...toolCall, toolCallId: "c2" });
    out.release();
    await queue.flushed();
    expect(out.sent).toEqual([
      toolCall,
      text("Hello world"),
      text("hmm", "m1", "agent_thought_chunk"),
      text("!"),
      text("next", "m2"),
      { ...toolCall, toolCallId: "c2" },
    ]);
  });

  it("holds chunks on an idle output for the window at most; a non-text update or flushed() sends them at once", async () => {
    const out = gatedSink();
    out.release();
    const windowed = new UpdateQueue(out.sink, logger, { coalesceMs: 40 });
    const started = performance.now();
    const sent = out.next();
    windowed.push(text("a"));
    windowed.push(text("b"));
    await Promise.resolve();
    expect(out.sent).toEqual([]); // held
    await sent;
    expect(performance.now() - started).toBeGreaterThanOrEqual(35);
    expect(out.sent).toEqual([text("ab")]);

    const held = new UpdateQueue(out.sink, logger, { coalesceMs: 60_000 });
    held.push(text("x"));
    held.push(toolCall); // never waits behind the window
    await held.flushed();
    expect(out.sent.slice(1)).toEqual([text("x"), toolCall]);

    held.push(text("y"));
    await held.flushed(); // the turn's end (or a permission request) does not wait for the window either
    expect(out.sent.at(-1)).toEqual(text("y"));
  });
});

describe("UpdateQueue output budget", () => {
  it("reports a backlog once the connection's budget is queued, until the client takes it; a client that keeps up is not held by the instance budget", async () => {
    const budget = new OutputBudget({ connectionBytes: 10_000, instanceBytes: 300_000 });
    const slow = gatedSink();
    const stalled = new UpdateQueue(slow.sink, logger, { account: budget.account() });
    stalled.push(text("x".repeat(6_000)));
    expect(stalled.backlog()).toBeUndefined();
    stalled.push(text("x".repeat(6_000)));
    const waiting = stalled.backlog();
    expect(waiting).toBeInstanceOf(Promise);
    let settled = false;
    void waiting!.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    slow.release();
    await waiting;
    await stalled.flushed();
    expect(budget.usedBytes).toBe(0);

    // The instance budget spent: a connection holding over 256 KiB waits (under its own 1 MiB); one under it goes on.
    const shared = new OutputBudget({ connectionBytes: 1024 * 1024, instanceBytes: 300_000 });
    const behind = shared.account();
    behind.add(300_000);
    const keepsUp = shared.account();
    keepsUp.add(1_000);
    expect([behind.full, keepsUp.full]).toEqual([true, false]);
    expect(keepsUp.room()).toBeUndefined();
    const resumed = behind.room()!;
    behind.release(200_000);
    await resumed;
    expect([shared.spent, behind.full]).toEqual([false, false]);
  });
});
