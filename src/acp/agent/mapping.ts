import type { SessionUpdate, ToolCallContent, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { AgentEvent, ApprovalRequest, PartKind, ToolProgress, ToolResult } from "../../core/index.js";
import { newId } from "../../core/index.js";
import { planUpdateFor } from "./plan-tool.js";

interface CallState {
  /** Text progress so far (ACP `content` replaces the list, so we resend the whole text). */
  progressText: string;
  terminalId: string | undefined;
}

/**
 * Turns one session's loop events into ACP `session/update`s. Stateful: an `append_text` only
 * names its part, so the kind from `begin_part` is remembered; each part gets a synthesized
 * ACP message id. Approval events are display-only (the runtime asks through the interrupt).
 */
export class AgentUpdateMapper {
  readonly #parts = new Map<string, { kind: PartKind; messageId: string }>();
  readonly #calls = new Map<string, CallState>();

  map(event: AgentEvent): SessionUpdate[] {
    switch (event.type) {
      case "content_delta":
        return this.#delta(event.delta);
      case "tool_call_requested":
        this.#calls.set(event.callId, { progressText: "", terminalId: undefined });
        return [
          {
            sessionUpdate: "tool_call",
            toolCallId: event.callId,
            title: event.title,
            kind: event.kind,
            status: "pending",
            locations: event.locations.map((l) => ({ ...l })),
            rawInput: event.input,
          },
        ];
      case "approval_resolved":
        if (event.decision.type !== "approve_with_patched_input") return [];
        return [{ sessionUpdate: "tool_call_update", toolCallId: event.callId, rawInput: event.decision.input }];
      case "tool_execution_started":
        return [{ sessionUpdate: "tool_call_update", toolCallId: event.callId, status: "in_progress" }];
      case "tool_execution_progress":
        return this.#progress(event.callId, event.progress);
      case "tool_result": {
        this.#calls.delete(event.callId);
        const done: SessionUpdate = { sessionUpdate: "tool_call_update", ...toolResultUpdate(event.callId, event.result) };
        const plan = planUpdateFor(event.toolName, event.result);
        return plan ? [done, plan] : [done];
      }
      case "usage":
        if (event.contextWindow === undefined) return [];
        return [{ sessionUpdate: "usage_update", used: event.usage.totalTokens, size: event.contextWindow }];
      case "turn_finished":
        this.#parts.clear();
        return [];
      default:
        return [];
    }
  }

  #delta(delta: Extract<AgentEvent, { type: "content_delta" }>["delta"]): SessionUpdate[] {
    switch (delta.type) {
      case "begin_part":
        this.#parts.set(delta.partId, { kind: delta.kind, messageId: newId("msg") });
        return [];
      case "append_text": {
        if (delta.text.length === 0) return [];
        let part = this.#parts.get(delta.partId);
        if (!part) {
          // A delta without begin_part: treat it as message text rather than drop it.
          part = { kind: "text", messageId: newId("msg") };
          this.#parts.set(delta.partId, part);
        }
        const content = { type: "text" as const, text: delta.text };
        return [
          part.kind === "reasoning"
            ? { sessionUpdate: "agent_thought_chunk", content, messageId: part.messageId }
            : { sessionUpdate: "agent_message_chunk", content, messageId: part.messageId },
        ];
      }
      case "commit_part":
        this.#parts.delete(delta.partId);
        return [];
    }
  }

  #progress(callId: string, progress: ToolProgress): SessionUpdate[] {
    const state = this.#calls.get(callId) ?? { progressText: "", terminalId: undefined };
    this.#calls.set(callId, state);
    if (progress.text) state.progressText += progress.text;
    const newTerminal = progress.terminalId !== undefined && progress.terminalId !== state.terminalId;
    if (progress.terminalId) state.terminalId = progress.terminalId;
    // An embedded terminal already shows the live output: resending it for each chunk adds nothing.
    if (state.terminalId && !newTerminal && !progress.message) return [];
    const update: SessionUpdate = { sessionUpdate: "tool_call_update", toolCallId: callId, status: "in_progress" };
    if (progress.text || progress.terminalId) {
      const content: ToolCallContent[] = [];
      if (state.terminalId) content.push({ type: "terminal", terminalId: state.terminalId });
      else if (state.progressText) content.push(textContent(state.progressText));
      update.content = content;
    }
    if (progress.message) update._meta = { agentkit: { progress: progress.message } };
    return [update];
  }
}

function textContent(text: string): ToolCallContent {
  return { type: "content", content: { type: "text", text } };
}

/** The terminal update for a tool result: status, rawOutput, and diff / terminal / text content. */
export function toolResultUpdate(callId: string, result: ToolResult): ToolCallUpdate {
  const content: ToolCallContent[] = [];
  for (const diff of result.diffs ?? []) content.push({ type: "diff", path: diff.path, oldText: diff.oldText, newText: diff.newText });
  if (result.terminalId) content.push({ type: "terminal", terminalId: result.terminalId });
  else if (result.text) content.push(textContent(result.text));
  return {
    toolCallId: callId,
    status: result.isError ? "failed" : "completed",
    rawOutput: result.data !== undefined ? result.data : { text: result.text, isError: result.isError },
    content,
  };
}

/** The `toolCall` a permission request carries: what the call is, as the editor already shows it. */
export function approvalToolCall(request: ApprovalRequest): ToolCallUpdate {
  return {
    toolCallId: request.callId,
    title: request.title,
    kind: request.kind,
    status: "pending",
    locations: request.locations.map((l) => ({ ...l })),
    rawInput: request.input,
  };
}
