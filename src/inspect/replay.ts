import { PassThrough } from "node:stream";
import { settledWithin } from "../core/process/group.js";
import { parseLine } from "./lines.js";
import { startTap, type TapLaunch } from "./tap.js";
import { diffLines } from "./diff.js";
import type { Direction, ReplayDiffLine, TraceLine, TraceMessage } from "./types.js";

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

export interface ReplayOptions extends TapLaunch {
  /** Messages of the recorded conversation, in order. */
  lines: TraceLine[];
  onMessage: (ts: number, from: Direction, message: unknown) => void;
  /** How long to wait for the agent's next message before moving on (default 10 000 ms). */
  idleMs?: number;
  /** Recorded session directories → the ones to replay in (a value equal to one, or under it, is rewritten in client messages). */
  cwdMap?: ReadonlyMap<string, string>;
}

const SESSION_OPENERS = new Set(["session/new", "session/load", "session/resume", "session/fork"]);

/** The session directories a trace's client messages name (session/new, load, resume, fork `cwd`). */
export function recordedCwds(lines: readonly TraceLine[]): string[] {
  const cwds = new Set<string>();
  for (const l of lines) {
    const m = isMessage(l) && l.from === "client" ? l.message : undefined;
    if (isObject(m) && typeof m.method === "string" && SESSION_OPENERS.has(m.method) && isObject(m.params) && typeof m.params.cwd === "string") cwds.add(m.params.cwd);
  }
  return [...cwds];
}

function remapPath(value: string, map: ReadonlyMap<string, string> | undefined): string {
  for (const [from, to] of map ?? []) {
    if (value === from) return to;
    if (value.startsWith(`${from}/`)) return `${to}${value.slice(from.length)}`;
  }
  return value;
}

export interface ReplayResult {
  diff: ReplayDiffLine[];
  differences: number;
  /** Set when the agent could not be started or ended early. */
  error?: string;
}

const isMessage = (l: TraceLine): l is TraceMessage => "from" in l;

/**
 * Sends the trace's client messages to a new agent again, in order: before each one, waits
 * until the agent has sent as many messages as it had at that point of the recording (or
 * went quiet). The agent's requests are answered with the recorded answers to the same
 * method, in order; session ids are mapped from the recording to the new ones.
 */
export async function replayTrace(options: ReplayOptions): Promise<ReplayResult> {
  const recorded = options.lines.filter(isMessage);
  const idleMs = options.idleMs ?? 10_000;
  const input = new PassThrough();
  const output = new PassThrough().resume();
  const got: unknown[] = [];
  let wake: (() => void) | undefined;
  const sessionMap = new Map<string, string>();
  // Recorded client answers to agent requests, per method, in order.
  const answers = new Map<string, unknown[]>();
  const requestMethod = new Map<string, string>();
  for (const l of recorded) {
    const m = l.message;
    if (!isObject(m)) continue;
    if (l.from === "agent" && typeof m.method === "string" && "id" in m) requestMethod.set(JSON.stringify(m.id), m.method);
    if (l.from === "client" && m.method === undefined && "id" in m) {
      const method = requestMethod.get(JSON.stringify(m.id));
      if (method) answers.set(method, [...(answers.get(method) ?? []), m]);
    }
  }
  // Recorded session/new answers, to map old session ids to the new ones.
  const newSessionIds = recorded
    .filter((l) => l.from === "agent" && isObject(l.message) && isObject(l.message.result) && typeof l.message.result.sessionId === "string")
    .map((l) => (l.message as { result: { sessionId: string } }).result.sessionId);
  let sessionIndex = 0;

  const send = (message: unknown): void => {
    input.write(`${JSON.stringify(message)}\n`);
  };
  const tap = startTap({
    ...options,
    input,
    output,
    onLine: (ts, from, line) => {
      const message = parseLine(line);
      options.onMessage(ts, from, message);
      if (from !== "agent") return;
      got.push(message);
      if (isObject(message) && isObject(message.result) && typeof message.result.sessionId === "string") {
        const old = newSessionIds[sessionIndex++];
        if (old !== undefined) sessionMap.set(old, message.result.sessionId);
      }
      if (isObject(message) && typeof message.method === "string" && "id" in message) {
        const recordedAnswer = answers.get(message.method)?.shift();
        send(isObject(recordedAnswer) ? { ...recordedAnswer, id: message.id } : { jsonrpc: "2.0", id: message.id, error: { code: -32603, message: "no recorded answer to replay" } });
      }
      wake?.();
    },
  });
  let ended = false;
  void tap.done.then(() => {
    ended = true;
    wake?.();
  });
  const waitForCount = async (count: number): Promise<void> => {
    while (got.length < count && !ended) {
      const before = got.length;
      const arrived = new Promise<void>((resolve) => (wake = resolve));
      await settledWithin(arrived, idleMs);
      if (got.length === before) return; // quiet for idleMs: move on
    }
  };

  let agentSoFar = 0;
  for (const l of recorded) {
    if (l.from === "agent") {
      agentSoFar++;
      continue;
    }
    const m = l.message;
    if (isObject(m) && m.method === undefined) continue; // answers go out when the agent asks
    await waitForCount(agentSoFar);
    if (ended) break;
    send(mapSessions(m, sessionMap, options.cwdMap));
  }
  await waitForCount(recorded.length - recorded.filter((l) => l.from === "client").length);
  input.end();
  const end = await tap.done;
  const before = recorded.filter((l) => l.from === "agent").map((l) => l.message);
  const diff = diffLines(normalize(before), normalize(got));
  const differences = diff.filter((d) => d.op !== "same").length;
  const error = end.spawnError ? `the agent could not be started: ${end.spawnError.message}` : undefined;
  return { diff, differences, ...(error ? { error } : {}) };
}

function mapSessions(message: unknown, map: Map<string, string>, cwdMap: ReadonlyMap<string, string> | undefined): unknown {
  if (typeof message === "string") return map.get(message) ?? remapPath(message, cwdMap);
  if (Array.isArray(message)) return message.map((v) => mapSessions(v, map, cwdMap));
  if (isObject(message)) return Object.fromEntries(Object.entries(message).map(([k, v]) => [k, mapSessions(v, map, cwdMap)]));
  return message;
}

/** Ids that differ from run to run (numbered by first appearance); the JSON-RPC `id` only at the top. */
const ID_KEYS = new Set(["sessionId", "toolCallId", "terminalId", "messageId", "requestId", "elicitationId"]);
const TIME_KEY = /^(ts|timestamp|time|date)$|At$|Time$|Timestamp$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;

/** One comparable line per agent message: ids numbered by first appearance, timestamps blanked, keys sorted. */
export function normalize(messages: unknown[]): string[] {
  const ids = new Map<string, string>();
  const walk = (v: unknown, key: string | undefined, top = false): unknown => {
    if (top && key === "id") return "<id>";
    if (key !== undefined && ID_KEYS.has(key) && (typeof v === "string" || typeof v === "number")) {
      const k = `${key}:${String(v)}`;
      if (!ids.has(k)) ids.set(k, `<${key}#${ids.size + 1}>`);
      return ids.get(k);
    }
    if (key !== undefined && TIME_KEY.test(key)) return "<time>";
    if (typeof v === "string" && ISO_TIME.test(v)) return "<time>";
    if (Array.isArray(v)) return v.map((x) => walk(x, undefined));
    if (isObject(v)) return Object.fromEntries(Object.keys(v).sort().map((k) => [k, walk(v[k], k, v === root)]));
    return v;
  };
  let root: unknown;
  return messages.map((m) => {
    root = m;
    return JSON.stringify(walk(m, undefined));
  });
}
