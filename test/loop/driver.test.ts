import { describe, expect, it } from "vitest";
import { until } from "../support/until.js";
import { z } from "zod";
import type { AgentEvent, Item, ToolResult } from "../../src/core/index.js";
import { CancellationController, approve, approveWithPatchedInput, deny, newId } from "../../src/core/index.js";
import type { LoopDriver, LoopStep } from "../../src/loop/index.js";
import { Agent } from "../../src/loop/index.js";
import { ModelError } from "../../src/model/types.js";
import type { PermissionPolicy } from "../../src/tools/index.js";
import { ToolRegistry, defineTool } from "../../src/tools/index.js";
import { ScriptedModel, script } from "../../src/testing/index.js";

const user = (text: string): Item => ({ id: newId("item"), role: "user", parts: [{ type: "text", text }], createdAt: new Date().toISOString() });

const echo = defineTool({
  name: "echo",
  description: "echo text back",
  kind: "read",
  input: z.object({ text: z.string() }),
  title: (i) => `Echo ${i.text}`,
  execute: async (i): Promise<ToolResult> => ({ text: `echo: ${i.text}`, isError: false }),
});

/** A tool that runs until cancelled, reporting that it started. */
function blockingTool(started: () => void) {
  return defineTool({
    name: "wait",
    description: "waits until cancelled",
    kind: "execute",
    input: z.object({}),
    execute: (_i, ctx) =>
      new Promise<ToolResult>((resolve) => {
        started();
        ctx.signal.addEventListener("abort", () => resolve({ text: "stopped", isError: true }), { once: true });
      }),
  });
}

const allowAll: PermissionPolicy = { evaluate: () => ({ verdict: "allow", reason: "test" }) };
const askAll: PermissionPolicy = { evaluate: () => ({ verdict: "ask", reason: "edits ask" }) };

interface Harness {
  driver: LoopDriver;
  events: AgentEvent[];
  committed: Item[];
  controller: CancellationController;
}

function harness(model: ScriptedModel, options: { tools?: ToolRegistry; policy?: PermissionPolicy; maxTurns?: number } = {}): Harness {
  const events: AgentEvent[] = [];
  const committed: Item[] = [];
  const controller = new CancellationController();
  const builder = Agent.builder()
    .model(model)
    .tools(options.tools ?? new ToolRegistry([echo]))
    .permissions(options.policy ?? allowAll)
    .observer({ handleEvent: (e) => events.push(e.event) })
    .transcriptObserver({ handleItem: (e) => void committed.push(e.item) })
    .cancellation(controller.handle());
  if (options.maxTurns) builder.maxTurns(options.maxTurns);
  const driver = builder.build().start({ cwd: process.cwd(), sessionId: "s1" });
  return { driver, events, committed, controller };
}

/** Drives until finished, answering interrupts with `onApproval` and continuing past tool results. */
async function drive(driver: LoopDriver, onApproval?: (step: LoopStep) => void): Promise<LoopStep & { type: "finished" }> {
  for (;;) {
    const step = await driver.next();
    if (step.type === "finished") return step;
    if (step.interrupt.type === "approval_request") {
      if (!onApproval) throw new Error("unexpected approval request");
      onApproval(step);
    } else if (step.interrupt.type === "awaiting_input") throw new Error("unexpected awaiting_input");
  }
}

