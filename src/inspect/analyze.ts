import { checkParams, checkResult, knownMethod } from "./schemas.js";
import type { Direction, Entry, Issue, ServerEvent, TraceNote, TraceSpan } from "./types.js";

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

interface Pending {
  seq: number;
  method: string;
  ts: number;
  params: Json;
}

/** Agent → client methods and the client capability each needs. */
const CLIENT_CAPABILITY: Record<string, [string, (caps: Json) => boolean]> = {
  "fs/read_text_file": ["fs.readTextFile", (c) => isObject(c.fs) && c.fs.readTextFile === true],
  "fs/write_text_file": ["fs.writeTextFile", (c) => isObject(c.fs) && c.fs.writeTextFile === true],
  "terminal/create": ["terminal", (c) => c.terminal === true],
  "terminal/output": ["terminal", (c) => c.terminal === true],
  "terminal/release": ["terminal", (c) => c.terminal === true],
  "terminal/wait_for_exit": ["terminal", (c) => c.terminal === true],
  "terminal/kill": ["terminal", (c) => c.terminal === true],
};

const sessionCap = (name: string) => (c: Json) => isObject(c.sessionCapabilities) && c.sessionCapabilities[name] != null;
/** Client → agent methods and the agent capability each needs. */
const AGENT_CAPABILITY: Record<string, [string, (caps: Json) => boolean]> = {
  "session/load": ["loadSession", (c) => c.loadSession === true],
  "session/list": ["sessionCapabilities.list", sessionCap("list")],
  "session/resume": ["sessionCapabilities.resume", sessionCap("resume")],
  "session/close": ["sessionCapabilities.close", sessionCap("close")],
  "session/delete": ["sessionCapabilities.delete", sessionCap("delete")],
  "session/fork": ["sessionCapabilities.fork", sessionCap("fork")],
};

/** Spans kept: per trace (a turn is one trace: its `session/prompt` span is the root) and in all. */
export const MAX_SPANS_PER_TRACE = 1_000;
export const MAX_SPANS = 20_000;

const PROMPT_CONTENT_CAPABILITY: Record<string, string> = { image: "image", audio: "audio", resource: "embeddedContext" };
/** Updates that belong to a prompt turn (others — commands, mode, info, usage — may come any time). */
const TURN_UPDATES = new Set(["agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan"]);

/**
 * Classifies, pairs and checks each message as it comes: schema validity (the SDK's zod
 * schemas), JSON-RPC shape, request/response pairing and latency, and protocol order
 * (nothing before initialize, updates after the prompt's answer, responses to unknown ids,
 * capabilities used without being advertised).
 */
export class Analyzer {
  readonly entries: Entry[] = [];
  readonly notes: TraceNote[] = [];
  readonly #listeners = new Set<(e: ServerEvent) => void>();
  /** Requests waiting for an answer, keyed by sender and id. */
  readonly #pending = new Map<string, Pending>();
  #clientCaps: Json | undefined;
  #agentCaps: Json | undefined;
  #initialized = false;
  readonly #sessions = new Set<string>();
  /** Sessions with a prompt in flight / a load in flight / whose last prompt was answered. */
  readonly #prompting = new Set<string>();
  readonly #loading = new Set<string>();
  readonly #answered = new Set<string>();

  /** The agent's spans (OTLP receiver or trace file), bounded: see MAX_SPANS_PER_TRACE, MAX_SPANS. */
  readonly spans: TraceSpan[] = [];
  readonly #spansPerTrace = new Map<string, number>();
  /** Spans not kept because a bound was reached. */
  droppedSpans = 0;

  /** Keeps what the bounds allow and shows it; returns what was kept. */
  addSpans(list: TraceSpan[]): TraceSpan[] {
    const kept = list.filter((span) => {
      const n = this.#spansPerTrace.get(span.traceId) ?? 0;
      if (n >= MAX_SPANS_PER_TRACE || this.spans.length >= MAX_SPANS) return void this.droppedSpans++;
      this.#spansPerTrace.set(span.traceId, n + 1);
      this.spans.push(span);
      return true;
    });
    if (kept.length > 0) this.#emit({ type: "spans", spans: kept });
    return kept;
  }

