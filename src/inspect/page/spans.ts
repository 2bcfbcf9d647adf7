// A turn's spans (the agent's OpenTelemetry export), linked to its messages by trace id (pure: no DOM).
import type { Entry, TraceSpan } from "../types.js";
import { isObject, type TurnTiming } from "./model.js";

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
/** Spans starting this close outside a turn's messages still belong to it (the agent's clock vs the inspector's reading). */
const SLACK_MS = 100;
/** Rows drawn per turn (the recorder keeps up to 1000 per trace). */
export const MAX_ROWS = 300;

/**
 * The W3C trace context a message carries in `_meta.traceparent` (ACP's reserved key; our client
 * and agent put it on every request they send with tracing on): the trace and the sender's span.
 */
export function traceparentOf(message: unknown): { traceId: string; spanId: string } | undefined {
  const params = isObject(message) && isObject(message.params) ? message.params : undefined;
  const traceparent = params && isObject(params._meta) ? params._meta.traceparent : undefined;
  const m = typeof traceparent === "string" ? TRACEPARENT.exec(traceparent) : null;
  return m ? { traceId: m[1]!, spanId: m[2]! } : undefined;
}

export interface SpanRow {
  span: TraceSpan;
  depth: number;
}

export interface TurnSpans {
  traceIds: string[];
  rows: SpanRow[];
  /** Spans of the turn not drawn (beyond MAX_ROWS). */
  more: number;
  start: number;
  end: number;
}

/**
 * The spans of one prompt turn: those of the traces its messages name (`_meta.traceparent` of the
 * prompt, and of the agent's own requests — permission, fs, terminal) or whose spans name its
 * session (`gen_ai.conversation.id`), started within the turn; as a tree (parent before children,
 * by start time), roots being the spans whose parent is not here (e.g. the editor's own). A
 * permission question's span (the turn's child) is drawn under the `execute_tool` span of the
 * tool call the question named on the wire: the wait is part of that call.
 */
export function turnSpans(turn: TurnTiming, entries: Entry[], spans: TraceSpan[]): TurnSpans | undefined {
  if (spans.length === 0) return undefined;
  const request = entries[turn.seq - 1];
  const last = request?.pairSeq ?? entries.length;
  const end = turn.durationMs !== undefined ? turn.start + turn.durationMs : Infinity;
  const within = (t: number): boolean => t >= turn.start - SLACK_MS && t <= end + SLACK_MS;
  const traceIds = new Set<string>();
  /** The span that asked a permission question → the tool call it asked about (from the wire). */
  const askedFor = new Map<string, string>();
  for (const e of entries.slice(turn.seq - 1, last)) {
    const tp = e.sessionId === turn.sessionId ? traceparentOf(e.message) : undefined;
    if (!tp) continue;
    traceIds.add(tp.traceId);
    const params = isObject(e.message) && isObject(e.message.params) ? e.message.params : {};
    if (e.method === "session/request_permission" && isObject(params.toolCall) && typeof params.toolCall.toolCallId === "string") askedFor.set(tp.spanId, params.toolCall.toolCallId);
  }
  for (const s of spans) if (s.attributes["gen_ai.conversation.id"] === turn.sessionId && within(s.start)) traceIds.add(s.traceId);
  const mine = spans.filter((s) => traceIds.has(s.traceId) && within(s.start));
  if (mine.length === 0) return undefined;
  const ids = new Set(mine.map((s) => s.spanId));
  // A permission question's span is the turn's child; drawn under the execute_tool span of the call it asked about.
  const toolSpans = new Map(mine.flatMap((s) => (typeof s.attributes["gen_ai.tool.call.id"] === "string" ? [[s.attributes["gen_ai.tool.call.id"], s.spanId] as const] : [])));
  const children = new Map<string, TraceSpan[]>();
  const roots: TraceSpan[] = [];
  for (const s of mine) {
    const tool = toolSpans.get(askedFor.get(s.spanId) ?? "");
    const parent = tool ?? (s.parentSpanId && s.parentSpanId !== s.spanId && ids.has(s.parentSpanId) ? s.parentSpanId : undefined);
    if (parent === undefined) roots.push(s);
    else if (children.has(parent)) children.get(parent)!.push(s);
    else children.set(parent, [s]);
  }
  const byStart = (a: TraceSpan, b: TraceSpan): number => a.start - b.start;
  const rows: SpanRow[] = [];
  const seen = new Set<TraceSpan>();
  // Depth first without recursion; `seen` guards against a parent cycle in a malformed export.
  const stack: SpanRow[] = roots.sort(byStart).reverse().map((span) => ({ span, depth: 0 }));
  while (stack.length > 0 && rows.length < MAX_ROWS) {
    const row = stack.pop()!;
    if (seen.has(row.span)) continue;
    seen.add(row.span);
    rows.push(row);
    const kids = [...(children.get(row.span.spanId) ?? [])].sort(byStart).reverse();
    for (const span of kids) stack.push({ span, depth: row.depth + 1 });
  }
  return {
    traceIds: [...new Set(mine.map((s) => s.traceId))],
    rows,
    more: mine.length - rows.length,
    start: Math.min(...mine.map((s) => s.start)),
    end: Math.max(...mine.map((s) => Math.max(s.end, s.start))),
  };
}

/** What a span is, for its colour: the GenAI operation, a permission wait, another ACP request, or other. */
export function spanOp(span: TraceSpan): string {
  const op = span.attributes["gen_ai.operation.name"];
  if (op === "invoke_agent" || op === "chat" || op === "execute_tool") return op;
  if (span.name === "session/request_permission") return "permission";
  return span.attributes["rpc.method"] !== undefined ? "rpc" : "other";
}

/** Messages by the span that sent them (the span id of their `_meta.traceparent`). */
export function messagesBySpan(entries: Entry[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of entries) {
    const tp = traceparentOf(e.message);
    if (tp && !out.has(tp.spanId)) out.set(tp.spanId, e.seq);
  }
  return out;
}
