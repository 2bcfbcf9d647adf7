import type * as acp from "@agentclientprotocol/sdk/unstable";
import type { PermissionResolution } from "./permissions.js";

/** The client's view of one tool call: the `tool_call` merged with every later update. */
export interface ToolCallState {
  toolCallId: string;
  title: string;
  kind: acp.ToolKind;
  status: acp.ToolCallStatus;
  content: acp.ToolCallContent[];
  locations: acp.ToolCallLocation[];
  rawInput?: unknown;
  rawOutput?: unknown;
}

/** A file diff the agent attached to a tool call (path, old and new text). */
export type DiffContent = Extract<acp.ToolCallContent, { type: "diff" }>;

/** A `session/request_permission` the agent sent, as a `permission_requested` event shows it. */
export interface PermissionAsked {
  toolCallId: string;
  title: string;
  kind: acp.ToolKind;
  options: acp.PermissionOption[];
  toolCall: acp.ToolCallUpdate;
}

/**
 * How a permission request was answered (the outcome sent, and which rule, memory or handler decided), as a
 * `permission_answered` event and `PromptResult.permissions` show it.
 */
export interface PermissionAnswered {
  toolCallId: string;
  title: string;
  outcome: acp.RequestPermissionOutcome;
  decision: PermissionResolution["decision"];
  optionKind?: acp.PermissionOptionKind;
  source: PermissionResolution["source"];
  reason: string;
  /** The policy denied but the agent offered no reject option (answered `cancelled`). */
  noRejectOption?: boolean;
}

/** Usage as ACP v1 reports it (`usage_update`): context tokens used / window size, cost. */
export interface ContextUsage {
  used: number;
  size: number;
  cost?: { amount: number; currency: string };
}

/** Everything `AcpSession.stream()` (and session listeners) deliver, in arrival order. */
export type AcpSessionEvent =
  | { type: "message_chunk"; text: string; content: acp.ContentBlock; messageId?: string }
  | { type: "thought_chunk"; text: string; content: acp.ContentBlock; messageId?: string }
  | { type: "user_message_chunk"; text: string; content: acp.ContentBlock; messageId?: string }
  | { type: "tool_call"; toolCall: ToolCallState }
  | { type: "tool_call_update"; toolCall: ToolCallState; update: acp.ToolCallUpdate; diffs: DiffContent[]; terminalIds: string[] }
  | { type: "plan"; entries: acp.PlanEntry[] }
  | { type: "mode_changed"; modeId: string }
  | { type: "config_changed"; configOptions: acp.SessionConfigOption[] }
  | { type: "usage"; usage: ContextUsage }
  | { type: "commands"; commands: acp.AvailableCommand[] }
  | { type: "session_info"; title?: string | null; updatedAt?: string | null }
  | { type: "notice"; severity: string; title: string; description?: string | null }
  /** Any other update kind (compaction …), passed through as received. */
  | { type: "update"; update: acp.SessionUpdate }
  | { type: "permission_requested"; request: PermissionAsked }
  | { type: "permission_answered"; answer: PermissionAnswered }
  | { type: "done"; stopReason: acp.StopReason; result: PromptResult }
  | { type: "error"; error: Error };

/** What `AcpSession.prompt()` resolves to. */
export interface PromptResult {
  stopReason: acp.StopReason;
  /** Agent message text of this turn, concatenated. */
  text: string;
  /** Thought text of this turn, concatenated. */
  thoughts: string;
  /** Tool calls of this turn, in first-seen order, with their final state. */
  toolCalls: ToolCallState[];
  /** The last `usage_update` of this turn, if any. */
  usage?: ContextUsage;
  /** Every permission answer given during this turn. */
  permissions: PermissionAnswered[];
  /** `_meta` of the PromptResponse, when the agent sent one. */
  meta?: Record<string, unknown>;
}

export function blockText(block: acp.ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "resource_link":
      return `[${block.name}](${block.uri})`;
    case "resource":
      return "text" in block.resource ? block.resource.text : `[${block.resource.uri}]`;
    default:
      return `[${block.type}]`;
  }
}

/** Applies updates to per-session tool-call state and turns them into events. */
export class ClientEventMapper {
  readonly toolCalls = new Map<string, ToolCallState>();

