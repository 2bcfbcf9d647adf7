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

export type TraceLine = TraceMessage | TraceNote;

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
  | { type: "hello"; status: StatusInfo; entries: Entry[]; notes: TraceNote[]; asks: PendingAsk[]; replay?: ReplayDiffLine[] }
  | { type: "entry"; entry: Entry }
  | { type: "patch"; seq: number; pairSeq: number; latencyMs: number }
  | { type: "note"; note: TraceNote }
  | { type: "status"; status: StatusInfo }
  | { type: "asks"; asks: PendingAsk[] }
  | { type: "replay"; diff: ReplayDiffLine[] };
