import type { LanguageModelV3CallOptions, LanguageModelV3StreamPart, LanguageModelV3Usage, SharedV3Warning } from "@ai-sdk/provider";
import { setTimeout as delay } from "node:timers/promises";
import type { Logger, Usage } from "../core/index.js";
import { toModelError, type ErrorContext, type MappedError } from "./errors.js";
import { toModelMessages, toProviderPrompt, type ConvertOptions } from "./messages.js";
import { partBatches, type LeanStreams } from "./lean-stream.js";
import { thinkingOptions, type ProviderModel } from "./providers.js";
import { providers, type ModelSpec } from "./model-id.js";
import { ModelError, type ModelAdapter, type ModelTimeouts, type ModelCapabilities, type ModelEvent, type ModelFinishReason, type ModelRequest } from "./types.js";

/** Retries happen only before anything was streamed: refused connections, timeouts, 429 and 5xx. */
export interface RetryOptions {
  /** Default 2. */
  maxRetries?: number;
  /** First backoff (doubles each time). Default 500 ms. */
  initialDelayMs?: number;
  /** Upper bound of one backoff, including a server's Retry-After. Default 8 s. */
  maxDelayMs?: number;
}

export interface AiSdkAdapterConfig {
  spec: ModelSpec;
  model: ProviderModel;
  /** Reads the model's successful SSE answers without the provider's per-chunk stages. */
  lean?: LeanStreams;
  capabilities: ModelCapabilities;
  baseUrl: string;
  /** When set, calls fail with this (kind `auth`) instead of going out without a needed key. */
  missingKey?: string;
  envVar: string;
  hadKey: boolean;
  maxOutputTokens: number;
  retry: Required<RetryOptions>;
  timeouts: Required<ModelTimeouts>;
  logger: Logger;
}

/** Anthropic reasoning metadata (thinking signatures) kept so thinking can continue across tool calls. */
type ReasoningMetadata = Record<string, NonNullable<unknown>>;
const maxRememberedReasoning = 256;

/** Which bound expired; `beforeData` ones may be retried (nothing reached the caller yet). */
type Bound = "connect" | "first_byte" | "idle";

class BoundExpired extends Error {
  constructor(
    readonly bound: Bound,
    readonly ms: number,
  ) {
    super(`model ${bound} timeout`);
  }
}

/** A reasoning block being streamed, with its provider metadata. */
type ReasoningBlock = { text: string; metadata?: ReasoningMetadata };

/**
 * The silence bounds of one call (connect, then first byte, then idle between data): one timer,
 * re-armed lazily, so a chunk only records the time (no per-chunk timer churn), and a later bound
 * that ends after the timer reuses it (it checks when it fires and waits again for the rest).
 */
class SilenceBounds {
  expired: BoundExpired | undefined;
  #bound: Bound;
  #limit: number;
  #last = performance.now();
  /** When the timer fires. */
  #due = 0;
  #timer: NodeJS.Timeout | undefined;
  readonly #onExpired: (expired: BoundExpired) => void;

  constructor(first: Bound, ms: number, onExpired: (expired: BoundExpired) => void) {
    this.#bound = first;
    this.#limit = Math.max(1, ms);
    this.#onExpired = onExpired;
    this.#wait(this.#limit);
  }

