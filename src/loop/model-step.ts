import type { Item, Part, ToolCallId, Usage } from "../core/index.js";
import { SpanKind, capturedText, contentCaptured, newId, recordSpanError, startSpan } from "../core/index.js";
import type { Context, Span } from "../core/index.js";
import type { ModelAdapter, ModelFinishReason, ModelRequest } from "../model/types.js";
import type { ObserverHub } from "./observers.js";

export interface ModelStepOutcome {
  /** Text/reasoning parts and tool calls, in stream order. */
  parts: Part[];
  toolCalls: Array<{ callId: ToolCallId; toolName: string; input: unknown }>;
  finish: ModelFinishReason | undefined;
  usage: Usage | undefined;
  /** Set when the stream threw (abort or provider failure); parts hold what arrived before. */
  error?: unknown;
}

/**
 * Streams one model call, turning text and reasoning into begin/append/commit part deltas.
 * A part is begun when the kind changes and committed when the next begins or the stream ends.
 */
export async function runModelStep(
  model: ModelAdapter,
  request: ModelRequest,
  signal: AbortSignal,
  hub: ObserverHub,
  parent: Context,
  onToolCall: (call: { callId: ToolCallId; toolName: string; input: unknown }) => void,
): Promise<ModelStepOutcome> {
  const outcome: ModelStepOutcome = { parts: [], toolCalls: [], finish: undefined, usage: undefined };
  let open: { partId: string; kind: "text" | "reasoning"; text: string } | undefined;
  const inputStarts = new Map<ToolCallId, string>();
  const span = startChatSpan(model, request, parent);
  let firstToken = span.isRecording();

  const closePart = (): void => {
    if (!open) return;
    hub.emit({ type: "content_delta", delta: { type: "commit_part", partId: open.partId } });
    outcome.parts.push({ type: open.kind, text: open.text });
    open = undefined;
  };
  const append = (kind: "text" | "reasoning", text: string): void => {
    if (text.length === 0) return;
    if (open && open.kind !== kind) closePart();
    if (!open) {
      open = { partId: newId("part"), kind, text: "" };
      hub.emit({ type: "content_delta", delta: { type: "begin_part", partId: open.partId, kind } });
    }
    open.text += text;
    hub.emit({ type: "content_delta", delta: { type: "append_text", partId: open.partId, text } });
  };

  try {
    for await (const event of model.stream(request, signal)) {
      if (firstToken) {
        firstToken = false;
        span.addEvent("gen_ai.first_token");
      }
      switch (event.type) {
        case "text_delta":
          append("text", event.text);
          break;
        case "reasoning_delta":
          append("reasoning", event.text);
          break;
        case "tool_input_start":
          inputStarts.set(event.callId, event.toolName);
          break;
        case "tool_input_delta":
          hub.emit({ type: "tool_input_delta", callId: event.callId, toolName: inputStarts.get(event.callId) ?? "", text: event.text });
          break;
        case "tool_call": {
          closePart();
          const call = { callId: event.callId, toolName: event.toolName, input: event.input };
          outcome.toolCalls.push(call);
          outcome.parts.push({ type: "tool_call", ...call });
          onToolCall(call);
          break;
        }
        case "finish":
          outcome.finish = event.reason;
          outcome.usage = event.usage;
          break;
      }
      // Backpressure: a client behind on its output slows this stream, not our memory.
      const backlog = hub.backlog();
      if (backlog !== undefined) await untilAborted(backlog, signal);
    }
    signal.throwIfAborted();
  } catch (error) {
    outcome.error = error;
  }
  closePart();
  endChatSpan(span, outcome);
  return outcome;
}

function untilAborted(wait: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      signal.removeEventListener("abort", done);
      resolve();
    };
    signal.addEventListener("abort", done, { once: true });
    void wait.then(done, done);
  });
}

/** `chat {model}` (GenAI semantic conventions): one per model call. */
function startChatSpan(model: ModelAdapter, request: ModelRequest, parent: Context): Span {
  const colon = model.id.indexOf(":");
  const modelName = colon === -1 ? model.id : model.id.slice(colon + 1);
  const span = startSpan(`chat ${modelName}`, { kind: SpanKind.CLIENT }, parent);
  if (!span.isRecording()) return span;
  span.setAttributes({
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": colon === -1 ? model.id : model.id.slice(0, colon),
    "gen_ai.request.model": modelName,
  });
  if (request.maxOutputTokens !== undefined) span.setAttribute("gen_ai.request.max_tokens", request.maxOutputTokens);
  if (contentCaptured(span)) span.setAttribute("gen_ai.input.messages", capturedText(request.items.slice(-20)));
  return span;
}

function endChatSpan(span: Span, outcome: ModelStepOutcome): void {
  if (span.isRecording()) {
    if (outcome.finish) span.setAttribute("gen_ai.response.finish_reasons", [outcome.finish]);
    if (outcome.usage) span.setAttributes({ "gen_ai.usage.input_tokens": outcome.usage.inputTokens, "gen_ai.usage.output_tokens": outcome.usage.outputTokens });
    if (outcome.error !== undefined) recordSpanError(span, outcome.error, (outcome.error as { kind?: string } | null)?.kind);
    if (contentCaptured(span)) span.setAttribute("gen_ai.output.messages", capturedText([{ role: "assistant", parts: outcome.parts }]));
  }
  span.end();
}

export function assistantItem(parts: Part[]): Item | undefined {
  if (parts.length === 0) return undefined;
  return { id: newId("item"), role: "assistant", parts, createdAt: new Date().toISOString() };
}

export function addUsage(total: Usage | undefined, step: Usage | undefined): Usage | undefined {
  if (!step) return total;
  if (!total) return { ...step };
  return {
    inputTokens: total.inputTokens + step.inputTokens,
    outputTokens: total.outputTokens + step.outputTokens,
    totalTokens: total.totalTokens + step.totalTokens,
  };
}
