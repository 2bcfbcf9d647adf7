import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { Logger } from "../../core/index.js";
import { errorMessage } from "../../core/index.js";

export type UpdateSink = (update: SessionUpdate) => Promise<void>;

/**
 * Bridges the synchronous observer to async `session/update` sends: updates are sent in order, and `flushed()` resolves once everything queued so far is written — the
 * prompt handler awaits it before answering, so every update of a turn precedes the response.
 */
export class UpdateQueue {
  readonly #sink: UpdateSink;
  readonly #logger: Logger;
  #pending: SessionUpdate[] = [];
  #draining: Promise<void> | undefined;
  #failed = false;

  constructor(sink: UpdateSink, logger: Logger) {
    this.#sink = sink;
    this.#logger = logger;
  }

  push(update: SessionUpdate): void {
    if (this.#failed) return;
    this.#pending.push(update);
    this.#draining ??= this.#drain();
  }

  /** Resolves when every update pushed so far has been written (or dropped after a send failure). */
  async flushed(): Promise<void> {
    while (this.#draining) await this.#draining;
  }

  async #drain(): Promise<void> {
    try {
      await null; // so #draining is assigned before this can finish
      while (this.#pending.length > 0) {
        const batch = this.#pending;
        this.#pending = [];
        // The SDK queues writes in call order, so a batch can be handed over at once (pipelined)
        // and awaited together; the next batch waits, which keeps memory bounded by the backlog.
        await Promise.all(batch.map((update) => this.#sink(update)));
      }
    } catch (error) {
      // The connection is gone: later updates have nowhere to go; the prompt ends on its own.
      this.#failed = true;
      this.#pending = [];
      this.#logger.warn("session/update could not be sent; dropping further updates for this session", { error: errorMessage(error) });
    } finally {
      this.#draining = undefined;
    }
  }
}
