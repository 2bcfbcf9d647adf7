import { errorMessage } from "../../core/index.js";
import type { DelegationProgress } from "./report.js";
import { AcpTimeoutError, AgentExitedError, AgentSpawnError } from "../client/errors.js";
import type { PromptResult } from "../client/events.js";
import type { AcpSession } from "../client/session.js";

/** How a delegated prompt ended, from the tool's point of view. */
export type TurnOutcome =
  | { kind: "finished"; result: PromptResult; stopped?: StopCause }
  /** Cancelled on our side and the agent did not end the turn within the grace period: kill it. */
  | { kind: "unresponsive"; stopped: StopCause }
  | { kind: "failed"; error: unknown; stopped?: StopCause };

export type StopCause = "outer_cancel" | "timeout";

export interface TurnSettings {
  task: string;
  outerSignal: AbortSignal;
  /** Per-call limit (undefined = none). */
  timeoutMs: number | undefined;
  /** After a cancel, how long the agent has to answer the prompt `cancelled`. */
  cancelGraceMs: number;
}

/**
 * Runs one prompt on the delegate's session: its events feed `progress`; the outer turn's
 * cancel or the timeout sends `session/cancel`, then waits at most `cancelGraceMs`.
 * Never throws.
 */
export async function runDelegatedTurn(session: AcpSession, progress: DelegationProgress, settings: TurnSettings): Promise<TurnOutcome> {
  const stop = new AbortController();
  let stopped: StopCause | undefined;
  const halt = (cause: StopCause): void => {
    stopped ??= cause;
    stop.abort();
  };
  const onOuterAbort = (): void => halt("outer_cancel");
  settings.outerSignal.addEventListener("abort", onOuterAbort, { once: true });
  const timer = settings.timeoutMs === undefined ? undefined : setTimeout(() => halt("timeout"), settings.timeoutMs);
  const unsubscribe = session.onEvent((event) => progress.handle(event));
  if (settings.outerSignal.aborted) halt("outer_cancel");
  const prompt = session.prompt(settings.task, { signal: stop.signal });
  // If we stop waiting (unresponsive agent), the prompt still settles once the client closes.
  prompt.catch(() => undefined);
  try {
    const settled = await settleWithGrace(prompt, stop.signal, settings.cancelGraceMs);
    if (settled === GRACE_EXPIRED) return { kind: "unresponsive", stopped: stopped ?? "outer_cancel" };
    return settled.ok
      ? { kind: "finished", result: settled.value, ...(stopped ? { stopped } : {}) }
      : { kind: "failed", error: settled.error, ...(stopped ? { stopped } : {}) };
  } finally {
    clearTimeout(timer);
    settings.outerSignal.removeEventListener("abort", onOuterAbort);
    unsubscribe();
  }
}

const GRACE_EXPIRED = Symbol("grace expired");
type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** The promise's outcome, or GRACE_EXPIRED when it is still pending `graceMs` after `stop` aborted. */
function settleWithGrace<T>(promise: Promise<T>, stop: AbortSignal, graceMs: number): Promise<Settled<T> | typeof GRACE_EXPIRED> {
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const onStop = (): void => {
      timer = setTimeout(() => resolve(GRACE_EXPIRED), graceMs);
    };
    if (stop.aborted) onStop();
    else stop.addEventListener("abort", onStop, { once: true });
    void promise.then(
      (value) => resolve({ ok: true, value }),
      (error: unknown) => resolve({ ok: false, error }),
    ).finally(() => {
      clearTimeout(timer);
      stop.removeEventListener("abort", onStop);
    });
  });
}

/** A readable account of why the delegation failed, for the outer model. */
export function describeDelegationFailure(delegate: string, error: unknown, stderrTailLines = 12): string {
  if (error instanceof AgentSpawnError) return `Could not start the ${delegate} agent: ${error.message}`;
  if (error instanceof AgentExitedError) {
    const how = error.signal ? `was killed by ${error.signal}` : `exited with code ${error.exitCode ?? "unknown"}`;
    const tail = error.stderrTail.slice(-stderrTailLines);
    return `The ${delegate} agent process ${how} before finishing the task.${tail.length > 0 ? `\nLast lines of its stderr:\n${tail.join("\n")}` : ""}`;
  }
  if (error instanceof AcpTimeoutError) return `The ${delegate} agent did not answer ${error.method} within ${error.timeoutMs} ms.`;
  return `The ${delegate} agent failed: ${errorMessage(error)}`;
}

/** Structured error details for `DelegationReport.error`. */
export function errorDetails(error: unknown): { name: string; message: string; exitCode?: number | null; signal?: string | null; stderrTail?: string[] } {
  if (error instanceof AgentExitedError) return { name: error.name, message: error.message, exitCode: error.exitCode, signal: error.signal, stderrTail: error.stderrTail };
  return { name: error instanceof Error ? error.name : "Error", message: errorMessage(error) };
}
