// The page's view model, assembled from entries (pure: no DOM).
import type { Entry } from "../types.js";

type Json = Record<string, unknown>;
export const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

export interface ToolItem {
  type: "tool";
  toolCallId: string;
  title: string;
  kind: string;
  status: string;
  content: unknown[];
  rawInput: unknown;
  rawOutput: unknown;
  seq: number;
}

export type ConvItem =
  | { type: "user" | "agent" | "thought"; text: string; seq: number }
  | ToolItem
  | { type: "plan"; entries: { content: string; status: string; priority: string }[]; seq: number }
  | { type: "permission"; seq: number; toolCallId: string | undefined; title: string; options: { optionId: string; name: string; kind: string }[]; answer: string | undefined; waitedMs: number | undefined }
  | { type: "stop"; seq: number; stopReason: string; latencyMs: number | undefined }
  | { type: "error"; seq: number; text: string }
  | { type: "cancel"; seq: number }
  | { type: "meta"; seq: number; text: string };

export interface SessionView {
  sessionId: string;
  cwd: string | undefined;
  title: string | undefined;
  items: ConvItem[];
  usage: { used: number; size: number; cost?: string } | undefined;
  modes: { currentModeId: string; availableModes: { id: string; name: string }[] } | undefined;
  configOptions: { id: string; name: string; type: string; currentValue: unknown; options: { value: string; name: string }[] }[];
  promptInFlight: boolean;
  messageCount: number;
  issueCount: number;
}

export interface Terminal {
  command: string;
  output: string;
  exit: string | undefined;
}

export function blockText(block: unknown): string {
  if (!isObject(block)) return "";
  switch (block.type) {
    case "text":
      return str(block.text) ?? "";
    case "resource_link":
      return `[${str(block.name) ?? str(block.uri) ?? "link"}]`;
    case "resource":
      return `[resource ${isObject(block.resource) ? (str(block.resource.uri) ?? "") : ""}]`;
    default:
      return `[${String(block.type)}]`;
  }
}

function flatOptions(options: unknown): { value: string; name: string }[] {
  if (!Array.isArray(options)) return [];
  return options.flatMap((o: unknown) => {
    if (!isObject(o)) return [];
    if (Array.isArray(o.options)) return flatOptions(o.options);
    return typeof o.value === "string" ? [{ value: o.value, name: str(o.name) ?? o.value }] : [];
  });
}

function configOptions(list: unknown): SessionView["configOptions"] {
  if (!Array.isArray(list)) return [];
  return list.filter(isObject).map((o) => ({ id: str(o.id) ?? "", name: str(o.name) ?? "", type: str(o.type) ?? "select", currentValue: o.currentValue, options: flatOptions(o.options) }));
}

type PlanItem = ConvItem & { type: "plan" };

/** The state of one pass over the entries, shared by the handlers below. */
class Assembly {
  readonly sessions = new Map<string, SessionView>();
  readonly terminals = new Map<string, Terminal>();
  readonly terminalRequests = new Map<number, string>();
  /** By "sessionId/toolCallId". */
  readonly tools = new Map<string, ToolItem>();
  /** Sessions with a prompt open at this point (agents often echo the prompt as user chunks). */
  readonly turnOpen = new Set<string>();
  readonly plans = new Map<string, PlanItem>();
  constructor(readonly entries: Entry[]) {}

  bySeq(seq: number | undefined): Entry | undefined {
    return seq === undefined ? undefined : this.entries[seq - 1];
  }

  /** The params of the request an entry answers. */
  requestParams(e: Entry): Json {
    const req = this.bySeq(e.pairSeq);
    return req && isObject(req.message) && isObject(req.message.params) ? req.message.params : {};
  }

  session(id: string): SessionView {
    let s = this.sessions.get(id);
    if (!s) {
      s = { sessionId: id, cwd: undefined, title: undefined, items: [], usage: undefined, modes: undefined, configOptions: [], promptInFlight: false, messageCount: 0, issueCount: 0 };
      this.sessions.set(id, s);
    }
    return s;
  }
}

/** One entry as the handlers see it. */
interface Step {
  a: Assembly;
  e: Entry;
  m: Json;
  params: Json;
  result: Json | undefined;
  /** The entry's session (handlers that need one are not called without). */
  sessionId: string;
}

function appendText(s: SessionView, type: "user" | "agent" | "thought", text: string, seq: number): void {
  const last = s.items[s.items.length - 1];
  if (last && last.type === type) last.text += text;
  else s.items.push({ type, text, seq });
}

