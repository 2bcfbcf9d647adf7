import type { PartId, SessionId, ToolCallId } from "./ids.js";
import type { Item, ToolKind, ToolLocation, ToolResult, Usage } from "./items.js";
import type { ApprovalDecision, ApprovalRequest } from "./approval.js";

/** What a streamed part holds: answer text or the model's reasoning. */
export type PartKind = "text" | "reasoning";

/** Streaming content: a part is begun with its kind, appended to, then committed. */
export type Delta =
  | { type: "begin_part"; partId: PartId; kind: PartKind }
  | { type: "append_text"; partId: PartId; text: string }
  | { type: "commit_part"; partId: PartId };

/** Why a turn ended (`tool_call`: the loop keeps driving; the rest end the turn). */
export type FinishReason = "completed" | "tool_call" | "max_tokens" | "max_turns" | "cancelled" | "blocked" | "error" | "other";

/** The outcome of one turn: why it finished, the items it added, its usage. */
export interface TurnResult {
  finishReason: FinishReason;
  /** Items committed during this turn, in order. */
  items: Item[];
  usage?: Usage;
  /** Set when finishReason is "error". */
  error?: string;
}

/** Progress a running tool reports (shell output, a nested agent's stream …). */
export interface ToolProgress {
  message?: string;
  /** Text to append to what the host shows for this call (e.g. output so far). */
  text?: string;
  terminalId?: string;
  data?: unknown;
}

/** Everything the loop reports while it runs (deltas, tool calls, approvals, results, usage, the end). */
export type AgentEvent =
  | { type: "run_started" }
  | { type: "turn_started"; turn: number }
  | { type: "content_delta"; delta: Delta }
  | { type: "tool_input_delta"; callId: ToolCallId; toolName: string; text: string }
  | {
      type: "tool_call_requested";
      callId: ToolCallId;
      toolName: string;
      title: string;
      kind: ToolKind;
      input: unknown;
      locations: ToolLocation[];
    }
  | { type: "approval_required"; request: ApprovalRequest }
  | { type: "approval_resolved"; callId: ToolCallId; decision: ApprovalDecision }
  | { type: "tool_execution_started"; callId: ToolCallId; toolName: string; input: unknown }
  | { type: "tool_execution_progress"; callId: ToolCallId; progress: ToolProgress }
  | { type: "tool_result"; callId: ToolCallId; toolName: string; result: ToolResult }
  | { type: "usage"; usage: Usage; contextWindow?: number }
  | { type: "warning"; message: string }
  | { type: "run_failed"; message: string }
  | { type: "turn_finished"; result: TurnResult };

/** Every event carries its session so one observer can serve many sessions. */
export interface ObservedEvent {
  sessionId: SessionId;
  event: AgentEvent;
}

/** An item appended to a session's transcript. */
export interface TranscriptEvent {
  sessionId: SessionId;
  item: Item;
}

/** Receives the events of every session of a loop (one observer serves many sessions). */
export interface LoopObserver {
  handleEvent(event: ObservedEvent): void;
  /**
   * A promise while this observer holds more of the session's output than it allows (a client
   * that reads slowly): the loop takes no more of the model's stream until it settles.
   */
  backlog?(sessionId: SessionId): Promise<void> | undefined;
}

/** Gets every committed item; the loop awaits it, so a store can flush before the turn goes on. */
export interface TranscriptObserver {
  handleItem(event: TranscriptEvent): void | Promise<void>;
}
