import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { approve, CancellationController, deny, type Item } from "../../src/core/index.js";
import { Agent, type LoopDriver, type LoopStep } from "../../src/loop/index.js";
import { createDemoModel, demoNotePath, demoStep, type ModelEvent, type ModelRequest, type ModelToolSpec } from "../../src/model/index.js";
import { builtinTools, ToolRegistry } from "../../src/tools/index.js";
import { collect, item, textOf, user } from "./helpers.js";

const toolSpecs: ModelToolSpec[] = ["read_file", "write_file", "edit_file", "shell"].map((name) => ({
  name,
  description: name,
  inputSchema: { type: "object" },
}));
const request = (items: Item[]): ModelRequest => ({ items, tools: toolSpecs });
const callOf = (events: ModelEvent[]) => events.find((e): e is Extract<ModelEvent, { type: "tool_call" }> => e.type === "tool_call");

/** The transcript after the demo's proposed call got `result`. */
function answered(items: Item[], result: { text: string; isError: boolean }): Item[] {
  const events = demoStep(request(items));
  const call = callOf(events);
  if (!call) throw new Error("no call proposed");
  return [
    ...items,
    item("assistant", { type: "text", text: textOf(events) }, { type: "tool_call", callId: call.callId, toolName: call.toolName, input: call.input }),
    item("tool", { type: "tool_result", callId: call.callId, toolName: call.toolName, result }),
  ];
}

describe("demo model, as a function of the transcript", () => {
  it("first turn: a thought, an answer that says it is not an LLM and how to configure one, then write_file", async () => {
    const events = await collect(createDemoModel(), request([user("Summarize my project")]));
    const text = textOf(events);
    expect(textOf(events, "reasoning_delta")).toContain("demo model");
    expect(text).toContain("built-in **demo model**");
    expect(text).toContain("not an LLM");
    expect(text).toContain("--model provider:model");
    expect(text).toContain("AGENTKIT_MODEL");
    expect(text).toContain("ANTHROPIC_API_KEY");
    expect(events.filter((e) => e.type === "text_delta").length).toBeGreaterThan(5);
    expect(events.filter((e) => e.type === "tool_input_delta").length).toBeGreaterThan(1);
    const call = callOf(events);
    expect(call?.toolName).toBe("write_file");
    expect(call?.input).toMatchObject({ path: "agentkit-demo.md" });
    expect((call?.input as { content: string }).content).toContain('- Prompt 1: "Summarize my project"');
    const finish = events.at(-1);
    expect(finish).toMatchObject({ type: "finish", reason: "tool_calls" });
    expect(finish?.type === "finish" && finish.usage && finish.usage.outputTokens > 0 && finish.usage.inputTokens > 0).toBe(true);
  });

  it("is deterministic: the same transcript gives the same events", () => {
    const items = [user("hello")];
    expect(demoStep(request(items))).toEqual(demoStep(request(structuredClone(items))));
  });

  it("after the result: a final answer that reflects it — written, denied with the reason, failed", () => {
    const start = [user("hello")];
    const written = demoStep(request(answered(start, { text: "Wrote agentkit-demo.md", isError: false })));
    expect(textOf(written)).toContain(`Done: I wrote ${demoNotePath}`);
    expect(written.at(-1)).toMatchObject({ type: "finish", reason: "stop" });
    expect(callOf(written)).toBeUndefined();

    const denied = demoStep(request(answered(start, { text: "The user denied this write_file call: not today.", isError: true })));
    expect(textOf(denied)).toContain("The write_file call was denied, so nothing was changed. The reason given: The user denied this write_file call: not today.");

    const failed = demoStep(request(answered(start, { text: "EACCES: permission denied writing", isError: true })));
    expect(textOf(failed)).toMatch(/The write_file call (failed|was denied)/);
    const broken = demoStep(request(answered(start, { text: "disk full", isError: true })));
    expect(textOf(broken)).toContain("The write_file call failed: disk full");
  });

  it("once a previous turn wrote the note, appends with edit_file (old text → new text)", () => {
    const first = answered([user("first prompt")], { text: "ok", isError: false });
    const history = [...first, item("assistant", { type: "text", text: "Done" }), user("second prompt")];
    const events = demoStep(request(history));
    expect(textOf(events)).toContain("(Demo model — a fixed script, not an LLM.)");
    expect(textOf(events)).not.toContain("Hello!");
    expect(callOf(events)).toMatchObject({
      toolName: "edit_file",
      input: { path: demoNotePath, old_text: '- Prompt 1: "first prompt"', new_text: '- Prompt 1: "first prompt"\n- Prompt 2: "second prompt"' },
    });
    // A write that failed does not count: it writes again.
    const failedFirst = answered([user("first prompt")], { text: "nope", isError: true });
    expect(callOf(demoStep(request([...failedFirst, user("again")])))?.toolName).toBe("write_file");
  });

  it('"run" or "shell" in the prompt proposes shell ls -la', () => {
    expect(callOf(demoStep(request([user("Please run the tests")])))).toMatchObject({ toolName: "shell", input: { command: "ls -la" } });
    expect(callOf(demoStep(request([user("open a SHELL")])))?.toolName).toBe("shell");
    expect(callOf(demoStep(request([user("a runner is not a run-word?")])))?.toolName).toBe("shell");
    expect(callOf(demoStep(request([user("rerun nothing")])))?.toolName).toBe("write_file");
  });

  it("without the tools it uses, it answers and stops", () => {
    const events = demoStep({ items: [user("hi")], tools: [] });
    expect(callOf(events)).toBeUndefined();
    expect(textOf(events)).toContain("No file or shell tool is available");
    expect(events.at(-1)).toMatchObject({ type: "finish", reason: "stop" });
  });

  it("honours the abort signal mid-stream", async () => {
    const controller = new AbortController();
    const seen: ModelEvent[] = [];
    await expect(
      (async () => {
        for await (const event of createDemoModel().stream(request([user("hi")]), controller.signal)) {
          seen.push(event);
          if (seen.length === 2) controller.abort();
        }
      })(),
    ).rejects.toMatchObject({ name: "AbortError" });
    expect(seen).toHaveLength(2);
  });
});

