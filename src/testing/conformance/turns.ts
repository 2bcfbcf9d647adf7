import * as acp from "@agentclientprotocol/sdk";
import type { Run } from "./run.js";
import { delay, describeOutcome, isUpdateFor, updateKind, type CallOutcome, type WireAgent, type WireEntry } from "./wire.js";

/** The v1 stop reasons; `satisfies` keeps the list in step with the SDK's type. */
const STOP_REASONS = ["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"] as const satisfies readonly acp.StopReason[];
type MissingStopReason = Exclude<acp.StopReason, (typeof STOP_REASONS)[number]>;
const allStopReasonsListed: [MissingStopReason] extends [never] ? true : false = true;
void allStopReasonsListed;

/** Update kinds that belong to a turn's content (late ones break the turn model). */
const TURN_KINDS = new Set(["user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan"]);

export interface Turn {
  outcome: CallOutcome;
  /** The response line on the wire, when one arrived. */
  response: WireEntry | undefined;
  /** Updates for the session between the request and the response. */
  updates: WireEntry[];
  /** Updates for the session after the response, within the settle window. */
  late: WireEntry[];
  /** Tools whose permission request in this turn the kit answered with its default rejection. */
  rejectedByKit: string[];
}

export interface TurnHooks {
  timeoutMs?: number;
  /** Aborting it stops waiting for the response (reported as a timeout). */
  stop?: AbortSignal;
  /** Each update for the session and each permission request, as it arrives. */
  onActivity?: (entry: WireEntry) => void;
}

/** Late turn updates seen across the run, for `prompt.update-order`. */
export interface LateUpdates {
  turns: number;
  violations: string[];
  sessionLevel: string[];
}

/** A message chunk, tool call or plan: the content of a turn (or of a replayed history). */
export function isTurnContent(entry: WireEntry): boolean {
  return TURN_KINDS.has(updateKind(entry));
}

export function stopReasonOf(outcome: CallOutcome): string | undefined {
  if (outcome.kind !== "result" || typeof outcome.value !== "object" || outcome.value === null) return undefined;
  const reason = (outcome.value as { stopReason?: unknown }).stopReason;
  return typeof reason === "string" ? reason : JSON.stringify(reason);
}

export function isValidStopReason(reason: string | undefined): boolean {
  return (STOP_REASONS as readonly string[]).includes(reason ?? "");
}

/** "ended with end_turn" / "answered error -32602 …" — for details. */
export function describeTurn(turn: Turn): string {
  const reason = stopReasonOf(turn.outcome);
  return reason !== undefined ? `stopReason ${JSON.stringify(reason)}` : describeOutcome(turn.outcome);
}

/** Sends one session/prompt, waits for its answer and the settle window, and sorts the session's updates. */
export async function runTurn(run: Run, agent: WireAgent, sessionId: string, prompt: acp.ContentBlock[], hooks: TurnHooks = {}): Promise<Turn> {
  const from = run.log.nextSeq;
  const answeredBefore = agent.defaultAnswers.length;
  const unlisten = run.log.listen((entry) => {
    if (entry.launch !== agent.launch) return;
    if (isUpdateFor(entry, sessionId) || (entry.dir === "in" && entry.message?.method === "session/request_permission")) hooks.onActivity?.(entry);
  });
  let outcome: CallOutcome;
  try {
    outcome = await agent.call(acp.methods.agent.session.prompt, { sessionId, prompt }, hooks.timeoutMs ?? run.timeoutMs, hooks.stop);
  } finally {
    unlisten();
  }
  const response = run.log.responseTo("session/prompt", from, (p) => p.sessionId === sessionId);
  if (outcome.kind === "timeout") await agent.notify(acp.methods.agent.session.cancel, { sessionId });
  if (response) await settle(run, agent);
  const until = run.log.nextSeq;
  const turn: Turn = {
    outcome,
    response,
    updates: run.log.updates(sessionId, from, response?.seq ?? until),
    late: response ? run.log.updates(sessionId, response.seq + 1, until) : [],
    rejectedByKit: agent.defaultAnswers.slice(answeredBefore).filter((a) => a.sessionId === sessionId).map((a) => a.tool),
  };
  noteLate(run, turn, "session/prompt");
  return turn;
}

/**
 * A turn that would fail check `id`, but in which the kit itself rejected a permission request:
 * the agent may have ended the turn that way because of the kit's answer (codex-acp ends a
 * rejected turn `cancelled`), so the check is inconclusive, never a violation. Records the
 * skip and returns true then.
 */
export function inconclusiveByKit(run: Run, id: string, turn: Turn): boolean {
  if (turn.rejectedByKit.length === 0) return false;
  const tools = [...new Set(turn.rejectedByKit)].map((t) => JSON.stringify(t)).join(", ");
  run.skip(
    id,
    `inconclusive: the turn ended with ${describeTurn(turn)} after the agent asked permission for ${tools} and the kit rejected it (its default answer), so the ending may follow from that answer; rerun with a --prompt that needs no tool to judge this check`,
  );
  return true;
}

/**
 * Waits until late messages would have arrived: a round trip (the agent answers in order, so
 * anything it sent right after the response comes first) plus a short quiet time.
 */
export async function settle(run: Run, agent: WireAgent): Promise<void> {
  if (agent.exitInfo) return;
  await agent.call("_agentkit_check/ping", {}, Math.min(run.timeoutMs, 5_000));
  await delay(run.settleMs);
}

const late: WeakMap<Run, LateUpdates> = new WeakMap();

export function lateUpdates(run: Run): LateUpdates {
  let found = late.get(run);
  if (!found) {
    found = { turns: 0, violations: [], sessionLevel: [] };
    late.set(run, found);
  }
  return found;
}

/** Remembers updates that came after a response (prompt or load) for the order check. */
export function noteLate(run: Run, turn: Pick<Turn, "late" | "response">, method: string): void {
  const record = lateUpdates(run);
  if (turn.response) record.turns += 1;
  for (const entry of turn.late) {
    const kind = updateKind(entry);
    const line = `${kind} after the ${method} response`;
    if (TURN_KINDS.has(kind)) record.violations.push(line);
    else record.sessionLevel.push(line);
  }
}

export function summarizeLate(lines: string[]): string {
  const counts = new Map<string, number>();
  for (const line of lines) counts.set(line, (counts.get(line) ?? 0) + 1);
  return [...counts].map(([line, n]) => (n > 1 ? `${n}× ${line}` : line)).join("; ");
}

export function textBlock(text: string): acp.ContentBlock {
  return { type: "text", text };
}