  arm(next: Bound, ms: number): void {
    [this.#bound, this.#limit, this.#last] = [next, Math.max(1, ms), performance.now()];
    if (this.#last + this.#limit < this.#due) {
      clearTimeout(this.#timer);
      this.#wait(this.#limit);
    }
  }

  /** Data arrived: the current bound starts over. */
  touch(): void {
    this.#last = performance.now();
  }

  stop(): void {
    clearTimeout(this.#timer);
  }

  #wait(ms: number): void {
    this.#due = performance.now() + ms;
    this.#timer = setTimeout(this.#check, ms).unref();
  }

  readonly #check = (): void => {
    const silent = performance.now() - this.#last;
    if (silent < this.#limit) {
      this.#wait(this.#limit - silent);
      return;
    }
    this.expired = new BoundExpired(this.#bound, this.#limit);
    this.#onExpired(this.expired);
  };
}

/**
 * A ModelAdapter over the provider's own `doStream` (one model step per call; the loop owns
 * tools): the AI SDK providers keep the wire formats, without `streamText`'s per-part
 * transform stack, which cost 3–4× the provider's own work per streamed chunk.
 */
export class AiSdkModelAdapter implements ModelAdapter {
  readonly id: string;
  readonly capabilities: ModelCapabilities;
  readonly #config: AiSdkAdapterConfig;
  readonly #reasoning = new Map<string, ReasoningMetadata>();

  constructor(config: AiSdkAdapterConfig) {
    this.#config = config;
    this.id = config.spec.spec;
    this.capabilities = config.capabilities;
  }

  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    return { [Symbol.asyncIterator]: () => this.#attempts(request, signal) };
  }

  /**
   * The attempts of one call as one iterator: the current attempt's events, handed out from the
   * batch of one network read (no generator step per delta); a failure before anything was
   * streamed may start another attempt.
   */
  #attempts(request: ModelRequest, signal: AbortSignal): AsyncIterator<ModelEvent> {
    const { retry, logger, missingKey, timeouts } = this.#config;
    let call: { options: LanguageModelV3CallOptions; deadline: number } | undefined;
    let current: AsyncGenerator<ModelEvent[]> | undefined;
    let batch: ModelEvent[] = [];
    let index = 0;
    let attempt = 0;
    let streamed = false;
    let over = false;
    const end = (): IteratorResult<ModelEvent> => ({ done: true, value: undefined });
    const recover = async (error: unknown): Promise<IteratorResult<ModelEvent>> => {
      current = undefined;
      over = true;
      if (signal.aborted) throw abortError(signal);
      if (isAbort(error)) throw error;
      const mapped = this.#mapError(error, streamed);
      const left = call!.deadline - performance.now();
      const wait = Math.min(retry.maxDelayMs, mapped.retryAfterMs ?? retry.initialDelayMs * 2 ** attempt);
      if (streamed || !mapped.retryable || attempt >= retry.maxRetries) throw mapped.error;
      if (wait >= left) throw withAttempts(mapped.error, attempt + 1, timeouts.totalMs);
      logger.warn(`${mapped.error.message}; retrying in ${wait} ms (retry ${attempt + 1} of ${retry.maxRetries})`);
      await delay(wait, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) throw abortError(signal);
      attempt += 1;
      over = false;
      return next();
    };
    const next = (): Promise<IteratorResult<ModelEvent>> => {
      if (index < batch.length) return Promise.resolve({ done: false, value: batch[index++]! });
      if (over) return Promise.resolve(end());
      if (current === undefined) {
        try {
          if (call === undefined) {
            signal.throwIfAborted();
            if (missingKey !== undefined) throw new ModelError("auth", missingKey);
            call = { options: this.#callOptions(request), deadline: performance.now() + timeouts.totalMs };
          }
        } catch (error) {
          over = true;
          return Promise.reject(error);
        }
        current = this.#streamOnce(call.options, signal, call.deadline);
      }
      return current.next().then((result) => {
        if (result.done) {
          over = true;
          return end();
        }
        streamed = true;
        [batch, index] = [result.value, 1];
        return { done: false, value: result.value[0]! };
      }, recover);
    };
    return {
      next,
      return: async () => {
        over = true;
        batch = [];
        await current?.return(undefined);
        return end();
      },
    };
  }

  #callOptions(request: ModelRequest): LanguageModelV3CallOptions {
    const { spec, capabilities, maxOutputTokens } = this.#config;
    const providerOptions = capabilities.thinking ? thinkingOptions(spec, request.thinking) : undefined;
    const options: LanguageModelV3CallOptions = {
      prompt: toProviderPrompt(request.system, toModelMessages(request.items, this.#convertOptions())),
      maxOutputTokens: request.maxOutputTokens ?? maxOutputTokens,
    };
    if (providerOptions) options.providerOptions = providerOptions;
    if (request.tools.length > 0) {
      options.tools = request.tools.map((t) => ({ type: "function", name: t.name, description: t.description, inputSchema: t.inputSchema }));
      options.toolChoice = { type: "auto" };
    }
    return options;
  }

  /** One attempt's events, a batch per network read (never an empty one). */
  async *#streamOnce(base: LanguageModelV3CallOptions, signal: AbortSignal, deadline: number): AsyncGenerator<ModelEvent[]> {
    const { model, lean, timeouts } = this.#config;
    // Our own controller, so leaving early for any reason (error, consumer break, a bound) ends the request.
    const controller = new AbortController();
    const forward = (): void => controller.abort(signal.reason);
    signal.addEventListener("abort", forward, { once: true });
    const bounds = new SilenceBounds("connect", Math.min(timeouts.connectMs, deadline - performance.now()), (expired) => controller.abort(expired));
    let completed = false;
    let parts: AsyncIterator<LanguageModelV3StreamPart[]> | undefined;
    try {
      const call = { ...base, abortSignal: controller.signal };
      const opened = lean ? lean.open((headers) => model.doStream({ ...call, headers, includeRawChunks: true })) : model.doStream(call).then(({ stream }) => partBatches(stream));
      parts = (
        await opened.then(
          (result) => result,
          (error: unknown) => Promise.reject(bounds.expired ?? error),
        )
      )[Symbol.asyncIterator]();
      bounds.arm("first_byte", Math.min(timeouts.firstByteMs, deadline - performance.now()));
      let waitingForData = true;
      const reasoning = new Map<string, ReasoningBlock>();
      let finished = false;
      for (;;) {
        let next: IteratorResult<LanguageModelV3StreamPart[]>;
        try {
          next = await parts.next();
        } catch (error) {
          throw bounds.expired ?? error;
        }
        if (next.done) break;
        // Data (anything but the provider's stream-start and the lean path's raw chunks) resets the idle bound.
        if (next.value.some((part) => part.type !== "stream-start" && part.type !== "raw")) {
          if (waitingForData) {
            waitingForData = false;
            bounds.arm("idle", timeouts.idleMs);
          } else bounds.touch();
        }
        const events: ModelEvent[] = [];
        try {
          for (const part of next.value) {
            const event = this.#eventOf(part, reasoning);
            if (event === undefined) continue;
            if (event.type === "finish") finished = true;
            events.push(event);
          }
        } catch (error) {
          if (events.length > 0) yield events; // what came before the error part, first
          throw error;
        }
        if (events.length > 0) yield events;
      }
      if (!finished) {
        throw new ModelError("bad_response", `${this.#label()}'s response stream ended before the model finished (no finish reason); try again`);
      }
      completed = true;
    } finally {
      bounds.stop();
      signal.removeEventListener("abort", forward);
      if (!completed) controller.abort(new DOMException("model stream closed", "AbortError"));
      void parts?.return?.()?.catch(() => undefined);
    }
  }

  /** The event one stream part makes (at most one); throws for an error part or an error finish. */
  #eventOf(part: LanguageModelV3StreamPart, reasoning: Map<string, ReasoningBlock>): ModelEvent | undefined {
    switch (part.type) {
      case "stream-start":
        this.#warn(part.warnings, this.#config.logger);
        return undefined;
      case "text-delta":
        return part.delta === "" ? undefined : { type: "text_delta", text: part.delta };
      case "reasoning-start":
      case "reasoning-delta":
      case "reasoning-end": {
        let block = reasoning.get(part.id);
        if (!block) reasoning.set(part.id, (block = { text: "" }));
        if (part.providerMetadata?.anthropic) block.metadata = { ...block.metadata, ...part.providerMetadata.anthropic } as ReasoningMetadata;
        if (part.type === "reasoning-end" && block.metadata) this.#rememberReasoning(block.text, block.metadata);
        if (part.type !== "reasoning-delta" || part.delta === "") return undefined;
        block.text += part.delta;
        return { type: "reasoning_delta", text: part.delta };
      }
      case "tool-input-start":
        return { type: "tool_input_start", callId: part.id, toolName: part.toolName };
      case "tool-input-delta":
        return part.delta === "" ? undefined : { type: "tool_input_delta", callId: part.id, text: part.delta };
      case "tool-call":
        // Unparsable input comes through as its raw text: the loop turns it (and unknown
        // tools) into error results the model can read.
        return { type: "tool_call", callId: part.toolCallId, toolName: part.toolName, input: parseToolInput(part.input) };
      case "finish":
        if (part.finishReason.unified === "error") throw new ModelError("bad_response", `${this.#label()} ended the stream with an error`);
        if (part.finishReason.unified === "other" && part.finishReason.raw === undefined) return undefined; // no finish from the server: see #streamOnce
        return { type: "finish", reason: mapFinishReason(part.finishReason.unified), usage: mapUsage(part.usage) };
      case "error":
        throw part.error;
      default:
        return undefined; // the lean path's raw chunks, and parts a step does not use
    }
  }

  #mapError(error: unknown, streamed: boolean): MappedError {
    if (!(error instanceof BoundExpired)) return toModelError(error, this.#errorContext());
    const label = this.#label();
    const span = formatMs(error.ms);
    const { baseUrl, timeouts } = this.#config;
    // A bound cut short by the overall budget says so: "within 461 ms" named neither number configured.
    const cut = (configured: number, what: string, preposition: string): string =>
      error.ms < configured ? `before the ${formatMs(timeouts.totalMs)} budget ran out (${what} ${formatMs(configured)})` : `${preposition} ${span} (${what})`;
    switch (error.bound) {
      case "connect":
        return {
          error: new ModelError("timeout", `${label} at ${baseUrl} did not answer the request ${cut(timeouts.connectMs, "connect timeout", "within")}; is the server overloaded or stuck?`),
          retryable: true,
        };
      case "first_byte":
        return {
          error: new ModelError("timeout", `${label} answered but then sent nothing ${cut(timeouts.firstByteMs, "first-byte timeout", "for")}; the server may be stuck — try again`),
          retryable: !streamed,
        };
      case "idle":
        return {
          error: new ModelError("timeout", `${label} sent nothing for ${span} mid-stream (idle timeout); the server may be stuck — try again`),
          retryable: false,
        };
    }
  }

  #warn(warnings: SharedV3Warning[], logger: Logger): void {
    for (const warning of warnings) {
      const w = warning as { type: string; feature?: string; details?: string; message?: string };
      const what = w.message ?? [w.feature, w.details].filter(Boolean).join(": ");
      logger.warn(`model warning (${this.#config.model.provider} ${this.#config.model.modelId}): ${what || w.type}`);
    }
  }