  onEvent(listener: (e: ServerEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  note(note: TraceNote): void {
    this.notes.push(note);
    this.#emit({ type: "note", note });
  }

  add(ts: number, from: Direction, message: unknown): Entry {
    const entry: Entry = { seq: this.entries.length + 1, ts, from, message, kind: "invalid", issues: [] };
    this.entries.push(entry);
    this.#classify(entry);
    this.#emit({ type: "entry", entry });
    return entry;
  }

  #emit(e: ServerEvent): void {
    for (const l of this.#listeners) l(e);
  }

  #issue(entry: Entry, rule: string, detail: string, severity: Issue["severity"] = "error"): void {
    entry.issues.push({ rule, detail, severity });
  }

  #classify(entry: Entry): void {
    const m = entry.message;
    if (!isObject(m)) return this.#issue(entry, "jsonrpc", typeof m === "string" ? `not JSON: ${m.slice(0, 120)}` : "not a JSON-RPC object");
    if (m.jsonrpc !== "2.0") this.#issue(entry, "jsonrpc", `"jsonrpc" must be "2.0"`);
    const hasId = "id" in m && (typeof m.id === "string" || typeof m.id === "number" || m.id === null);
    if (typeof m.method === "string") {
      entry.method = m.method;
      const params = isObject(m.params) ? m.params : {};
      if (typeof params.sessionId === "string") entry.sessionId = params.sessionId;
      if (hasId) {
        entry.kind = "request";
        entry.id = m.id as string | number | null;
        this.#request(entry, m.method, params);
      } else {
        entry.kind = "notification";
        this.#notification(entry, m.method, params);
      }
      if (!knownMethod(m.method) && !m.method.startsWith("_")) this.#issue(entry, "unknown-method", `"${m.method}" is not an ACP v1 method (extensions start with "_")`, "warning");
      const why = checkParams(m.method, m.params);
      if (why) this.#issue(entry, "schema", `${m.method} params: ${why}`);
      return;
    }
    if (hasId && ("result" in m || "error" in m)) {
      entry.kind = "response";
      entry.id = m.id as string | number | null;
      this.#response(entry, m);
      return;
    }
    this.#issue(entry, "jsonrpc", "neither a request, a notification nor a response");
  }

