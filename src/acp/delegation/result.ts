import type { ToolResult } from "../../core/index.js";
import { diffsOf, reportFor, reportText, type DelegatedTurnView, type DelegationProgress } from "./report.js";
import { describeDelegationFailure, errorDetails, type StopCause, type TurnOutcome } from "./turn.js";

/** What the result texts need to know about the call. */
export interface ResultContext {
  delegate: string;
  cwd: string;
  timeoutMs: number | undefined;
  cancelGraceMs: number;
  /** Longer answers keep their end (where agents put their conclusion). */
  maxAnswerChars: number;
}

/** The outer tool result for a delegated turn: success only for `end_turn`. */
export function delegationResult(rc: ResultContext, outcome: TurnOutcome, progress: DelegationProgress, sessionId: string): ToolResult {
  if (outcome.kind === "failed") return failureResult(rc, progress, outcome.error, outcome.stopped, sessionId);
  if (outcome.kind === "unresponsive") {
    const why = stopText(rc, outcome.stopped);
    return errorWithReport(rc, progress, null, `${why} The agent did not end its turn within ${rc.cancelGraceMs} ms after session/cancel, so its process was ended.`, sessionId);
  }
  const { result } = outcome;
  if (result.stopReason === "end_turn") {
    const report = { ...reportFor(rc.delegate, result, rc.cwd, result.stopReason), sessionId };
    const diffs = diffsOf(result.toolCalls);
    const answer = capAnswer(progress.text || result.text, rc.maxAnswerChars);
    const text = reportText(`${rc.delegate} finished (end_turn)`, answer || `(${rc.delegate} returned no text)`, report);
    return { text, isError: false, data: report, ...(diffs.length > 0 ? { diffs } : {}) };
  }
  const explanation: Record<string, string> = {
    cancelled: outcome.stopped ? stopText(rc, outcome.stopped) : `The ${rc.delegate} agent cancelled its turn (for example, a permission question it needed was not answered).`,
    refusal: `The ${rc.delegate} agent refused the task.`,
    max_tokens: `The ${rc.delegate} agent reached its output token limit before finishing.`,
    max_turn_requests: `The ${rc.delegate} agent reached its limit of model requests for one turn before finishing.`,
  };
  const text = explanation[result.stopReason] ?? `The ${rc.delegate} agent stopped with "${result.stopReason}".`;
  return errorWithReport(rc, { ...result, text: progress.text || result.text }, result.stopReason, text, sessionId);
}

/** An error result for a failure (spawn, crash, timeout …) or a cancel before the prompt ran. */
export function failureResult(rc: ResultContext, progress: DelegationProgress, error: unknown, stopped: StopCause | undefined, sessionId?: string): ToolResult {
  const text = stopped ? stopText(rc, stopped) : describeDelegationFailure(rc.delegate, error);
  const result = errorWithReport(rc, progress, null, text, sessionId);
  if (error === undefined || stopped) return result;
  return { ...result, data: { ...(result.data as object), error: errorDetails(error) } };
}

function errorWithReport(rc: ResultContext, view: DelegatedTurnView, stopReason: string | null, explanation: string, sessionId: string | undefined): ToolResult {
  const report = { ...reportFor(rc.delegate, view, rc.cwd, stopReason), ...(sessionId ? { sessionId } : {}) };
  const partial = view.text.trim() === "" ? "" : `Output before it stopped:\n${capAnswer(view.text.trim(), rc.maxAnswerChars)}`;
  const text = `${explanation}\n\n${reportText(`${rc.delegate} (${stopReason ?? "no stop reason"})`, partial, report)}`;
  return { text, isError: true, data: report };
}

function stopText(rc: ResultContext, cause: StopCause): string {
  return cause === "timeout"
    ? `The ${rc.delegate} agent did not finish within ${rc.timeoutMs} ms; its turn was cancelled.`
    : `The ${rc.delegate} task was cancelled by the user.`;
}

function capAnswer(text: string, max: number): string {
  if (text.length <= max) return text;
  return `[… ${text.length - max} earlier characters omitted …]\n${text.slice(text.length - max)}`;
}
