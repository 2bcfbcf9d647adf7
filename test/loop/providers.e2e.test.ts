// The loop end to end against loopback mock providers speaking the real wire formats
// (OpenAI chat-completions SSE and Anthropic Messages SSE), with the real built-in tools.
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { until } from "../support/until.js";
import type { AgentEvent, Item } from "../../src/core/index.js";
import { CancellationController, approve, deny, newId } from "../../src/core/index.js";
import type { LoopDriver, LoopStep } from "../../src/loop/index.js";
import { Agent } from "../../src/loop/index.js";
import { createModelAdapter } from "../../src/model/index.js";
import type { PermissionPolicy } from "../../src/tools/index.js";
import { McpToolSource, ToolRegistry, builtinTools, defaultPermissionPolicy } from "../../src/tools/index.js";
import type { MockProviderServer } from "../../src/testing/index.js";
import { mcpFixtureStdioCommand, startMockAnthropic, startMockOpenAI } from "../../src/testing/index.js";

const user = (text: string): Item => ({ id: newId("item"), role: "user", parts: [{ type: "text", text }], createdAt: new Date().toISOString() });
const allowAll: PermissionPolicy = { evaluate: () => ({ verdict: "allow", reason: "test" }) };

const formats = [
  {
    name: "OpenAI chat-completions",
    start: startMockOpenAI,
    adapter: (baseUrl: string) => createModelAdapter({ spec: "openai-compatible:mock", baseUrl, env: {}, retry: { maxRetries: 0 } }),
  },
  {
    name: "Anthropic Messages",
    start: startMockAnthropic,
    adapter: (baseUrl: string) =>
      createModelAdapter({ spec: "anthropic:claude-sonnet-4-5", baseUrl, apiKey: "test-key", env: {}, retry: { maxRetries: 0 } }),
  },
] as const;

