import type { ContentBlock, SessionUpdate } from "@agentclientprotocol/sdk";
import type { Item, Part, ToolKind, ToolLocation, ToolResult } from "../../core/index.js";
import { newId } from "../../core/index.js";
import { toolResultUpdate } from "./mapping.js";
import { planUpdateFor } from "./plan-tool.js";

/** How a tool call is shown: what `meta.calls` of a tool item records (or the tool registry derives). */
export interface ReplayedCallInfo {
  title: string;
  kind: ToolKind;
  locations: ToolLocation[];
}

/** Describes a call that has no `meta.calls` entry (older files, repaired calls). */
export type DescribeCall = (toolName: string, input: unknown) => ReplayedCallInfo | undefined;

/**
 * The error result `repairDanglingToolCalls` gives a tool call that was running when the agent died, so the model
 * knows its effect is unknown.
 */
export const INTERRUPTED_TOOL_TEXT = "The agent stopped (crash or kill) before this tool call finished; it may or may not have taken effect.";

/**
 * Tool calls without a result (the process died while they ran) get an error result right after
 * their assistant item, so the transcript is valid for providers again. Nothing is written: a
 * later load repairs the same way. Returns the items unchanged when nothing dangles.
 *
 * Found by position, not by call id alone: ids repeat within a session (local models number
 * their calls per turn, `call_1` …), so a result answers the latest call with its id before it,
 * and a later call with the same id leaves an unanswered earlier one dangling.
 */
export function repairDanglingToolCalls(items: readonly Item[]): Item[] {
  const unanswered = new Map<string, ToolCallPart>();
  const dangling = new Set<ToolCallPart>();
  for (const item of items) {
    for (const part of item.parts) {
      if (part.type === "tool_result") unanswered.delete(part.callId);
      if (part.type !== "tool_call" || item.role !== "assistant") continue;
      const earlier = unanswered.get(part.callId);
      if (earlier) dangling.add(earlier);
      unanswered.set(part.callId, part);
    }
  }
  for (const call of unanswered.values()) dangling.add(call);
  const out: Item[] = [];
  for (const item of items) {
    out.push(item);
    if (item.role !== "assistant") continue;
    const calls = item.parts.filter((p): p is ToolCallPart => p.type === "tool_call" && dangling.has(p));
    if (calls.length === 0) continue;
    out.push({
      id: newId("item"),
      role: "tool",
      parts: calls.map((call) => ({ type: "tool_result", callId: call.callId, toolName: call.toolName, result: { text: INTERRUPTED_TOOL_TEXT, isError: true } })),
      createdAt: item.createdAt,
      meta: { repaired: true },
    });
  }
  return out;
}

type ToolCallPart = Extract<Part, { type: "tool_call" }>;

/**
 * `replayUpdates(repairDanglingToolCalls(items))`, item by item, for a transcript read as it
 * streams: each item's updates are ready as soon as it is read, except from a tool call on,
 * until its result is read (the loop commits results in the next item, so that is one item's
 * wait). A call found dangling (its id called again first, or never answered) holds the rest
 * until `finish`, which repairs it exactly as a whole-transcript replay would and describes it
 * with the session's tools (the only updates that need them: the loop records every answered
 * call's title, kind and locations with its result).
 */
export class ReplayStream {
  #held: Item[] = [];
  readonly #unanswered = new Map<string, ToolCallPart>();
  #dangling = false;