describe("demo model through the real loop and built-in tools", () => {
  let dir = "";
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function turn(driver: LoopDriver, prompt: string, decide: (step: LoopStep) => void): Promise<void> {
    driver.submitInput([user(prompt)]);
    for (;;) {
      const step = await driver.next();
      if (step.type === "finished") return;
      if (step.interrupt.type === "approval_request") decide(step);
      else if (step.interrupt.type === "awaiting_input") throw new Error("unexpected awaiting_input");
    }
  }

  it("writes the note, appends to it with a real edit, and reports a denial", async () => {
    dir = await mkdtemp(join(tmpdir(), "agentkit-demo-"));
    const committed: Item[] = [];
    const driver = Agent.builder()
      .model(createDemoModel())
      .tools(new ToolRegistry(builtinTools()))
      .transcriptObserver({ handleItem: (e) => void committed.push(e.item) })
      .cancellation(new CancellationController().handle())
      .build()
      .start({ cwd: dir, sessionId: "demo-test" });
    const approveIt = (step: LoopStep): void => {
      if (step.type === "interrupt" && step.interrupt.type === "approval_request") driver.resolveApproval(step.interrupt.request.callId, approve());
    };

    await turn(driver, "hello demo", approveIt);
    const note = join(dir, demoNotePath);
    expect(await readFile(note, "utf8")).toContain('- Prompt 1: "hello demo"');
    expect(committed.at(-1)?.parts).toEqual([expect.objectContaining({ type: "text", text: expect.stringContaining("Done: I wrote") })]);

    await turn(driver, "second prompt", approveIt);
    const content = await readFile(note, "utf8");
    expect(content).toContain('- Prompt 1: "hello demo"\n- Prompt 2: "second prompt"\n');
    expect(committed.at(-1)?.parts[0]).toMatchObject({ text: expect.stringContaining("appended your prompt") });

    await turn(driver, "third prompt", (step) => {
      if (step.type === "interrupt" && step.interrupt.type === "approval_request") driver.resolveApproval(step.interrupt.request.callId, deny("not today"));
    });
    expect(await readFile(note, "utf8")).toBe(content);
    const last = committed.at(-1)?.parts[0];
    expect(last).toMatchObject({ type: "text", text: expect.stringContaining("was denied, so nothing was changed") });
    expect(JSON.stringify(last)).toContain("not today");

    await writeFile(join(dir, "visible.txt"), "x");
    await turn(driver, "run something", approveIt);
    expect(committed.at(-1)?.parts[0]).toMatchObject({ text: expect.stringContaining("visible.txt") });
  });
});
