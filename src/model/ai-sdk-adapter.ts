import { jsonSchema, streamText, tool, type JSONSchema7, type LanguageModelUsage, type Tool } from "ai";
import { setTimeout as delay } from "node:timers/promises";
import type { Logger, Usage } from "../core/index.js";
import { toModelError, type ErrorContext } from "./errors.js";
import { toModelMessages, type ConvertOptions } from "./messages.js";
import { thinkingOptions, type ProviderModel } from "./providers.js";
import { providers, type ModelSpec } from "./model-id.js";
import {
  ModelError,
  type ModelAdapter,
  type ModelCapabilities,
  type ModelEvent,
  type ModelFinishReason,
  type ModelRequest,
} from "./types.js";

/** Retries happen only before anything was streamed: refused connections, 429 and 5xx. */
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
  capabilities: ModelCapabilities;
  baseUrl: string;
  /** When set, calls fail with this (kind `auth`) instead of going out without a needed key. */
  missingKey?: string;
  envVar: string;
  hadKey: boolean;
  maxOutputTokens: number;
  retry: Required<RetryOptions>;
  /** Longest silence between two stream parts before the call fails (a stuck server never hangs a turn). */
  idleTimeoutMs: number;
  logger: Logger;
}

/** Anthropic reasoning metadata (thinking signatures) kept so thinking can continue across tool calls. */
type ReasoningMetadata = Record<string, NonNullable<unknown>>;
const maxRememberedReasoning = 256;

/** A ModelAdapter over the AI SDK's `streamText`: one model step per call, tools without `execute`. */
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

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    signal.throwIfAborted();
    const { retry, logger, missingKey } = this.#config;
    if (missingKey !== undefined) throw new ModelError("auth", missingKey);
    for (let attempt = 0; ; attempt++) {
      let streamed = false;
      try {
        for await (const event of this.#streamOnce(request, signal)) {
          streamed = true;
          yield event;
        }
        return;
      } catch (error) {
        if (signal.aborted) throw abortError(signal);
        if (isAbort(error)) throw error;
        const mapped = toModelError(error, this.#errorContext());
        if (streamed || !mapped.retryable || attempt >= retry.maxRetries) throw mapped.error;
        const wait = Math.min(retry.maxDelayMs, mapped.retryAfterMs ?? retry.initialDelayMs * 2 ** attempt);
        logger.warn(`${mapped.error.message}; retrying in ${wait} ms (retry ${attempt + 1} of ${retry.maxRetries})`);
        await delay(wait, undefined, { signal }).catch(() => undefined);
        if (signal.aborted) throw abortError(signal);
      }
    }
  }

  async *#streamOnce(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelEvent> {
    const { spec, model, capabilities, maxOutputTokens, logger, idleTimeoutMs } = this.#config;
    const label = providers[spec.provider].label;
    // Our own controller, so leaving early for any reason (error, consumer break) ends the request.
    const controller = new AbortController();
    const forward = (): void => controller.abort(signal.reason);
    signal.addEventListener("abort", forward, { once: true });
    let completed = false;
    let stalled: ModelError | undefined;
    let timer: NodeJS.Timeout | undefined;
    const rearm = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        stalled = new ModelError(
          "connection",
          `${label} sent nothing for ${idleTimeoutMs < 10_000 ? `${idleTimeoutMs} ms` : `${Math.round(idleTimeoutMs / 1000)} s`}; the server may be stuck — try again (or raise idleTimeoutMs)`,
        );
        controller.abort(stalled);
      }, idleTimeoutMs);
      timer.unref();
    };
    try {
      rearm();
      const providerOptions = capabilities.thinking ? thinkingOptions(spec, request.thinking) : undefined;
      const result = streamText({
        model,
        system: request.system,
        messages: toModelMessages(request.items, this.#convertOptions()),
        tools: request.tools.length > 0 ? toSdkTools(request) : undefined,
        maxOutputTokens: request.maxOutputTokens ?? maxOutputTokens,
        providerOptions,
        abortSignal: controller.signal,
        maxRetries: 0, // ours, above: only before anything was streamed
        // The default dumps whole stacks to stderr; the error part is handled below.
        onError: ({ error }) => logger.debug("model stream error", { error: String(error) }),
      });
      const reasoning = new Map<string, { text: string; metadata?: ReasoningMetadata }>();
      let finished = false;
      for await (const part of withStallCheck(result.fullStream, () => stalled)) {
        rearm();
        switch (part.type) {
          case "text-delta":
            if (part.text !== "") yield { type: "text_delta", text: part.text };
            break;
          case "reasoning-start":
          case "reasoning-delta":
          case "reasoning-end": {
            const block = reasoning.get(part.id) ?? { text: "" };
            reasoning.set(part.id, block);
            if (part.providerMetadata?.anthropic) block.metadata = { ...block.metadata, ...part.providerMetadata.anthropic } as ReasoningMetadata;
            if (part.type === "reasoning-delta" && part.text !== "") {
              block.text += part.text;
              yield { type: "reasoning_delta", text: part.text };
            }
            if (part.type === "reasoning-end" && block.metadata) this.#rememberReasoning(block.text, block.metadata);
            break;
          }
          case "tool-input-start":
            yield { type: "tool_input_start", callId: part.id, toolName: part.toolName };
            break;
          case "tool-input-delta":
            if (part.delta !== "") yield { type: "tool_input_delta", callId: part.id, text: part.delta };
            break;
          case "tool-call":
            // Invalid calls (unknown tool, unparsable input) come through too: the loop turns
            // them into error results the model can read.
            yield { type: "tool_call", callId: part.toolCallId, toolName: part.toolName, input: part.input };
            break;
          case "finish": {
            if (part.finishReason === "error") throw new ModelError("bad_response", `${label} ended the stream with an error`);
            if (part.finishReason === "other" && part.rawFinishReason === undefined) break; // no finish from the server: see below
            finished = true;
            yield { type: "finish", reason: mapFinishReason(part.finishReason), usage: mapUsage(part.totalUsage) };
            break;
          }
          case "error":
            throw part.error;
          case "abort":
            throw stalled ?? abortError(signal);
          default:
            break;
        }
      }
      if (!finished) {
        throw new ModelError(
          "bad_response",
          `${label}'s response stream ended before the model finished (no finish reason); try again`,
        );
      }
      completed = true;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", forward);
      if (!completed) controller.abort(new DOMException("model stream closed", "AbortError"));
    }
  }

  #convertOptions(): ConvertOptions {
    switch (this.#config.spec.provider) {
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

/** Rethrows the stall error when the library surfaces our timeout abort as a plain AbortError. */
async function* withStallCheck<T>(stream: AsyncIterable<T>, stalled: () => ModelError | undefined): AsyncGenerator<T> {
  try {
    yield* stream;
  } catch (error) {
    throw stalled() ?? error;
  }
}

function toSdkTools(request: ModelRequest): Record<string, Tool> {
  return Object.fromEntries(
    request.tools.map((spec) => [spec.name, tool({ description: spec.description, inputSchema: jsonSchema(spec.inputSchema as JSONSchema7) })]),
  );
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

function mapUsage(usage: LanguageModelUsage): Usage {
  const inputTokens = usage.inputTokens ?? 0;
  const outputTokens = usage.outputTokens ?? 0;
  const mapped: Usage = { inputTokens, outputTokens, totalTokens: usage.totalTokens ?? inputTokens + outputTokens };
  const reasoningTokens = usage.outputTokenDetails.reasoningTokens;
  const cachedInputTokens = usage.inputTokenDetails.cacheReadTokens;
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