  #label(): string {
    return providers[this.#config.spec.provider].label;
  }

  #convertOptions(): ConvertOptions {
    // By the library's wire format (see provider-registry.ts), not by provider.
    switch (providers[this.#config.spec.provider].library) {
      case "anthropic":
        // Anthropic takes thinking back only with its signature; unsigned text is left out.
        return { reasoning: (text) => (this.#reasoning.has(text) ? { anthropic: this.#reasoning.get(text) ?? {} } : "drop") };
      case "openai":
        return { reasoning: () => "drop" }; // Chat Completions has no field for it
      default:
        return {}; // sent back as reasoning_content
    }
  }

  #rememberReasoning(text: string, metadata: ReasoningMetadata): void {
    this.#reasoning.delete(text);
    this.#reasoning.set(text, metadata);
    if (this.#reasoning.size > maxRememberedReasoning) {
      const oldest = this.#reasoning.keys().next();
      if (!oldest.done) this.#reasoning.delete(oldest.value);
    }
  }

  #errorContext(): ErrorContext {
    const { spec, baseUrl, envVar, hadKey } = this.#config;
    return { spec, baseUrl, envVar, hadKey };
  }
}

function formatMs(ms: number): string {
  return ms < 10_000 ? `${Math.round(ms)} ms` : `${Math.round(ms / 1000)} s`;
}