  #request(entry: Entry, method: string, params: Json): void {
    const key = `${entry.from}:${JSON.stringify(entry.id)}`;
    if (this.#pending.has(key)) this.#issue(entry, "jsonrpc/duplicate-id", `id ${JSON.stringify(entry.id)} is already waiting for an answer`);
    this.#pending.set(key, { seq: entry.seq, method, ts: entry.ts, params });
    if (entry.from === "client") {
      if (method === "initialize") {
        this.#clientCaps = isObject(params.clientCapabilities) ? params.clientCapabilities : {};
      } else if (!this.#initialized && !method.startsWith("_")) {
        this.#issue(entry, "order/before-initialize", `${method} sent before initialize was answered`);
      }
      const cap = AGENT_CAPABILITY[method];
      if (cap && this.#agentCaps && !cap[1](this.#agentCaps)) this.#issue(entry, `capability/${cap[0]}`, `${method} used but the agent did not advertise ${cap[0]}`);
      if (method === "session/prompt") this.#checkPromptContent(entry, params);
      if (method === "session/load" && typeof params.sessionId === "string") this.#loading.add(params.sessionId);
      if (method === "session/prompt" && typeof params.sessionId === "string") {
        this.#prompting.add(params.sessionId);
        this.#answered.delete(params.sessionId);
      }
    } else {
      const cap = CLIENT_CAPABILITY[method];
      if (cap && this.#clientCaps && !cap[1](this.#clientCaps)) this.#issue(entry, `capability/${cap[0]}`, `${method} used but the client did not advertise ${cap[0]}`);
    }
    if (typeof params.sessionId === "string" && method !== "session/load" && method !== "session/resume" && method !== "session/fork" && this.#initialized && !this.#sessions.has(params.sessionId)) {
      this.#issue(entry, "order/unknown-session", `session ${params.sessionId} was never created, loaded or resumed here`, "warning");
    }
  }

  #checkPromptContent(entry: Entry, params: Json): void {
    const prompt = Array.isArray(params.prompt) ? params.prompt : [];
    const caps = this.#agentCaps && isObject(this.#agentCaps.promptCapabilities) ? this.#agentCaps.promptCapabilities : {};
    for (const block of prompt) {
      const type = isObject(block) ? block.type : undefined;
      const cap = typeof type === "string" ? PROMPT_CONTENT_CAPABILITY[type] : undefined;
      if (cap && this.#agentCaps && caps[cap] !== true) this.#issue(entry, `capability/promptCapabilities.${cap}`, `a ${String(type)} block sent but the agent did not advertise promptCapabilities.${cap}`);
    }
  }

  #notification(entry: Entry, method: string, params: Json): void {
    if (method !== "session/update" || entry.from !== "agent" || typeof params.sessionId !== "string") return;
    const kind = isObject(params.update) ? params.update.sessionUpdate : undefined;
    const sid = params.sessionId;
    if (typeof kind === "string" && TURN_UPDATES.has(kind) && this.#answered.has(sid) && !this.#prompting.has(sid) && !this.#loading.has(sid)) {
      this.#issue(entry, "order/update-after-prompt-answer", `${kind} arrived after the session/prompt answer (every update of a turn must come before it)`, "warning");
    }
  }

  #response(entry: Entry, m: Json): void {
    const requester: Direction = entry.from === "client" ? "agent" : "client";
    const key = `${requester}:${JSON.stringify(entry.id)}`;
    const req = this.#pending.get(key);
    if (!req) return this.#issue(entry, "order/unknown-response-id", `answers id ${JSON.stringify(entry.id)}, but no request with that id is waiting`);
    this.#pending.delete(key);
    entry.method = req.method;
    if (typeof req.params.sessionId === "string") entry.sessionId = req.params.sessionId;
    entry.pairSeq = req.seq;
    entry.latencyMs = entry.ts - req.ts;
    const request = this.entries[req.seq - 1];
    if (request) {
      request.pairSeq = entry.seq;
      request.latencyMs = entry.latencyMs;
      this.#emit({ type: "patch", seq: request.seq, pairSeq: entry.seq, latencyMs: entry.latencyMs });
    }
    if ("error" in m) {
      const e = m.error;
      if (!isObject(e) || typeof e.code !== "number" || typeof e.message !== "string") this.#issue(entry, "jsonrpc", "error must be {code: number, message: string}");
      if (req.method === "session/prompt" && typeof req.params.sessionId === "string") this.#endTurn(req.params.sessionId);
      if (req.method === "session/load" && typeof req.params.sessionId === "string") this.#loading.delete(req.params.sessionId);
      return;
    }
    const why = checkResult(req.method, m.result);
    if (why) this.#issue(entry, "schema", `${req.method} result: ${why}`);
    const result = isObject(m.result) ? m.result : {};
    switch (req.method) {
      case "initialize":
        this.#initialized = true;
        this.#agentCaps = isObject(result.agentCapabilities) ? result.agentCapabilities : {};
        break;
      case "session/new":
      case "session/fork":
        if (typeof result.sessionId === "string") {
          this.#sessions.add(result.sessionId);
          entry.sessionId = result.sessionId;
        }
        break;
      case "session/load":
      case "session/resume":
        if (typeof req.params.sessionId === "string") {
          this.#sessions.add(req.params.sessionId);
          this.#loading.delete(req.params.sessionId);
        }
        break;
      case "session/prompt":
        if (typeof req.params.sessionId === "string") this.#endTurn(req.params.sessionId);
        break;
    }
  }

  #endTurn(sessionId: string): void {
    this.#prompting.delete(sessionId);
    this.#answered.add(sessionId);
  }
}