  map(update: acp.SessionUpdate): AcpSessionEvent {
    switch (update.sessionUpdate) {
      case "agent_message_chunk":
      case "agent_thought_chunk": {
        // The hot path of a streaming turn: one object per chunk, no spread.
        const event: Extract<AcpSessionEvent, { type: "message_chunk" | "thought_chunk" }> = {
          type: update.sessionUpdate === "agent_message_chunk" ? "message_chunk" : "thought_chunk",
          text: blockText(update.content),
          content: update.content,
        };
        if (update.messageId) event.messageId = update.messageId;
        return event;
      }
      case "user_message_chunk":
        return { type: "user_message_chunk", text: blockText(update.content), content: update.content, ...(update.messageId ? { messageId: update.messageId } : {}) };
      case "tool_call": {
        const state: ToolCallState = {
          toolCallId: update.toolCallId,
          title: update.title,
          kind: update.kind ?? "other",
          status: update.status ?? "pending",
          content: update.content ?? [],
          locations: update.locations ?? [],
          rawInput: update.rawInput,
          rawOutput: update.rawOutput,
        };
        this.toolCalls.set(state.toolCallId, state);
        return { type: "tool_call", toolCall: { ...state } };
      }
      case "tool_call_update": {
        const state = this.applyToolUpdate(update);
        const content = update.content ?? [];
        const diffs = content.filter((c): c is DiffContent => c.type === "diff");
        const terminalIds = content.flatMap((c) => (c.type === "terminal" ? [c.terminalId] : []));
        return { type: "tool_call_update", toolCall: { ...state }, update, diffs, terminalIds };
      }
      case "plan":
        return { type: "plan", entries: update.entries };
      case "current_mode_update":
        return { type: "mode_changed", modeId: update.currentModeId };
      case "config_option_update":
        return { type: "config_changed", configOptions: update.configOptions };
      case "usage_update":
        return { type: "usage", usage: { used: update.used, size: update.size, ...(update.cost ? { cost: { amount: update.cost.amount, currency: update.cost.currency } } : {}) } };
      case "available_commands_update":
        return { type: "commands", commands: update.availableCommands };
      case "session_info_update":
        return { type: "session_info", title: update.title, updatedAt: update.updatedAt };
      case "notice":
        return { type: "notice", severity: update.severity, title: update.title, description: update.description };
      default:
        return { type: "update", update };
    }
  }

  /** Merges a `tool_call_update` (only the fields it carries; lists replace). */
  applyToolUpdate(update: acp.ToolCallUpdate): ToolCallState {
    const state: ToolCallState = this.toolCalls.get(update.toolCallId) ?? {
      toolCallId: update.toolCallId,
      title: update.title ?? "",
      kind: update.kind ?? "other",
      status: update.status ?? "pending",
      content: [],
      locations: [],
    };
    if (update.title != null) state.title = update.title;
    if (update.kind != null) state.kind = update.kind;
    if (update.status != null) state.status = update.status;
    if (update.content != null) state.content = update.content;
    if (update.locations != null) state.locations = update.locations;
    if (update.rawInput !== undefined) state.rawInput = update.rawInput;
    if (update.rawOutput !== undefined) state.rawOutput = update.rawOutput;
    this.toolCalls.set(state.toolCallId, state);
    return state;
  }
}

/** Collects a turn's result from its events. */
export class TurnCollector {
  text = "";
  thoughts = "";
  usage: ContextUsage | undefined;
  readonly permissions: PermissionAnswered[] = [];
  readonly #toolCalls = new Map<string, ToolCallState>();

  add(event: AcpSessionEvent): void {
    switch (event.type) {
      case "message_chunk":
        this.text += event.text;
        break;
      case "thought_chunk":
        this.thoughts += event.text;
        break;
      case "tool_call":
      case "tool_call_update":
        this.#toolCalls.set(event.toolCall.toolCallId, event.toolCall);
        break;
      case "usage":
        this.usage = event.usage;
        break;
      case "permission_answered":
        this.permissions.push(event.answer);
        break;
      default:
        break;
    }
  }

  result(response: acp.PromptResponse): PromptResult {
    return {
      stopReason: response.stopReason,
      text: this.text,
      thoughts: this.thoughts,
      toolCalls: [...this.#toolCalls.values()],
      ...(this.usage ? { usage: this.usage } : {}),
      permissions: this.permissions,
      ...(response._meta ? { meta: response._meta } : {}),
    };
  }
}
