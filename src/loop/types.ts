import type {
  ApprovalDecision,
  ApprovalRequest,
  Item,
  SessionId,
  ToolCallId,
  ToolResult,
  LoopSnapshot,
  TranscriptObserver,
  TurnResult,
} from "../core/index.js";

/**
 * Why `LoopDriver.step()` stopped before the turn finished: a tool call waiting for a decision, nothing to do until
 * input, or a point between tool results and the next model call where the host may interject.
 */
export type LoopInterrupt =
  /** A tool call needs a decision; resolve it with `driver.resolveApproval(callId, …)`. */
  | { type: "approval_request"; request: ApprovalRequest }
  /** The driver has nothing to do until `submitInput`. */
  | { type: "awaiting_input" }
  /** Tool results were committed; the host may `submitInput` to interject before the next model call. */
  | { type: "after_tool_result"; results: Array<{ callId: ToolCallId; toolName: string; result: ToolResult }> };

/** What one `LoopDriver.step()` returns: the turn's result, or an interrupt the host answers before stepping again. */
export type LoopStep = { type: "finished"; result: TurnResult } | { type: "interrupt"; interrupt: LoopInterrupt };

/** What the input port hands the loop: user items (text, media, resources). */
export type InputItems = Item[];


/** Session configuration for `agent.start()`. */
export interface SessionConfig {
  sessionId?: SessionId;
  /** Absolute working directory; defaults to process.cwd(). */
  cwd?: string;
  /** Further approved roots besides cwd. */
  additionalDirectories?: string[];
  metadata?: Record<string, unknown>;
  /** Resume from a snapshot (its items become the transcript; nothing is re-emitted). */
  snapshot?: LoopSnapshot;
  /** Extra transcript observers for this session only (e.g. a store persisting it), after the agent's own. */
  transcriptObservers?: TranscriptObserver[];
}

export type { ApprovalDecision, ApprovalRequest, LoopSnapshot };
