/**
 * An ACP agent with a tool of your own, served on stdio — what an editor (or `prompt`) launches.
 *
 * Run it from a checkout (after `npm ci`), driven by our own client:
 *   npx agentkit-acp prompt --agent "npx tsx examples/own-tool/agent.ts" "What is the weather in Bern?"
 * Without AGENTKIT_MODEL it uses a scripted stand-in (no key needed) that calls the tool once
 * and reports its answer; with AGENTKIT_MODEL=anthropic:claude-sonnet-4-5 (and that provider's
 * key in the environment) a real model decides when to call it. Guide: docs/your-own-tool.md.
 */
import { AcpHeadlessRuntime, AcpIntegration, ClientPermissionResolver, InMemoryApprovalMemory } from "agentkit-acp/agent";
import { Agent } from "agentkit-acp/loop";
import { createModelAdapter } from "agentkit-acp/model";
import type { ModelAdapter } from "agentkit-acp/model";
import { ScriptedModel, script } from "agentkit-acp/testing";
import { ToolRegistry, builtinTools, defaultPermissionPolicy } from "agentkit-acp/tools";
import { weatherTool } from "./weather-tool.js";

const integration = AcpIntegration.builder()
  .name("weather-agent")
  .approvalResolver(new ClientPermissionResolver()) // other tools ask the editor
  .approvalMemory(new InMemoryApprovalMemory())
  .build();

await AcpHeadlessRuntime.builder()
  .integration(integration)
  .agentFactory((ctx) =>
    Agent.builder()
      .model(model())
      .tools(new ToolRegistry([...builtinTools(), weatherTool]))
      // A lookup changes nothing: run it without asking; everything else as `serve` does.
      .permissions(defaultPermissionPolicy({ rules: [{ tool: "get_weather", verdict: "allow", reason: "a read-only lookup" }] }))
      .systemPrompt("You answer questions about the weather with the get_weather tool.")
      .observer(ctx.integration)
      .cancellation(ctx.cancellation)
      .build(),
  )
  .build()
  .serveStdio();

function model(): ModelAdapter {
  const spec = process.env.AGENTKIT_MODEL;
  if (spec) return createModelAdapter({ spec });
  // The stand-in: after a question, call get_weather for the city it names; after the tool's
  // result, answer with it.
  return new ScriptedModel(
    [
      (request) => {
        const last = request.items.at(-1);
        const result = last?.parts.find((part) => part.type === "tool_result");
        if (result) return script.text(`Here is the forecast:\n${result.result.text}`);
        const question = last?.parts.map((part) => (part.type === "text" ? part.text : "")).join(" ") ?? "";
        const city = /\bin ([\p{L} -]+?)\b[?.!]*$/u.exec(question.trim())?.[1] ?? "Bern";
        return script.toolCall("get_weather", { city, days: 2 });
      },
    ],
    { id: "scripted-weather", onExhausted: "repeat-last" },
  );
}