/** The last attempt's error, saying that the overall budget is spent. */
function withAttempts(error: ModelError, attempts: number, totalMs: number): ModelError {
  if (attempts < 2) return error;
  return new ModelError(error.kind, `${error.message} (gave up after ${attempts} attempts within the ${formatMs(totalMs)} budget)`, {
    status: error.status,
    cause: error,
  });
}

/** As `streamText` does: empty input is `{}`; text that is not JSON is passed on as is. */
function parseToolInput(input: string): unknown {
  if (input.trim() === "") return {};
  try {
    return JSON.parse(input) as unknown;
  } catch {
    return input;
  }
}

function mapFinishReason(reason: string): ModelFinishReason {
  switch (reason) {
    case "stop":
      return "stop";
    case "tool-calls":
      return "tool_calls";
    case "length":
      return "length";
    case "content-filter":
      return "content_filter";
    default:
      return "other";
  }
}

function mapUsage(usage: LanguageModelV3Usage): Usage {
  const inputTokens = usage.inputTokens.total ?? 0;
  const outputTokens = usage.outputTokens.total ?? 0;
  const mapped: Usage = { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
  const reasoningTokens = usage.outputTokens.reasoning;
  const cachedInputTokens = usage.inputTokens.cacheRead;
  // Zeros here usually mean "not reported"; leave them out.
  if (reasoningTokens !== undefined && reasoningTokens > 0) mapped.reasoningTokens = reasoningTokens;
  if (cachedInputTokens !== undefined && cachedInputTokens > 0) mapped.cachedInputTokens = cachedInputTokens;
  return mapped;
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === "AbortError" || error.name === "CancelledError");
}

/** The signal's own reason when it is an error (e.g. CancelledError), else a standard AbortError. */
function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException("the model call was cancelled", "AbortError");
}
