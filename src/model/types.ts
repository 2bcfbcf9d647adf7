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

/**
 * How much a model may think before answering; `off` sends no reasoning setting. Providers map the levels to their
 * own budgets.
 */
export type ThinkingLevel = "off" | "low" | "medium" | "high";

/**
 * One model step's input, as the loop builds it: the system prompt, the whole transcript and the tools the model may
 * call.
 */
export interface ModelRequest {
  system?: string;
  /** The whole transcript so far (user, assistant, tool items). */
  items: Item[];
  tools: ModelToolSpec[];
  maxOutputTokens?: number;
  thinking?: ThinkingLevel;
}

/**
 * Why a model step ended, normalised across providers: `tool_calls` makes the loop run the tools and call the model
 * again.
 */
export type ModelFinishReason = "stop" | "tool_calls" | "length" | "content_filter" | "other";

/** One model step, streamed. Exactly one `finish` ends a successful stream. */
export type ModelEvent =
  | { type: "text_delta"; text: string }
  | { type: "reasoning_delta"; text: string }
  | { type: "tool_input_start"; callId: ToolCallId; toolName: string }
  | { type: "tool_input_delta"; callId: ToolCallId; text: string }
  | { type: "tool_call"; callId: ToolCallId; toolName: string; input: unknown }
  | { type: "finish"; reason: ModelFinishReason; usage?: Usage };

/**
 * What a model accepts, as the adapter knows it (known-model table, provider defaults, `CapabilityOverrides`): the
 * ACP agent advertises its prompt capabilities from this.
 */
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

/**
 * The model seam of the loop: one streamed step at a time. `createModelAdapter` returns one for a `provider:model`
 * spec; implement it to use another model library.
 */
export interface ModelAdapter {
  /** `provider:model`, e.g. `anthropic:claude-sonnet-4-5`, or `demo`. */
  readonly id: string;
  readonly capabilities: ModelCapabilities;
  /**
   * Streams one model step. Must honour `signal` (end promptly, throwing an AbortError or
   * ending the stream); failures throw ModelError with a message that says what to fix.
   */
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent>;
  /** Optional: start loading what the first call needs, in the background (hosts call it once a session opens). */
  preload?(): void;
}

/** `timeout`: a time bound on the call expired (connect, first byte, idle gap); the message names it. */
export type ModelErrorKind = "auth" | "rate_limit" | "server" | "bad_request" | "bad_response" | "connection" | "timeout" | "config";

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

/** Time bounds on one model call; each expiry ends the call with an error that names it. */
export interface ModelTimeouts {
  /** Request sent → response headers (the server accepted the request). Default 30 s. */
  connectMs?: number;
  /** Response headers → first streamed data. Default 90 s. */
  firstByteMs?: number;
  /** Longest silence between two streamed chunks. Default 90 s. */
  idleMs?: number;
  /**
   * Budget for getting a stream going, retries and backoff included: no new attempt starts
   * after it, and an attempt's connect / first-byte bounds are cut to what is left. Default 120 s.
   */
  totalMs?: number;
}

/**
 * The time bounds of a model call when `ModelTimeouts` leaves one out: connect, first byte, idle between chunks, and
 * the whole step.
 */
export const defaultModelTimeouts: Required<ModelTimeouts> = { connectMs: 30_000, firstByteMs: 90_000, idleMs: 90_000, totalMs: 120_000 };
