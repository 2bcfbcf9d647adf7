import { readFileSync } from "node:fs";
import { noAuthentication } from "../acp/agent/auth.js";
import type { ServeModelSource } from "../serve/models.js";
import type { ModelEvent, ModelRequest } from "../model/index.js";
import { ModelError } from "../model/index.js";
import type { ScriptStep, ScriptedModelOptions } from "./scripted-model.js";
import { ScriptedModel, script } from "./scripted-model.js";

/**
 * FOR TESTS AND BENCHMARKS ONLY: `serve --model scripted:FILE.json` plays a fixed script
 * instead of calling a model. The file is `{ "steps": [...], "capabilities": {...} }` (or just
 * the steps array); every session plays the steps from the start. A step is one of:
 *   { "text": "…", "reasoning"?: "…", "chunks"?: n }
 *   { "toolCall": { "name": "write_file", "input": {…}, "callId"?: "…" }, "text"?: "…", "reasoning"?: "…" }
 *   { "hang": true, "text"?: "…" }            stream the text, then wait until cancelled
 *   { "deltas": 10000, "text"?: "tok " }      many small text deltas (benchmarks)
 *   { "echo": "last_tool_result" | "last_user_text" | "last_user_message" | "transcript" | "thinking" }
 *                                             reply with that from the request (a message: every part;
 *                                             transcript: one line per item the model was sent;
 *                                             thinking: the requested thinking level)
 *   { "fail": "message" }                     the model call fails with this message
 *   { "events": [ModelEvent, …] }              raw events
 * File options: "id" (the model id, default "scripted"); "stepFrom": "calls" (default: each model
 * call plays the next step) or "transcript" (the step index is the number of assistant items in
 * the request, so a loaded / resumed session continues the script where it stopped).
 */
type EchoWhat = "last_tool_result" | "last_user_text" | "last_user_message" | "transcript" | "thinking";

export interface ScriptFile {
  steps: ScriptFileStep[];
  capabilities?: ScriptedModelOptions["capabilities"];
  onExhausted?: "throw" | "repeat-last";
  id?: string;
  stepFrom?: "calls" | "transcript";
}

export type ScriptFileStep =
  | { text: string; reasoning?: string; chunks?: number }
  | { toolCall: { name: string; input: unknown; callId?: string }; text?: string; reasoning?: string }
  | { hang: true; text?: string }
  | { deltas: number; text?: string }
  | { echo: EchoWhat }
  | { fail: string }
  | { events: ModelEvent[] };

export function loadScriptFile(path: string): ScriptFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new ModelError("config", `cannot read the scripted model file ${path}: ${(error as Error).message}`);
  }
  const file = Array.isArray(parsed) ? { steps: parsed } : parsed;
  if (typeof file !== "object" || file === null || !Array.isArray((file as ScriptFile).steps)) {
    throw new ModelError("config", `scripted model file ${path} must be a JSON array of steps or {"steps": [...]}`);
  }
  (file as ScriptFile).steps.forEach((step, i) => toStep(step, i)); // validate up front
  return file as ScriptFile;
}

/** A fresh model playing the file's script (one per session). */
export function scriptedModelFrom(file: ScriptFile): ScriptedModel {
  const options: ScriptedModelOptions = { id: file.id ?? "scripted", onExhausted: file.onExhausted ?? "repeat-last" };
  if (file.capabilities) options.capabilities = file.capabilities;
  const steps = file.steps.map((s, i) => toStep(s, i));
  if (file.stepFrom !== "transcript") return new ScriptedModel(steps, options);
  const byTranscript: ScriptStep = (request, signal) => {
    const index = request.items.filter((item) => item.role === "assistant").length;
    const step = steps[index] ?? (file.onExhausted === "throw" ? undefined : steps.at(-1));
    if (step === undefined) throw new ModelError("config", `scripted model: no step ${index + 1} in the script`);
    return typeof step === "function" ? step(request, signal) : step;
  };
  return new ScriptedModel([byTranscript], { ...options, onExhausted: "repeat-last" });
}

function toStep(step: ScriptFileStep, index: number): ScriptStep {
  if (typeof step !== "object" || step === null) throw new ModelError("config", `script step ${index + 1} is not an object`);
  if ("toolCall" in step) {
    const options = { ...(step.toolCall.callId ? { callId: step.toolCall.callId } : {}), ...(step.text ? { text: step.text } : {}), ...(step.reasoning ? { reasoning: step.reasoning } : {}) };
    return script.toolCall(step.toolCall.name, step.toolCall.input, options);
  }
  if ("hang" in step) return script.hang(step.text ? [{ type: "text_delta", text: step.text }] : []);
  if ("deltas" in step) return script.manyDeltas(step.deltas, step.text);
  if ("echo" in step) return (request: ModelRequest) => script.text(echoText(request, step.echo));
  if ("fail" in step) {
    const message = step.fail;
    return () => {
      throw new ModelError("server", message);
    };
  }
  if ("events" in step) return step.events;
  if ("text" in step) return script.text(step.text, { ...(step.reasoning ? { reasoning: step.reasoning } : {}), ...(step.chunks ? { chunks: step.chunks } : {}) });
  throw new ModelError("config", `script step ${index + 1} has none of text, toolCall, hang, deltas, echo, fail, events`);
}

function echoText(request: ModelRequest, what: EchoWhat): string {
  if (what === "thinking") return `thinking: ${request.thinking ?? "unset"}`;
  if (what === "transcript") return request.items.map(describeItem).join("\n");
  if (what === "last_user_message") {
    const user = request.items.findLast((item) => item.role === "user");
    return user ? user.parts.map((p) => JSON.stringify(p)).join("\n") : "(no user message in the request)";
  }
  for (const item of [...request.items].reverse()) {
    for (const part of [...item.parts].reverse()) {
      if (what === "last_tool_result" && part.type === "tool_result") return part.result.text;
      if (what === "last_user_text" && item.role === "user" && part.type === "text") return part.text;
    }
  }
  return `(no ${what.replaceAll("_", " ")} in the request)`;
}

/** One line per item: role and a short rendering of each part. */
function describeItem(item: ModelRequest["items"][number]): string {
  const parts = item.parts.map((p) => {
    switch (p.type) {
      case "text":
      case "reasoning":
        return p.text;
      case "tool_call":
        return `[call ${p.toolName} ${JSON.stringify(p.input)}]`;
      case "tool_result":
        return `[result ${p.toolName}${p.result.isError ? " error" : ""}: ${p.result.text}]`;
      default:
        return `[${p.type}]`;
    }
  });
  return `${item.role}: ${parts.join(" ")}`;
}

/** `serve`'s resolver for `scripted:FILE.json` specs: every session plays the file from the start. */
export function scriptedModelResolver(spec: string): ServeModelSource | undefined {
  if (!spec.startsWith("scripted:")) return undefined;
  const path = spec.slice("scripted:".length);
  const file = loadScriptFile(path);
  return { label: `scripted:${path} (testing only)`, description: "scripted (testing only)", create: () => scriptedModelFrom(file), authentication: noAuthentication() };
}