/** What each `session/update` kind does to its session's view. */
const updateHandlers: Record<string, (s: SessionView, u: Json, step: Step) => void> = {
  user_message_chunk: (s, u, { a, e, sessionId }) => {
    if (!a.turnOpen.has(sessionId)) appendText(s, "user", blockText(u.content), e.seq);
  },
  agent_message_chunk: (s, u, { e }) => appendText(s, "agent", blockText(u.content), e.seq),
  agent_thought_chunk: (s, u, { e }) => appendText(s, "thought", blockText(u.content), e.seq),
  tool_call: (s, u, { a, e, sessionId }) => {
    const id = str(u.toolCallId) ?? "";
    const item: ToolItem = { type: "tool", toolCallId: id, title: str(u.title) ?? "", kind: str(u.kind) ?? "other", status: str(u.status) ?? "pending", content: Array.isArray(u.content) ? u.content : [], rawInput: u.rawInput, rawOutput: u.rawOutput, seq: e.seq };
    a.tools.set(`${sessionId}/${id}`, item);
    s.items.push(item);
  },
  tool_call_update: (_s, u, { a, sessionId }) => {
    const item = a.tools.get(`${sessionId}/${str(u.toolCallId) ?? ""}`);
    if (!item) return;
    if (typeof u.title === "string") item.title = u.title;
    if (typeof u.status === "string") item.status = u.status;
    if (typeof u.kind === "string") item.kind = u.kind;
    if (Array.isArray(u.content)) item.content = u.content;
    if (u.rawInput !== undefined) item.rawInput = u.rawInput;
    if (u.rawOutput !== undefined) item.rawOutput = u.rawOutput;
  },
  plan: (s, u, { a, e, sessionId }) => {
    const list = (Array.isArray(u.entries) ? u.entries : []).filter(isObject).map((p) => ({ content: str(p.content) ?? "", status: str(p.status) ?? "", priority: str(p.priority) ?? "" }));
    const existing = a.plans.get(sessionId);
    if (existing) return void (existing.entries = list);
    const item = { type: "plan" as const, entries: list, seq: e.seq };
    a.plans.set(sessionId, item);
    s.items.push(item);
  },
  usage_update: (s, u) => {
    s.usage = { used: Number(u.used), size: Number(u.size), ...(isObject(u.cost) ? { cost: `${String(u.cost.amount)} ${String(u.cost.currency)}` } : {}) };
  },
  current_mode_update: (s, u, { e }) => {
    if (s.modes && typeof u.currentModeId === "string") s.modes.currentModeId = u.currentModeId;
    s.items.push({ type: "meta", seq: e.seq, text: `mode → ${String(u.currentModeId)}` });
  },
  config_option_update: (s, u) => void (s.configOptions = configOptions(u.configOptions)),
  session_info_update: (s, u) => {
    if (typeof u.title === "string") s.title = u.title;
  },
  available_commands_update: () => undefined,
};

function sessionAttached({ a, e, result, sessionId }: Step): void {
  if (!result) return;
  const s = a.session(sessionId);
  s.cwd = str(a.requestParams(e).cwd);
  if (isObject(result.modes)) {
    const modes = result.modes;
    s.modes = { currentModeId: str(modes.currentModeId) ?? "", availableModes: (Array.isArray(modes.availableModes) ? modes.availableModes : []).filter(isObject).map((x) => ({ id: str(x.id) ?? "", name: str(x.name) ?? "" })) };
  }
  if (result.configOptions) s.configOptions = configOptions(result.configOptions);
}

function terminalOutput({ a, e, result }: Step): void {
  if (!result) return;
  const id = str(a.requestParams(e).terminalId);
  const t = id ? a.terminals.get(id) : undefined;
  if (!t) return;
  if (typeof result.output === "string") t.output = result.output;
  const st = isObject(result.exitStatus) ? result.exitStatus : e.method === "terminal/wait_for_exit" ? result : undefined;
  if (st && (st.exitCode != null || st.signal != null)) t.exit = st.signal != null ? `signal ${String(st.signal)}` : `exit ${String(st.exitCode)}`;
}

function permissionAsked({ a, e, params, sessionId }: Step): void {
  const tc = isObject(params.toolCall) ? params.toolCall : {};
  const options = (Array.isArray(params.options) ? params.options : []).filter(isObject).map((o) => ({ optionId: str(o.optionId) ?? "", name: str(o.name) ?? "", kind: str(o.kind) ?? "" }));
  const answerMsg = a.bySeq(e.pairSeq)?.message;
  let answer: string | undefined;
  if (isObject(answerMsg)) {
    const outcome = isObject(answerMsg.result) && isObject(answerMsg.result.outcome) ? answerMsg.result.outcome : undefined;
    answer = outcome ? (outcome.outcome === "selected" ? str(outcome.optionId) : "cancelled") : "error";
  }
  const title = str(tc.title) ?? a.tools.get(`${sessionId}/${str(tc.toolCallId) ?? ""}`)?.title ?? "permission";
  a.session(sessionId).items.push({ type: "permission", seq: e.seq, toolCallId: str(tc.toolCallId), title, options, answer, waitedMs: e.latencyMs });
}

