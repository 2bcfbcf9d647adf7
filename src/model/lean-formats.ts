import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";

/**
 * The wire formats the lean path reads (see lean-stream.ts): for each, which SSE events are
 * plain text/reasoning deltas and the parts the provider's own transform makes of them. A
 * format only recognises events it is certain about; anything else goes to the provider.
 */
export interface LeanFormat {
  readonly name: string;
  /**
   * An event's `data` that the provider's schema accepts and its transform turns into nothing
   * but its `raw` echo (tagged with {@link leanMarkerKey}): sent after each forwarded event, its
   * echo says where the provider's parts for that event end.
   */
  readonly marker: string;
  /**
   * True when the provider reads the answer's first events before `doStream` returns (to throw
   * an early error as a failed call): the lean path then feeds it until it returns.
   */
  readonly readsAhead: boolean;
  /**
   * When `chunk` (a parsed event) is a plain delta, pushes the parts the provider would make of
   * it (once its response metadata is out) and returns true; false sends it to the provider.
   */
  plain(chunk: unknown, parts: Part[]): boolean;
}

type Part = LanguageModelV3StreamPart;
type Loose = Record<string, unknown>;

export const leanMarkerKey = "agentkit_lean_marker";

const isObject = (value: unknown): value is Loose => typeof value === "object" && value !== null && !Array.isArray(value);
const nullish = (value: unknown): value is null | undefined => value === null || value === undefined;
const optionalString = (value: unknown): boolean => nullish(value) || typeof value === "string";

/** The one choice of a chat-completions chunk with nothing but a delta, or undefined. */
function onlyChoice(value: unknown, strict: boolean): Loose | undefined {
  if (!isObject(value) || "error" in value) return undefined;
  if (!optionalString(value.id) || !optionalString(value.model) || !(nullish(value.created) || typeof value.created === "number")) return undefined;
  if (!nullish(value.usage)) return undefined;
  const choices = value.choices;
  if (!Array.isArray(choices) || choices.length !== 1) return undefined;
  const choice: unknown = choices[0];
  if (!isObject(choice) || !nullish(choice.finish_reason)) return undefined;
  // `@ai-sdk/openai` wants the choice's index and collects logprobs.
  if (strict && (typeof choice.index !== "number" || !nullish(choice.logprobs))) return undefined;
  return choice;
}

/**
 * True when the chunk is a content/reasoning-only delta that openai-compatible's chunk schema
 * accepts and its transform would turn into nothing but text/reasoning deltas: no finish
 * reason, usage, tool calls, refusal or error, string content, at most one choice.
 */
export function isPlainDeltaChunk(value: unknown): boolean {
  const choice = onlyChoice(value, false);
  if (choice === undefined) return false;
  const delta = choice.delta;
  if (nullish(delta)) return true;
  if (!isObject(delta)) return false;
  const { role, content, refusal, reasoning_content: reasoningContent, reasoning, tool_calls: toolCalls } = delta;
  return (
    (nullish(role) || role === "assistant" || role === "") &&
    optionalString(content) &&
    nullish(refusal) &&
    optionalString(reasoningContent) &&
    optionalString(reasoning) &&
    nullish(toolCalls)
  );
}

interface ChatDelta {
  content?: string | null;
  reasoning_content?: string | null;
  reasoning?: string | null;
}

/** `@ai-sdk/openai-compatible` (openai-compatible, ollama, openrouter): text and `reasoning_content` / `reasoning`. */
export const openAICompatibleFormat: LeanFormat = {
  name: "openai-compatible",
  marker: `{"choices":[],"${leanMarkerKey}":true}`,
  readsAhead: false,
  plain(chunk, parts) {
    if (!isPlainDeltaChunk(chunk)) return false;
    const delta = ((chunk as Loose).choices as Array<{ delta?: ChatDelta | null }>)[0]!.delta;
    const reasoning = delta?.reasoning_content ?? delta?.reasoning;
    if (reasoning) parts.push({ type: "reasoning-delta", id: "reasoning-0", delta: reasoning });
    if (delta?.content) parts.push({ type: "text-delta", id: "txt-0", delta: delta.content });
    return true;
  },
};

/**
 * `@ai-sdk/openai` Chat Completions: text only (this provider reads no reasoning field); its
 * schema wants each choice's `index`; logprobs and annotations go to the provider. It reads
 * ahead to the first output chunk before returning the stream.
 */
export const openAIChatFormat: LeanFormat = {
  name: "openai",
  marker: `{"choices":[],"${leanMarkerKey}":true}`,
  readsAhead: true,
  plain(chunk, parts) {
    const choice = onlyChoice(chunk, true);
    if (choice === undefined) return false;
    const delta = choice.delta;
    if (nullish(delta)) return true;
    if (!isObject(delta)) return false;
    const { role, content } = delta;
    if (!(nullish(role) || role === "assistant") || typeof content !== "string") return false;
    if (!nullish(delta.refusal) || !nullish(delta.tool_calls) || !nullish(delta.annotations)) return false;
    // As the provider: an empty `content` is an empty text delta.
    parts.push({ type: "text-delta", id: "0", delta: content });
    return true;
  },
};

/**
 * `@ai-sdk/anthropic` Messages: `text_delta` and `thinking_delta` content-block deltas, and
 * `ping` (nothing). Signatures, tool input, block starts and stops, message events and errors
 * go to the provider. (Text is held back by that provider only for a JSON response format,
 * which the adapter never asks for.) It reads ahead to its first part before returning.
 */
export const anthropicFormat: LeanFormat = {
  name: "anthropic",
  marker: `{"type":"ping","${leanMarkerKey}":true}`,
  readsAhead: true,
  plain(chunk, parts) {
    if (!isObject(chunk)) return false;
    if (chunk.type === "ping") return true;
    if (chunk.type !== "content_block_delta" || typeof chunk.index !== "number") return false;
    const delta = chunk.delta;
    if (!isObject(delta)) return false;
    if (delta.type === "text_delta" && typeof delta.text === "string") {
      parts.push({ type: "text-delta", id: String(chunk.index), delta: delta.text });
      return true;
    }
    if (delta.type === "thinking_delta" && typeof delta.thinking === "string") {
      parts.push({ type: "reasoning-delta", id: String(chunk.index), delta: delta.thinking });
      return true;
    }
    return false;
  },
};
