// Shared by the inspector's Node side and its page (no Node imports here).

export type Direction = "client" | "agent";

/** First line of a trace file. */
export interface TraceHeader {
  agentkitInspect: 1;
  startedAt: number;
  mode: "tap" | "drive" | "replay";
  agent: string;
  redacted: boolean;
}

/** One JSON-RPC message as seen on the wire (one trace line). */
export interface TraceMessage {
  ts: number;
  from: Direction;
  message: unknown;
}

/** Something the inspector itself reports (agent failed to start, exited …). */
export interface TraceNote {
  ts: number;
  note: { level: "info" | "warning" | "error"; text: string };
}

/** An attribute value as OTLP carries it (kvlist values are kept as their JSON text). */
export type SpanValue = string | number | boolean | null | SpanValue[];

/**
 * One OpenTelemetry span the agent exported to the inspector's OTLP receiver (docs/tracing.md),
 * flattened: ids in lower-case hex, times in epoch milliseconds (fractional), strings bounded.
 */
export interface TraceSpan {
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer (0 unspecified). */
  kind: number;
  /** The exporting process's `service.name`. */
  service: string;
  start: number;
  end: number;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  status: number;
  statusMessage?: string;
  attributes: Record<string, SpanValue>;
  events: { name: string; time: number }[];
}

/** Spans as they arrived (one export request's worth, those kept). */
export interface TraceSpans {
  ts: number;
  spans: TraceSpan[];
}

export type TraceLine = TraceMessage | TraceNote | TraceSpans;

export interface Issue {
  severity: "error" | "warning";
  /** The rule broken, e.g. `schema`, `order/update-after-prompt-answer`, `capability/fs.readTextFile`. */
  rule: string;
  detail: string;
}

/** A message as the page shows it: classified, paired and checked. */
export interface Entry {
  seq: number;
  ts: number;
  from: Direction;
  message: unknown;
  kind: "request" | "response" | "notification" | "invalid";
  method?: string;
  id?: string | number | null;
  sessionId?: string;
  /** For a request: its response's seq; for a response: its request's seq. */
  pairSeq?: number;
  /** Request → response time (on both ends of the pair). */
  latencyMs?: number;
  issues: Issue[];
}

export interface PendingAsk {
  key: string;
  sessionId: string | undefined;
  toolCallId: string | undefined;
  title: string;
  options: { optionId: string; name: string; kind: string }[];
}

export interface StatusInfo {
  mode: "tap" | "drive" | "view" | "replay";
  agent: string;
  state: "starting" | "running" | "ended" | "failed";
  detail?: string;
  trace?: string;
  /** Drive mode: the default cwd for new sessions and what the agent supports. */
  drive?: { cwd: string; loadSession: boolean };
}

export interface ReplayDiffLine {
  op: "same" | "removed" | "added";
  text: string;
}

/** What the server pushes to the page (SSE `data:` lines). */
export type ServerEvent =
  | { type: "hello"; status: StatusInfo; entries: Entry[]; notes: TraceNote[]; asks: PendingAsk[]; spans: TraceSpan[]; replay?: ReplayDiffLine[] }
  | { type: "spans"; spans: TraceSpan[] }
  | { type: "entry"; entry: Entry }
  | { type: "patch"; seq: number; pairSeq: number; latencyMs: number }
  | { type: "note"; note: TraceNote }
  | { type: "status"; status: StatusInfo }
  | { type: "asks"; asks: PendingAsk[] }
  | { type: "replay"; diff: ReplayDiffLine[] };