/** What each message of a session does to the view, by "kind method". */
const sessionHandlers: Record<string, (step: Step) => void> = {
  "request session/prompt": ({ a, e, params, sessionId }) => {
    const s = a.session(sessionId);
    s.promptInFlight = e.pairSeq === undefined;
    a.turnOpen.add(sessionId);
    a.plans.delete(sessionId);
    const prompt = Array.isArray(params.prompt) ? params.prompt : [];
    s.items.push({ type: "user", text: prompt.map(blockText).join(""), seq: e.seq });
  },
  "notification session/cancel": ({ a, e, sessionId }) => void a.session(sessionId).items.push({ type: "cancel", seq: e.seq }),
  "notification session/update": (step) => {
    const u = step.params.update;
    if (!isObject(u)) return;
    const s = step.a.session(step.sessionId);
    const handler = updateHandlers[String(u.sessionUpdate)];
    if (handler) handler(s, u, step);
    else s.items.push({ type: "meta", seq: step.e.seq, text: `${String(u.sessionUpdate)}` });
  },
  "request session/request_permission": permissionAsked,
  "response session/prompt": ({ a, e, m, result, sessionId }) => {
    const s = a.session(sessionId);
    s.promptInFlight = false;
    a.turnOpen.delete(sessionId);
    if (result) s.items.push({ type: "stop", seq: e.seq, stopReason: str(result.stopReason) ?? "?", latencyMs: e.latencyMs });
    else s.items.push({ type: "error", seq: e.seq, text: isObject(m.error) ? `${String(m.error.code)} ${String(m.error.message)}` : "error" });
  },
  "response session/new": sessionAttached,
  "response session/load": sessionAttached,
  "response session/resume": sessionAttached,
  "response session/set_config_option": ({ a, result, sessionId }) => {
    if (result) a.session(sessionId).configOptions = configOptions(result.configOptions);
  },
};

/** Terminal messages (keyed by terminal id, not by session). */
const terminalHandlers: Record<string, (step: Step) => void> = {
  "request terminal/create": ({ a, e, params }) => {
    a.terminalRequests.set(e.seq, [str(params.command) ?? "", ...(Array.isArray(params.args) ? params.args.map(String) : [])].join(" "));
  },
  "response terminal/create": ({ a, e, result }) => {
    if (result && typeof result.terminalId === "string") a.terminals.set(result.terminalId, { command: a.terminalRequests.get(e.pairSeq ?? -1) ?? "", output: "", exit: undefined });
  },
  "response terminal/output": terminalOutput,
  "response terminal/wait_for_exit": terminalOutput,
};

/** Every session seen, in order of appearance, with its conversation. */
export function buildSessions(entries: Entry[]): { sessions: SessionView[]; terminals: Map<string, Terminal> } {
  const a = new Assembly(entries);
  for (const e of entries) {
    const m = isObject(e.message) ? e.message : {};
    const step: Step = { a, e, m, params: isObject(m.params) ? m.params : {}, result: isObject(m.result) ? m.result : undefined, sessionId: e.sessionId ?? "" };
    const key = `${e.kind} ${e.method ?? ""}`;
    if (e.sessionId) {
      const s = a.session(e.sessionId);
      s.messageCount++;
      if (e.issues.length) s.issueCount++;
      sessionHandlers[key]?.(step);
    }
    terminalHandlers[key]?.(step);
  }
  return { sessions: [...a.sessions.values()], terminals: a.terminals };
}

export interface TurnTiming {
  sessionId: string;
  seq: number;
  start: number;
  durationMs: number | undefined;
  firstUpdateMs: number | undefined;
  chunks: number;
  chunksPerSecond: number | undefined;
  longestGapMs: number | undefined;
  humanMs: number;
  stopReason: string | undefined;
}

/** Per prompt turn: time to first update, deltas per second, longest gap, time waiting on the human. */
export function turnTimings(entries: Entry[]): TurnTiming[] {
  const turns: TurnTiming[] = [];
  for (const e of entries) {
    if (e.kind !== "request" || e.method !== "session/prompt" || !e.sessionId) continue;
    const end = e.pairSeq !== undefined ? entries[e.pairSeq - 1] : undefined;
    const within = entries.filter((x) => x.sessionId === e.sessionId && x.seq > e.seq && (end === undefined || x.seq < end.seq));
    const updates = within.filter((x) => x.method === "session/update");
    const chunks = updates.filter((x) => {
      const m = x.message as Json;
      const u = isObject(m.params) && isObject(m.params.update) ? m.params.update.sessionUpdate : undefined;
      return u === "agent_message_chunk" || u === "agent_thought_chunk";
    });
    let gap: number | undefined;
    let prev = e.ts;
    for (const u of updates) {
      gap = Math.max(gap ?? 0, u.ts - prev);
      prev = u.ts;
    }
    const human = within.filter((x) => x.kind === "request" && x.method === "session/request_permission").reduce((sum, x) => sum + (x.latencyMs ?? 0), 0);
    const first = chunks[0];
    const last = chunks[chunks.length - 1];
    const span = first && last ? (last.ts - first.ts) / 1000 : 0;
    const result = end && isObject(end.message) && isObject(end.message.result) ? end.message.result : undefined;
    turns.push({
      sessionId: e.sessionId,
      seq: e.seq,
      start: e.ts,
      durationMs: e.latencyMs,
      firstUpdateMs: updates[0] ? updates[0].ts - e.ts : undefined,
      chunks: chunks.length,
      chunksPerSecond: span > 0 ? chunks.length / span : undefined,
      longestGapMs: gap,
      humanMs: human,
      stopReason: result ? str(result.stopReason) : end ? "error" : undefined,
    });
  }
  return turns;
}
