import { randomUUID } from "node:crypto";

/** Identifies a loop session (the agent's own id, distinct from any ACP session id). */
export type SessionId = string;
/** Identifies one tool call within a session; stable across events, approvals and results. */
export type ToolCallId = string;
/** Identifies one streamed content part (text or reasoning) within a turn. */
export type PartId = string;
/** Identifies one transcript item. */
export type ItemId = string;

/** A fresh random id with a readable prefix (`call_…`, `item_…`). */
export function newId(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll("-", "").slice(0, 20)}`;
}
