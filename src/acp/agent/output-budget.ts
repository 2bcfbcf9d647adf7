import type { SessionUpdate } from "@agentclientprotocol/sdk";

/**
 * What the SDK may hold in one connection's socket (WebSocket `bufferedAmount`) or HTTP streams
 * before it stops taking output (its `maxBufferedBytes`). It also closes a WebSocket whose client
 * queues more than this in further messages while one waits to be handled.
 */
export const SOCKET_OUTPUT_BYTES = 2 * 1024 * 1024;
/** Session updates a connection may have queued for its client before its turns wait (our queues, not the socket's). */
export const DEFAULT_CONNECTION_OUTPUT_BYTES = 2 * 1024 * 1024;
/** Session updates all connections together may have queued; past it, connections holding more than a fair share wait. */
export const DEFAULT_INSTANCE_OUTPUT_BYTES = 64 * 1024 * 1024;
/** What a connection may still queue while the instance budget is spent: a client that reads keeps going. */
const FAIR_SHARE_BYTES = 256 * 1024;

/**
 * Bounds the session updates queued for clients (`UpdateQueue`), per connection and for the
 * instance. A queue over its connection's budget makes the session's model stream wait
 * (backpressure through `LoopObserver.backlog`), so a client that stops reading slows its own
 * turns, never the instance's memory; the SDK bounds what sits in the socket itself
 * (`maxBufferedBytes`) and closes a connection whose client reads nothing for 60 s.
 */
export class OutputBudget {
  readonly limitBytes: number;
  readonly connectionBytes: number;
  #used = 0;
  readonly #waiters = new Set<() => void>();

  constructor(options: { connectionBytes?: number; instanceBytes?: number } = {}) {
    this.connectionBytes = options.connectionBytes ?? DEFAULT_CONNECTION_OUTPUT_BYTES;
    this.limitBytes = options.instanceBytes ?? DEFAULT_INSTANCE_OUTPUT_BYTES;
  }

  get usedBytes(): number {
    return this.#used;
  }

  /** One connection's share. */
  account(): OutputAccount {
    return new OutputAccount(this);
  }

  /** @internal */
  change(bytes: number): void {
    this.#used += bytes;
    if (bytes < 0) for (const wake of [...this.#waiters]) wake();
  }

  /** @internal — resolves at the next release anywhere (the waiter checks its own condition again). */
  released(): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        this.#waiters.delete(wake);
        resolve();
      };
      this.#waiters.add(wake);
    });
  }

  get spent(): boolean {
    return this.#used >= this.limitBytes;
  }
}

/** One connection's queued output, counted in its instance's budget too. */
export class OutputAccount {
  readonly #budget: OutputBudget;
  #used = 0;

  constructor(budget: OutputBudget) {
    this.#budget = budget;
  }

  get usedBytes(): number {
    return this.#used;
  }

  add(bytes: number): void {
    this.#used += bytes;
    this.#budget.change(bytes);
  }

  release(bytes: number): void {
    if (bytes === 0) return;
    this.#used -= bytes;
    this.#budget.change(-bytes);
  }

  get full(): boolean {
    return this.#used >= this.#budget.connectionBytes || (this.#budget.spent && this.#used >= FAIR_SHARE_BYTES);
  }

  /** undefined while there is room; else resolves once there is. */
  room(): Promise<void> | undefined {
    if (!this.full) return undefined;
    return (async () => {
      while (this.full) await this.#budget.released();
    })();
  }
}

/** About what an update costs queued: its text, or its JSON for the rarer structured updates. */
export function updateBytes(update: SessionUpdate): number {
  if ((update.sessionUpdate === "agent_message_chunk" || update.sessionUpdate === "agent_thought_chunk") && update.content.type === "text") {
    return update.content.text.length + 128;
  }
  return JSON.stringify(update).length;
}
