import { AgentKitError } from "./errors.js";

/**
 * Generation-counted cancellation. A turn captures the generation it started at; once
 * `interrupt()` moves the counter, that turn's signal is aborted. The same signal reaches
 * the model stream, the running tool and any approval wait. Later turns get a fresh signal,
 * so a cancel never leaks into the next turn.
 */
export class CancelledError extends AgentKitError {
  constructor(message = "cancelled") {
    super("cancelled", message);
    this.name = "CancelledError";
  }
}

/**
 * Cancels turns by generation: `interrupt()` aborts everything started at the current
 * generation (model stream, running tool, approval wait) and moves to the next.
 */
export class CancellationController {
  #generation = 0;
  #current = new AbortController();
  readonly #listeners = new Set<(generation: number) => void>();

  get generation(): number {
    return this.#generation;
  }

  /** Cancels everything started at the current generation and moves to the next. */
  interrupt(reason = "cancelled"): void {
    const previous = this.#current;
    this.#generation += 1;
    this.#current = new AbortController();
    previous.abort(new CancelledError(reason));
    for (const listener of this.#listeners) listener(this.#generation);
  }

  handle(): CancellationHandle {
    return new CancellationHandle(this);
  }

  /** @internal */ signalFor(generation: number): AbortSignal {
    if (generation === this.#generation) return this.#current.signal;
    return AbortSignal.abort(new CancelledError());
  }

  /** @internal */ onInterrupt(listener: (generation: number) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

/** The read side of a controller, handed to loops, tools and runtimes. */
export class CancellationHandle {
  readonly #controller: CancellationController;
  constructor(controller: CancellationController) {
    this.#controller = controller;
  }

  generation(): number {
    return this.#controller.generation;
  }

  isCancelledSince(generation: number): boolean {
    return this.#controller.generation !== generation;
  }

  /** An AbortSignal that aborts once the generation moves past `generation`. */
  signalSince(generation: number): AbortSignal {
    return this.#controller.signalFor(generation);
  }

  /** Resolves once the generation moves past `generation` (immediately if it already has). */
  cancelledSince(generation: number): Promise<void> {
    const signal = this.signalSince(generation);
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  }

  /** Convenience for hosts: cancel the current generation. */
  interrupt(reason?: string): void {
    this.#controller.interrupt(reason);
  }
}

/** An AbortError saying what was aborted, and why when the signal's reason is an error. */
export function abortError(what: string, signal?: AbortSignal): Error {
  const error = new Error(`${what} was aborted${signal?.reason instanceof Error ? `: ${signal.reason.message}` : ""}`);
  error.name = "AbortError";
  return error;
}

/** A bound as messages show it: "3 s" for whole seconds, else "1500 ms". */
export function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** What `raceAbort` settles with: the promise's value, or that the signal aborted first. */
export type RaceAbortOutcome<T> = { aborted: false; value: T } | { aborted: true };

/**
 * `promise`'s outcome, or `{ aborted: true }` as soon as `signal` aborts, whichever is first
 * (a rejection that comes first propagates). The promise stays observed, so a rejection after
 * the abort is never unhandled; the abort listener is removed either way.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<RaceAbortOutcome<T>> {
  promise.catch(() => undefined);
  if (signal.aborted) return Promise.resolve({ aborted: true });
  return new Promise((resolve, reject) => {
    const onAbort = (): void => resolve({ aborted: true });
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve({ aborted: false, value });
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/** Whether `error` is a cancellation (an AbortError or our CancelledError), not a failure. */
export function isAbortError(error: unknown): boolean {
  if (error instanceof CancelledError) return true;
  if (typeof error !== "object" || error === null) return false;
  const name = (error as { name?: unknown }).name;
  return name === "AbortError" || name === "CancelledError";
}
