import type { SessionId, ToolCallId } from "./ids.js";
import type { ToolKind, ToolLocation } from "./items.js";

/** What a permission check or an approval is about: the risk target, normalized. */
export interface PermissionTarget {
  /** Absolute, normalized paths the call reads or writes. */
  paths: string[];
  /** The command line for execute-kind tools. */
  command?: string;
  /** E.g. an MCP server name. */
  server?: string;
}

/** A blocking request for a human (or resolver) decision about one tool call. */
export interface ApprovalRequest {
  sessionId: SessionId;
  callId: ToolCallId;
  toolName: string;
  title: string;
  kind: ToolKind;
  input: unknown;
  locations: ToolLocation[];
  target: PermissionTarget;
  /** The workspace roots the session runs in (first = cwd). */
  roots: string[];
  /** Why approval is needed (from the permission policy). */
  reason: string;
}

/** The answer to an approval request: approve, deny (with a reason the model reads), or approve with patched input. */
export type ApprovalDecision =
  | { type: "approve" }
  | { type: "deny"; reason?: string }
  | { type: "approve_with_patched_input"; input: unknown };

/** Approves the call as requested. */
export const approve = (): ApprovalDecision => ({ type: "approve" });
/** Denies the call; the reason is fed back to the model as the tool result. */
export const deny = (reason?: string): ApprovalDecision => (reason === undefined ? { type: "deny" } : { type: "deny", reason });
/** Approves the call with `input` in place of what the model asked for. */
export const approveWithPatchedInput = (input: unknown): ApprovalDecision => ({ type: "approve_with_patched_input", input });
