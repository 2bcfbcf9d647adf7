import type { ItemId, SessionId, ToolCallId } from "./ids.js";

/** ACP-compatible tool kinds (the same wire values, owned here so core has no protocol import). */
export type ToolKind = "read" | "edit" | "delete" | "move" | "search" | "execute" | "think" | "fetch" | "switch_mode" | "other";

/** A file (and optionally a line) a tool call touches, for a client to follow along. */
export interface ToolLocation {
  path: string;
  line?: number;
}

/** A file change a tool made; `oldText: null` means the file was created. */
export interface FileDiff {
  path: string;
  oldText: string | null;
  newText: string;
}

/** What a tool returns: text for the model, plus structured data for hosts. */
export interface ToolResult {
  /** Text the model reads. */
  text: string;
  isError: boolean;
  /** Structured output (ACP `rawOutput`). */
  data?: unknown;
  diffs?: FileDiff[];
  /** Set when the command ran in a client terminal (ACP `terminal` content). */
  terminalId?: string;
}

/** One piece of an item: text, reasoning, a tool call or a tool result. */
export type Part =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string }
  /** Inline media (images, audio): base64 data. */
  | { type: "media"; mediaType: string; data: string; uri?: string }
  /** A reference the user attached; the model sees its URI and name. */
  | { type: "resource_link"; uri: string; name: string; title?: string; mimeType?: string; description?: string }
  /** An embedded text resource (e.g. a file the editor attached). */
  | { type: "resource"; uri: string; text: string; mimeType?: string }
  | { type: "tool_call"; callId: ToolCallId; toolName: string; input: unknown }
  | { type: "tool_result"; callId: ToolCallId; toolName: string; result: ToolResult };

/** Who an item comes from. */
export type ItemRole = "system" | "user" | "assistant" | "tool";

/** One committed transcript entry. */
export interface Item {
  id: ItemId;
  role: ItemRole;
  parts: Part[];
  createdAt: string;
  /** Free-form host data (e.g. the tool's title/kind for replay); never sent to the model. */
  meta?: Record<string, unknown>;
}

/** Token counts reported by the model for a turn. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  reasoningTokens?: number;
  cachedInputTokens?: number;
}

/** An item's text parts joined (reasoning and tool parts left out). */
export function textOf(item: Item): string {
  return item.parts.map((p) => (p.type === "text" ? p.text : "")).join("");
}

/**
 * The persisted transcript shape: everything needed to restart a session where it stopped.
 * JSON-serializable; stores keep it, the loop resumes from it.
 */
export interface LoopSnapshot {
  version: 1;
  sessionId: SessionId;
  items: Item[];
  metadata: Record<string, unknown>;
}