  /** The updates that can go now, having read `item`. */
  push(item: Item): SessionUpdate[] {
    for (const part of item.parts) {
      if (part.type === "tool_result") this.#unanswered.delete(part.callId);
      if (part.type !== "tool_call" || item.role !== "assistant") continue;
      if (this.#unanswered.has(part.callId)) this.#dangling = true;
      this.#unanswered.set(part.callId, part);
    }
    this.#held.push(item);
    if (this.#unanswered.size > 0 || this.#dangling) return [];
    return replayUpdates(this.#held.splice(0));
  }

  /** The rest, once the whole transcript is read; `describe` names calls the transcript does not. */
  finish(describe?: DescribeCall): SessionUpdate[] {
    return replayUpdates(repairDanglingToolCalls(this.#held.splice(0)), describe);
  }
}

/**
 * The `session/update`s that show a stored transcript again, in its order: user parts as
 * `user_message_chunk` (the item's id as message id), assistant text / reasoning as `agent_message_chunk` /
 * `agent_thought_chunk` (one message id per part), and each tool call as one `tool_call` with
 * its final status, input, output and content (diff / text / terminal), sent where its result
 * was committed; a plan tool's result also sends the `plan` it set.
 */
export function replayUpdates(items: readonly Item[], describe?: DescribeCall): SessionUpdate[] {
  const updates: SessionUpdate[] = [];
  const inputs = new Map<string, unknown>();
  for (const item of items) {
    const calls = callInfo(item);
    for (const part of item.parts) {
      if (item.role === "user" || item.role === "system") {
        const content = userContent(part);
        // One message per stored item, under the item's own id: replays are stable and two
        // prompts never merge into one message in clients that group chunks by id.
        if (content) updates.push({ sessionUpdate: "user_message_chunk", content, messageId: item.id });
        continue;
      }
      switch (part.type) {
        case "text":
          if (part.text) updates.push({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: part.text }, messageId: newId("msg") });
          break;
        case "reasoning":
          if (part.text) updates.push({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: part.text }, messageId: newId("msg") });
          break;
        case "tool_call":
          inputs.set(part.callId, part.input);
          break;
        case "tool_result":
          updates.push(...toolCallUpdates(part.callId, part.toolName, inputs.get(part.callId), part.result, calls.get(part.callId), describe));
          break;
        default:
          break;
      }
    }
  }
  return updates;
}

function toolCallUpdates(
  callId: string,
  toolName: string,
  input: unknown,
  result: ToolResult,
  recorded: ReplayedCallInfo | undefined,
  describe: DescribeCall | undefined,
): SessionUpdate[] {
  const info = recorded ?? safeDescribe(describe, toolName, input) ?? { title: toolName, kind: "other" as const, locations: [] };
  const final = toolResultUpdate(callId, result);
  const call: SessionUpdate = {
    sessionUpdate: "tool_call",
    toolCallId: callId,
    title: info.title,
    kind: info.kind,
    status: final.status ?? "completed",
    locations: info.locations.map((l) => ({ ...l })),
    rawInput: input,
    rawOutput: final.rawOutput,
    content: final.content ?? [],
  };
  const plan = planUpdateFor(toolName, result);
  return plan ? [call, plan] : [call];
}

function safeDescribe(describe: DescribeCall | undefined, toolName: string, input: unknown): ReplayedCallInfo | undefined {
  try {
    return describe?.(toolName, input);
  } catch {
    return undefined;
  }
}

/** `meta.calls` of a tool item (written by the loop), by call id. */
function callInfo(item: Item): Map<string, ReplayedCallInfo> {
  const out = new Map<string, ReplayedCallInfo>();
  const calls = item.meta?.calls;
  if (!Array.isArray(calls)) return out;
  for (const raw of calls as unknown[]) {
    if (typeof raw !== "object" || raw === null) continue;
    const c = raw as { callId?: unknown; title?: unknown; kind?: unknown; locations?: unknown };
    if (typeof c.callId !== "string") continue;
    out.set(c.callId, {
      title: typeof c.title === "string" ? c.title : "",
      kind: (typeof c.kind === "string" ? c.kind : "other") as ToolKind,
      locations: Array.isArray(c.locations) ? (c.locations as ToolLocation[]).filter((l) => typeof l?.path === "string") : [],
    });
  }
  return out;
}

/** A user part as the ACP content block the client originally sent. */
function userContent(part: Part): ContentBlock | undefined {
  switch (part.type) {
    case "text":
      return part.text ? { type: "text", text: part.text } : undefined;
    case "resource_link":
      return {
        type: "resource_link",
        uri: part.uri,
        name: part.name,
        ...(part.title ? { title: part.title } : {}),
        ...(part.mimeType ? { mimeType: part.mimeType } : {}),
        ...(part.description ? { description: part.description } : {}),
      };
    case "resource":
      return { type: "resource", resource: { uri: part.uri, text: part.text, ...(part.mimeType ? { mimeType: part.mimeType } : {}) } };
    case "media":
      if (part.mediaType.startsWith("audio/")) return { type: "audio", data: part.data, mimeType: part.mediaType };
      return { type: "image", data: part.data, mimeType: part.mediaType, ...(part.uri ? { uri: part.uri } : {}) };
    default:
      return undefined;
  }
}
