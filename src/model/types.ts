import type { Item, ToolCallId, Usage } from "../core/index.js";
import { AgentKitError } from "../core/index.js";

/** A JSON Schema object, as sent to providers (and MCP / ACP). */
export type JsonSchema = Record<string, unknown>;

/** What the model sees of a tool: no execute — the loop owns execution and approvals. */
export interface ModelToolSpec {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

export type ThinkingLevel = "off" | "low" | "medium" | "high";

export interface ModelRequest {
  system?: string;
  /** The whole transcript so far (user, assistant, tool items). */
  items: Item[];
  tools: ModelToolSpec[];
  maxOutputTokens?: number;
  thinking?: ThinkingLevel;
}

export type ModelFinishReason = "stop" | "tool_calls" | "length" | "content_filter" | "other";

/** One model step, streamed. Exactly one `finish` ends a successful stream. */
export type ModelEvent =
  | { type: "text_delta"; text: string }
  | { type: "reasoning_delta"; text: string }
  | { type: "tool_input_start"; callId: ToolCallId; toolName: string }
  | { type: "tool_input_delta"; callId: ToolCallId; text: string }
  | { type: "tool_call"; callId: ToolCallId; toolName: string; input: unknown }
  | { type: "finish"; reason: ModelFinishReason; usage?: Usage };

export interface ModelCapabilities {
  image: boolean;
  audio: boolean;
  /** Embedded text resources (always possible: they become text). */
  embeddedContext: boolean;
  /** Context window in tokens, when known (enables ACP usage_update). */
  contextWindow?: number;
  /** Whether a thinking level can be set. */
  thinking: boolean;
}

export interface ModelAdapter {
  /** `provider:model`, e.g. `anthropic:claude-sonnet-4-5`, or `demo`. */
  readonly id: string;
  readonly capabilities: ModelCapabilities;
  /**
   * Streams one model step. Must honour `signal` (end promptly, throwing an AbortError or
   * ending the stream); failures throw ModelError with a message that says what to fix.
   */
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent>;
}

export type ModelErrorKind = "auth" | "rate_limit" | "server" | "bad_request" | "bad_response" | "connection" | "config";

/** A model call that failed; `code` is always "model", `kind` says why. */
export class ModelError extends AgentKitError {
  readonly kind: ModelErrorKind;
  readonly status: number | undefined;
  constructor(kind: ModelErrorKind, message: string, options?: { status?: number; cause?: unknown }) {
    super("model", message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ModelError";
    this.kind = kind;
    this.status = options?.status;
  }
}
