import { context, trace } from "@opentelemetry/api";

import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { ToolResult } from "../../src/core/index.js";
import { SyncContextManager, deny, newId, setContentCapture } from "../../src/core/index.js";
import { Agent } from "../../src/loop/index.js";
import { ScriptedModel, script } from "../../src/testing/index.js";
import { ToolRegistry, defineTool } from "../../src/tools/index.js";

// The loop's spans in-process (an in-memory SDK provider; the globals are reset after each test).

const echo = defineTool({
  name: "echo",
  description: "echo",
  kind: "read",
  input: z.object({ text: z.string() }),
  execute: async (i): Promise<ToolResult> => ({ text: `echo: ${i.text}`, isError: false }),
});

function tracing(): InMemorySpanExporter {
  const exporter = new InMemorySpanExporter();
  context.setGlobalContextManager(new SyncContextManager());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  return exporter;
}

afterEach(() => {
  setContentCapture(false);
  trace.disable();
  context.disable();
});

async function turn(policy: "allow" | "ask") {
  const model = new ScriptedModel([script.toolCall("echo", { text: "secret-arg" }), script.text("model-output")]);
  const driver = Agent.builder()
    .model(model)
    .tools(new ToolRegistry([echo]))
    .permissions({ evaluate: () => ({ verdict: policy, reason: "test" }) })
    .build()
    .start({ cwd: process.cwd(), sessionId: "s1" });
  driver.submitInput([{ id: newId("item"), role: "user", parts: [{ type: "text", text: "prompt-text" }], createdAt: new Date().toISOString() }]);
  for (;;) {
    const step = await driver.next();
    if (step.type === "finished") return step;
    if (step.interrupt.type === "approval_request") driver.resolveApproval(step.interrupt.request.callId, deny("no"));
  }
}

describe("loop spans", () => {
  it("chat per model call and execute_tool per call, without content by default; a denial is permission_denied", async () => {
    const exporter = tracing();
    await turn("ask");
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name).sort()).toEqual(["chat scripted", "chat scripted", "execute_tool echo"].sort());
    const tool = spans.find((s) => s.name === "execute_tool echo")!;
    expect(tool.attributes).toMatchObject({ "gen_ai.tool.name": "echo", "agentkit.permission.outcome": "deny", "error.type": "permission_denied" });
    expect(JSON.stringify(spans.map((s) => s.attributes))).not.toMatch(/secret-arg|prompt-text|model-output/);
  });

  it("with content capture on: prompt, output and tool arguments are recorded", async () => {
    const exporter = tracing();
    setContentCapture(true);
    await turn("allow");
    const all = JSON.stringify(exporter.getFinishedSpans().map((s) => s.attributes));
    for (const text of ["secret-arg", "prompt-text", "model-output", "echo: secret-arg"]) expect(all).toContain(text);
    expect(exporter.getFinishedSpans().find((s) => s.name.startsWith("execute_tool"))?.attributes["agentkit.permission.outcome"]).toBe("policy_allow");
  });
});
