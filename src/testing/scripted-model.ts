import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Usage } from "../core/index.js";
import { ModelError } from "../model/types.js";
import type { ModelAdapter, ModelCapabilities, ModelEvent, ModelRequest } from "../model/types.js";

/** One scripted model step: fixed events, or a function of the request (may be async / wait on the signal). */
export type ScriptStep =
  | ModelEvent[]
  | ((request: ModelRequest, signal: AbortSignal) => Iterable<ModelEvent> | AsyncIterable<ModelEvent>);

/** Options of `ScriptedModel`: its id, the capabilities it claims, and what happens when the script runs out. */
export interface ScriptedModelOptions {
  id?: string;
  capabilities?: Partial<ModelCapabilities>;
  /** What to do when the script runs out: throw (default) or repeat the last step. */
  onExhausted?: "throw" | "repeat-last";
}

const defaultUsage: Usage = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };

/**
 * A deterministic model for tests: plays one step per call and records every request, so a
 * test can check what the model was sent (e.g. that earlier turns are in the transcript).
 */
export class ScriptedModel implements ModelAdapter {
  readonly id: string;
  readonly capabilities: ModelCapabilities;
  readonly requests: ModelRequest[] = [];
  readonly #steps: ScriptStep[];
  readonly #onExhausted: "throw" | "repeat-last";

  constructor(steps: ScriptStep[], options: ScriptedModelOptions = {}) {
    this.#steps = [...steps];
    this.id = options.id ?? "scripted";
    this.capabilities = { image: false, audio: false, embeddedContext: true, thinking: false, ...options.capabilities };
    this.#onExhausted = options.onExhausted ?? "throw";
  }

  /** Appends steps (e.g. between turns of a test). */
  push(...steps: ScriptStep[]): void {
    this.#steps.push(...steps);
  }

  get callCount(): number {
    return this.requests.length;
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    const index = this.requests.length;
    this.requests.push(structuredClone(request));
    const step = this.#steps[index] ?? (this.#onExhausted === "repeat-last" ? this.#steps.at(-1) : undefined);
    if (step === undefined) {
      throw new ModelError(
        "config",
        `scripted model: call ${index + 1} has no step, the script has ${this.#steps.length}; add steps (push()) or pass { onExhausted: "repeat-last" }`,
      );
    }
    const events = typeof step === "function" ? step(request, signal) : step;
    for await (const event of events) {
      signal.throwIfAborted();
      await yieldToEventLoop();
      signal.throwIfAborted();
      yield event;
    }
  }
}

/** Step builders. */
export const script = {
  text(text: string, options: { reasoning?: string; chunks?: number; usage?: Usage } = {}): ModelEvent[] {
    const events: ModelEvent[] = [];
    if (options.reasoning) events.push({ type: "reasoning_delta", text: options.reasoning });
    for (const chunk of splitInto(text, options.chunks ?? 1)) events.push({ type: "text_delta", text: chunk });
    events.push({ type: "finish", reason: "stop", usage: options.usage ?? defaultUsage });
    return events;
  },
  toolCall(
    toolName: string,
    input: unknown,
    options: { callId?: string; text?: string; reasoning?: string; usage?: Usage } = {},
  ): ModelEvent[] {
    return script.toolCalls([{ toolName, input, callId: options.callId }], options);
  },
  toolCalls(
    calls: Array<{ toolName: string; input: unknown; callId?: string | undefined }>,
    options: { text?: string; reasoning?: string; usage?: Usage } = {},
  ): ModelEvent[] {
    const events: ModelEvent[] = [];
    if (options.reasoning) events.push({ type: "reasoning_delta", text: options.reasoning });
    if (options.text) events.push({ type: "text_delta", text: options.text });
    calls.forEach((call, i) => {
      const callId = call.callId ?? `call_${i + 1}_${call.toolName}`;
      events.push({ type: "tool_input_start", callId, toolName: call.toolName });
      events.push({ type: "tool_input_delta", callId, text: JSON.stringify(call.input) });
      events.push({ type: "tool_call", callId, toolName: call.toolName, input: call.input });
    });
    events.push({ type: "finish", reason: "tool_calls", usage: options.usage ?? defaultUsage });
    return events;
  },
  /** Streams `before`, then waits until the signal aborts (for cancellation tests). */
  hang(before: ModelEvent[] = [{ type: "text_delta", text: "working…" }]): ScriptStep {
    return async function* (_request, signal) {
      yield* before;
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        else signal.addEventListener("abort", () => resolve(), { once: true });
      });
      signal.throwIfAborted();
    };
  },
  /** Streams `count` text deltas (for benchmarks). */
  manyDeltas(count: number, text = "tok "): ModelEvent[] {
    const events: ModelEvent[] = Array.from({ length: count }, () => ({ type: "text_delta", text }) as const);
    events.push({ type: "finish", reason: "stop", usage: defaultUsage });
    return events;
  },
};

function splitInto(text: string, chunks: number): string[] {
  if (chunks <= 1 || text.length <= 1) return [text];
  const size = Math.ceil(text.length / chunks);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