describe("LoopDriver", () => {
  it("streams reasoning and text as parts and finishes completed", async () => {
    const model = new ScriptedModel([script.text("Hello there", { reasoning: "think first", chunks: 3 })]);
    const { driver, events, committed } = harness(model);
    driver.submitInput([user("hi")]);
    const done = await drive(driver);
    expect(done.result.finishReason).toBe("completed");
    const deltas = events.flatMap((e) => (e.type === "content_delta" ? [e.delta] : []));
    const kinds = deltas.flatMap((d) => (d.type === "begin_part" ? [d.kind] : []));
    expect(kinds).toEqual(["reasoning", "text"]);
    const text = deltas.flatMap((d) => (d.type === "append_text" ? [d.text] : [])).join("");
    expect(text).toBe("think firstHello there");
    expect(deltas.filter((d) => d.type === "commit_part")).toHaveLength(2);
    expect(committed.map((i) => i.role)).toEqual(["user", "assistant"]);
    expect(committed[1]!.parts).toEqual([
      { type: "reasoning", text: "think first" },
      { type: "text", text: "Hello there" },
    ]);
    expect(events.at(-1)).toMatchObject({ type: "turn_finished" });
    expect(await driver.next()).toEqual({ type: "interrupt", interrupt: { type: "awaiting_input" } });
  });

  it("runs an allowed tool, yields after_tool_result, and feeds the result to the next model call", async () => {
    const model = new ScriptedModel([script.toolCall("echo", { text: "x" }, { callId: "c1" }), script.text("done")]);
    const { driver, events } = harness(model);
    driver.submitInput([user("use echo")]);
    const step1 = await driver.next();
    expect(step1).toMatchObject({ type: "interrupt", interrupt: { type: "after_tool_result" } });
    const done = await drive(driver);
    expect(done.result.finishReason).toBe("completed");
    const types = events.map((e) => e.type);
    expect(types).toContain("tool_call_requested");
    expect(types.indexOf("tool_execution_started")).toBeLessThan(types.indexOf("tool_result"));
    const requested = events.find((e) => e.type === "tool_call_requested");
    expect(requested).toMatchObject({ callId: "c1", title: "Echo x", kind: "read" });
    const second = model.requests[1]!;
    const toolItem = second.items.find((i) => i.role === "tool");
    expect(toolItem?.parts[0]).toMatchObject({ type: "tool_result", callId: "c1", result: { text: "echo: x", isError: false } });
  });

  it("asks for approval; a denial becomes an error result the model sees, and the turn continues", async () => {
    const model = new ScriptedModel([script.toolCall("echo", { text: "x" }, { callId: "c1" }), script.text("ok, skipped")]);
    const { driver, events } = harness(model, { policy: askAll });
    driver.submitInput([user("go")]);
    const step = await driver.next();
    expect(step).toMatchObject({ type: "interrupt", interrupt: { type: "approval_request", request: { callId: "c1", reason: "edits ask" } } });
    // Asking again without a decision re-issues the same interrupt.
    expect(await driver.next()).toEqual(step);
    driver.resolveApproval("c1", deny("not now"));
    const done = await drive(driver);
    expect(done.result.finishReason).toBe("completed");
    expect(events.some((e) => e.type === "tool_execution_started")).toBe(false);
    const result = model.requests[1]!.items.find((i) => i.role === "tool")!.parts[0];
    expect(result).toMatchObject({ type: "tool_result", result: { isError: true } });
    expect(JSON.stringify(result)).toContain("not now");
  });

  it("approves with patched input, re-validating it", async () => {
    const model = new ScriptedModel([script.toolCall("echo", { text: "orig" }, { callId: "c1" }), script.text("fine")]);
    const { driver } = harness(model, { policy: askAll });
    driver.submitInput([user("go")]);
    await driver.next();
    driver.resolveApproval("c1", approveWithPatchedInput({ text: "patched" }));
    await drive(driver);
    const result = model.requests[1]!.items.find((i) => i.role === "tool")!.parts[0];
    expect(result).toMatchObject({ result: { text: "echo: patched" } });
  });

  it("rejects resolving an approval that is not pending", async () => {
    const { driver } = harness(new ScriptedModel([]));
    expect(() => driver.resolveApproval("nope", approve())).toThrow(/no approval is pending/);
  });

  it("turns unknown tools and invalid input into error results", async () => {
    const model = new ScriptedModel([
      script.toolCalls([
        { toolName: "nope", input: {}, callId: "a" },
        { toolName: "echo", input: { text: 5 }, callId: "b" },
      ]),
      script.text("recovered"),
    ]);
    const { driver } = harness(model);
    driver.submitInput([user("go")]);
    const done = await drive(driver);
    expect(done.result.finishReason).toBe("completed");
    const parts = model.requests[1]!.items.find((i) => i.role === "tool")!.parts;
    expect(parts).toHaveLength(2);
    expect(JSON.stringify(parts[0])).toContain('unknown tool \\"nope\\"');
    expect(JSON.stringify(parts[1])).toContain("invalid input for echo");
  });

  it("cancels during the model stream within 200 ms, keeps the partial text, and the next turn works", async () => {
    const model = new ScriptedModel([script.hang([{ type: "text_delta", text: "partial" }]), script.text("second")]);
    const { driver, events, controller } = harness(model);
    driver.submitInput([user("go")]);
    const pending = driver.next();
    await until(() => events.some((e) => e.type === "content_delta" && e.delta.type === "append_text"));
    const t0 = performance.now();
    controller.interrupt();
    const step = await pending;
    expect(performance.now() - t0).toBeLessThan(200);
    expect(step).toMatchObject({ type: "finished", result: { finishReason: "cancelled" } });
    expect(driver.transcript.at(-1)!.parts).toEqual([{ type: "text", text: "partial" }]);
    driver.submitInput([user("again")]);
    expect((await drive(driver)).result.finishReason).toBe("completed");
  });

  it("cancels a running tool; its error result keeps the transcript valid", async () => {
    let started = false;
    const tools = new ToolRegistry([blockingTool(() => (started = true))]);
    const model = new ScriptedModel([script.toolCall("wait", {}, { callId: "w" }), script.text("after")]);
    const { driver, controller } = harness(model, { tools });
    driver.submitInput([user("go")]);
    const pending = driver.next();
    await until(() => started);
    const t0 = performance.now();
    controller.interrupt();
    const step = await pending;
    expect(performance.now() - t0).toBeLessThan(200);
    expect(step).toMatchObject({ type: "finished", result: { finishReason: "cancelled" } });
    const last = driver.transcript.at(-1)!;
    expect(last.role).toBe("tool");
    expect(last.parts[0]).toMatchObject({ callId: "w", result: { isError: true } });
    driver.submitInput([user("again")]);
    expect((await drive(driver)).result.finishReason).toBe("completed");
  });

  it("cancels during an approval wait: pending approvals get error results, then cancelled", async () => {
    const model = new ScriptedModel([script.toolCall("echo", { text: "x" }, { callId: "c1" }), script.text("next turn")]);
    const { driver, controller } = harness(model, { policy: askAll });
    driver.submitInput([user("go")]);
    expect((await driver.next()).type).toBe("interrupt");
    controller.interrupt();
    await driver.cancelPendingApprovals();
    const step = await driver.next();
    expect(step).toMatchObject({ type: "finished", result: { finishReason: "cancelled" } });
    expect(driver.transcript.at(-1)!.parts[0]).toMatchObject({ callId: "c1", result: { isError: true } });
    driver.submitInput([user("again")]);
    expect((await drive(driver)).result.finishReason).toBe("completed");
    // The second model call saw a complete transcript: the call and its result.
    const items = model.requests[1]!.items;
    expect(items.map((i) => i.role)).toEqual(["user", "assistant", "tool", "user"]);
  });

  it("a provider failure finishes the turn as error with the message, and emits run_failed", async () => {
    const model = new ScriptedModel([
      () => {
        throw new ModelError("auth", "anthropic rejected the API key (401): check ANTHROPIC_API_KEY", { status: 401 });
      },
    ]);
    const { driver, events } = harness(model);
    driver.submitInput([user("go")]);
    const done = await drive(driver);
    expect(done.result).toMatchObject({ finishReason: "error", error: expect.stringContaining("ANTHROPIC_API_KEY") });
    expect(events.some((e) => e.type === "run_failed")).toBe(true);
  });

  it("stops a runaway tool loop at maxTurns", async () => {
    const model = new ScriptedModel([script.toolCall("echo", { text: "again" })], { onExhausted: "repeat-last" });
    const { driver } = harness(model, { maxTurns: 3 });
    driver.submitInput([user("loop")]);
    const done = await drive(driver);
    expect(done.result.finishReason).toBe("max_turns");
    expect(model.callCount).toBe(3);
  });

  it("maps model finish reasons (length → max_tokens, content_filter → blocked)", async () => {
    const model = new ScriptedModel([
      [{ type: "text_delta", text: "cut" }, { type: "finish", reason: "length" }],
      [{ type: "finish", reason: "content_filter" }],
    ]);
    const { driver } = harness(model);
    driver.submitInput([user("a")]);
    expect((await drive(driver)).result.finishReason).toBe("max_tokens");
    driver.submitInput([user("b")]);
    expect((await drive(driver)).result.finishReason).toBe("blocked");
  });

  it("commits input submitted after a tool result before the next model call (interjection)", async () => {
    const model = new ScriptedModel([script.toolCall("echo", { text: "x" }), script.text("saw it")]);
    const { driver } = harness(model);
    driver.submitInput([user("first")]);
    const step = await driver.next();
    expect(step).toMatchObject({ interrupt: { type: "after_tool_result" } });
    driver.submitInput([user("also this")]);
    await drive(driver);
    expect(model.requests[1]!.items.map((i) => i.role)).toEqual(["user", "assistant", "tool", "user"]);
  });

  it("refuses a concurrent next()", async () => {
    const model = new ScriptedModel([script.hang()]);
    const { driver, controller } = harness(model);
    driver.submitInput([user("go")]);
    const first = driver.next();
    await expect(driver.next()).rejects.toThrow(/already running/);
    controller.interrupt();
    await first;
  });

  it("snapshots and restarts from a snapshot with the same transcript", async () => {
    const model = new ScriptedModel([script.text("one"), script.text("two")]);
    const { driver } = harness(model);
    driver.submitInput([user("first")]);
    await drive(driver);
    const snap = JSON.parse(JSON.stringify(driver.snapshot()));
    const restored = Agent.builder().model(model).permissions(allowAll).build().start({ snapshot: snap });
    expect(restored.sessionId).toBe("s1");
    restored.submitInput([user("second")]);
    await drive(restored);
    expect(model.requests[1]!.items.map((i) => i.role)).toEqual(["user", "assistant", "user"]);
  });

  it("reports usage with the context window when the model knows it", async () => {
    const model = new ScriptedModel([script.text("x")], { capabilities: { contextWindow: 1000 } });
    const { driver, events } = harness(model);
    driver.submitInput([user("go")]);
    const done = await drive(driver);
    expect(events.find((e) => e.type === "usage")).toMatchObject({ contextWindow: 1000, usage: { totalTokens: 15 } });
    expect(done.result.usage).toMatchObject({ totalTokens: 15 });
  });
});