describe.each(formats)("loop over $name", (format) => {
  let mock: MockProviderServer;
  let workspace: string;
  let events: AgentEvent[];
  let controller: CancellationController;

  beforeEach(async () => {
    mock = await format.start();
    workspace = realpathSync(mkdtempSync(join(tmpdir(), "agentkit-loop-")));
    events = [];
    controller = new CancellationController();
  });
  afterEach(async () => {
    await mock.close();
    rmSync(workspace, { recursive: true, force: true });
  });

  function start(policy: PermissionPolicy = defaultPermissionPolicy(), tools = new ToolRegistry(builtinTools())): LoopDriver {
    return Agent.builder()
      .model(format.adapter(mock.baseUrl))
      .tools(tools)
      .permissions(policy)
      .observer({ handleEvent: (e) => events.push(e.event) })
      .cancellation(controller.handle())
      .build()
      .start({ cwd: workspace });
  }

  async function finish(driver: LoopDriver, onApproval?: (s: LoopStep & { type: "interrupt" }) => void): Promise<LoopStep & { type: "finished" }> {
    for (;;) {
      const step = await driver.next();
      if (step.type === "finished") return step;
      if (step.interrupt.type === "approval_request") onApproval!(step);
    }
  }

  it("streams reasoning and text and reports usage", async () => {
    mock.push({ reasoning: "Thinking it over.", text: "Hello from the mock." });
    const driver = start();
    driver.submitInput([user("hi")]);
    const done = await finish(driver);
    expect(done.result.finishReason).toBe("completed");
    const kinds = events.flatMap((e) => (e.type === "content_delta" && e.delta.type === "begin_part" ? [e.delta.kind] : []));
    expect(kinds).toEqual(["reasoning", "text"]);
    const text = events.flatMap((e) => (e.type === "content_delta" && e.delta.type === "append_text" ? [e.delta.text] : [])).join("");
    expect(text).toBe("Thinking it over.Hello from the mock.");
    expect(done.result.usage).toMatchObject({ inputTokens: 42, outputTokens: 17 });
  });

  it("tool call → approval → execution → second model call → answer", async () => {
    mock.push({ text: "Writing it.", toolCalls: [{ name: "write_file", input: { path: "note.txt", content: "hello" } }] }, { text: "Done." });
    const driver = start();
    driver.submitInput([user("write a note")]);
    let asked = 0;
    const done = await finish(driver, (s) => {
      if (s.interrupt.type !== "approval_request") return;
      asked += 1;
      expect(s.interrupt.request.toolName).toBe("write_file");
      driver.resolveApproval(s.interrupt.request.callId, approve());
    });
    expect(asked).toBe(1);
    expect(done.result.finishReason).toBe("completed");
    expect(readFileSync(join(workspace, "note.txt"), "utf8")).toBe("hello");
    expect(mock.requests).toHaveLength(2);
    const second = JSON.stringify(mock.requests[1]!.body);
    expect(second).toContain("write_file");
    expect(second).toMatch(/note\.txt/);
    const result = events.find((e) => e.type === "tool_result");
    expect(result).toMatchObject({ result: { isError: false, diffs: [{ oldText: null, newText: "hello" }] } });
  });

  it("a denied call becomes an error result the model reads, and it continues", async () => {
    mock.push({ toolCalls: [{ name: "shell", input: { command: "rm -rf build" } }] }, { text: "Understood, I will not." });
    const driver = start();
    driver.submitInput([user("clean up")]);
    const done = await finish(driver, (s) => {
      if (s.interrupt.type === "approval_request") driver.resolveApproval(s.interrupt.request.callId, deny("not on my machine"));
    });
    expect(done.result.finishReason).toBe("completed");
    expect(JSON.stringify(mock.requests[1]!.body)).toContain("not on my machine");
    expect(events.some((e) => e.type === "tool_execution_started")).toBe(false);
  });

  it("cancel during the model stream → cancelled within 200 ms; the next turn works", async () => {
    mock.push({ text: "x".repeat(4000), chunkSize: 4, slow: 20 });
    const driver = start();
    driver.submitInput([user("talk slowly")]);
    const pending = driver.next();
    await until(() => events.some((e) => e.type === "content_delta" && e.delta.type === "append_text"));
    const t0 = performance.now();
    controller.interrupt();
    const step = await pending;
    expect(performance.now() - t0).toBeLessThan(200);
    expect(step).toMatchObject({ type: "finished", result: { finishReason: "cancelled" } });
    expect(await mock.responseEnd(0)).toBe("client_disconnected");
    mock.push({ text: "Back again." });
    driver.submitInput([user("again")]);
    expect((await finish(driver)).result.finishReason).toBe("completed");
  });

  it("cancel during a running shell command → cancelled within 200 ms; the next turn works", async () => {
    mock.push({ toolCalls: [{ name: "shell", input: { command: "sleep 30" } }] });
    const driver = start(allowAll);
    driver.submitInput([user("wait")]);
    const pending = driver.next();
    await until(() => events.some((e) => e.type === "tool_execution_started"));
    const t0 = performance.now();
    controller.interrupt();
    const step = await pending;
    expect(performance.now() - t0).toBeLessThan(200);
    expect(step).toMatchObject({ type: "finished", result: { finishReason: "cancelled" } });
    mock.push({ text: "ok" });
    driver.submitInput([user("again")]);
    expect((await finish(driver)).result.finishReason).toBe("completed");
    // The provider saw a valid transcript: the shell call answered by an error result.
    expect(JSON.stringify(mock.requests[1]!.body)).toMatch(/cancel/i);
  });

  it("cancel during an approval wait → cancelled within 200 ms; the next turn works", async () => {
    mock.push({ toolCalls: [{ name: "write_file", input: { path: "x.txt", content: "x" } }] });
    const driver = start();
    driver.submitInput([user("write")]);
    const step = await driver.next();
    expect(step).toMatchObject({ interrupt: { type: "approval_request" } });
    // A host races its approval UI against the session's cancellation, as the ACP runtime does.
    const handle = controller.handle();
    const generation = handle.generation();
    const neverAnswered = new Promise<"answered">(() => {});
    const t0 = performance.now();
    setImmediate(() => controller.interrupt());
    const winner = await Promise.race([neverAnswered, handle.cancelledSince(generation).then(() => "cancelled" as const)]);
    expect(winner).toBe("cancelled");
    await driver.cancelPendingApprovals();
    const done = await driver.next();
    expect(performance.now() - t0).toBeLessThan(200);
    expect(done).toMatchObject({ type: "finished", result: { finishReason: "cancelled" } });
    expect(existsSync(join(workspace, "x.txt"))).toBe(false);
    mock.push({ text: "ok" });
    driver.submitInput([user("again")]);
    expect((await finish(driver)).result.finishReason).toBe("completed");
  });

  it("a provider 500 ends the turn as error with a clear message", async () => {
    mock.push({ status: 500, body: "upstream exploded" });
    const driver = start();
    driver.submitInput([user("hi")]);
    const done = await finish(driver);
    expect(done.result.finishReason).toBe("error");
    expect(done.result.error).toMatch(/500/);
    expect(events.some((e) => e.type === "run_failed")).toBe(true);
  });

  it("a malformed stream ends the turn as error, not a hang", async () => {
    mock.push({ malformed: true });
    const driver = start();
    driver.submitInput([user("hi")]);
    const done = await finish(driver);
    expect(done.result.finishReason).toBe("error");
    expect(done.result.error).toBeTruthy();
  });
});

describe("loop with an MCP stdio tool", () => {
  it("lists and calls a tool from an MCP server end to end", async () => {
    const mock = await startMockOpenAI();
    const fixture = mcpFixtureStdioCommand();
    const source = await McpToolSource.connect([{ name: "fixture", transport: "stdio", ...fixture }]);
    try {
      expect(source.failures).toEqual([]);
      const echo = source.tools.find((t) => t.name === "fixture__echo");
      expect(echo).toBeDefined();
      mock.push({ toolCalls: [{ name: "fixture__echo", input: { text: "through MCP" } }] }, { text: "The server echoed it." });
      const driver = Agent.builder()
        .model(createModelAdapter({ spec: "openai-compatible:mock", baseUrl: mock.baseUrl, env: {}, retry: { maxRetries: 0 } }))
        .tools(new ToolRegistry(source.tools))
        .permissions(allowAll)
        .build()
        .start({ cwd: process.cwd() });
      driver.submitInput([user("echo via mcp")]);
      let step = await driver.next();
      while (step.type !== "finished") step = await driver.next();
      expect(step.result.finishReason).toBe("completed");
      const firstRequestTools = JSON.stringify(mock.requests[0]!.body.tools);
      expect(firstRequestTools).toContain("fixture__echo");
      expect(JSON.stringify(mock.requests[1]!.body)).toContain("through MCP");
    } finally {
      await source.close();
      await mock.close();
    }
  });
});
