import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { Logger } from "../../core/index.js";
import { errorMessage } from "../../core/index.js";
import type { OutputAccount } from "./output-budget.js";
import { updateBytes } from "./output-budget.js";

export type UpdateSink = (update: SessionUpdate) => Promise<void>;

type TextChunk = Extract<SessionUpdate, { sessionUpdate: "agent_message_chunk" | "agent_thought_chunk" }> & { content: { type: "text" } };

/**
 * Bridges the synchronous observer to async `session/update` sends: updates are sent in order, and `flushed()` resolves once everything queued so far is written — the
 * prompt handler awaits it before answering, so every update of a turn precedes the response.
 *
 * With `coalesceMs` > 0, consecutive text chunks of one message (same kind and messageId) that
 * have not been sent yet are merged into one: while earlier updates are still being written,
 * and for at most `coalesceMs` after the first held chunk when the output is idle. Any other
 * update is queued behind them and starts sending at once, so tool calls, plans and
 * permission requests (which `flushed()` first) are never held back or reordered, and the
 * client assembles the same text.
 */
export class UpdateQueue {
  readonly #sink: UpdateSink;
  readonly #logger: Logger;
  readonly #coalesceMs: number;
  #pending: SessionUpdate[] = [];
  #draining: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** When the oldest held chunk was queued (the window is also checked on each push: a busy event loop may run the timer late). */
  #heldSince = 0;
  #failed = false;
  /** Set while `flushed()` waits: nothing is held back. */
  #forced = 0;
  /** The connection's output budget; `#pendingBytes` are counted in it until written. */
  readonly #account: OutputAccount | undefined;
  #pendingBytes = 0;

  constructor(sink: UpdateSink, logger: Logger, options: { coalesceMs?: number; account?: OutputAccount } = {}) {
    this.#sink = sink;
    this.#logger = logger;
    this.#coalesceMs = options.coalesceMs ?? 0;
    this.#account = options.account;
  }

  /** undefined while the connection's output budget has room; else resolves once it has (or the queue failed). */
  backlog(): Promise<void> | undefined {
    return this.#failed ? undefined : this.#account?.room();
  }

  push(update: SessionUpdate): void {
    if (this.#failed) return;
    const bytes = this.#account === undefined ? 0 : updateBytes(update);
    this.#pendingBytes += bytes;
    this.#account?.add(bytes);
    if (this.#coalesceMs > 0 && isTextChunk(update)) {
      const last = this.#pending.at(-1);
      if (last !== undefined && isTextChunk(last) && last.sessionUpdate === update.sessionUpdate && last.messageId === update.messageId) {
        this.#pending[this.#pending.length - 1] = { ...last, content: { ...last.content, text: last.content.text + update.content.text } };
        if (this.#timer !== undefined && performance.now() - this.#heldSince >= this.#coalesceMs) this.#startDrain();
        return;
      }
      this.#pending.push(update);
      // Idle output: hold it for the window; a drain in progress picks it up anyway.
      if (this.#draining === undefined && this.#timer === undefined) {
        this.#heldSince = performance.now();
        this.#timer = setTimeout(() => this.#startDrain(), this.#coalesceMs);
      } else if (this.#timer !== undefined && performance.now() - this.#heldSince >= this.#coalesceMs) this.#startDrain();
      return;
    }
    this.#pending.push(update);
    this.#startDrain();
  }

  /** Resolves when every update pushed so far has been written (or dropped after a send failure). */
  async flushed(): Promise<void> {
    this.#forced += 1;
    try {
      while (this.#draining || (this.#pending.length > 0 && !this.#failed)) {
        this.#startDrain();
        await this.#draining;
      }
    } finally {
      this.#forced -= 1;
    }
  }

  #startDrain(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#draining ??= this.#drain();
  }

  /** Hold the chunk that arrived during the last write for a new window (instead of sending it alone)? */
  #holdable(): boolean {
    return this.#coalesceMs > 0 && this.#forced === 0 && this.#pending.length === 1 && isTextChunk(this.#pending[0]!);
  }

  async #drain(): Promise<void> {
    let hold = false;
    try {
      await null; // so #draining is assigned before this can finish
      for (let first = true; this.#pending.length > 0; first = false) {
        if (!first && this.#holdable()) {
          hold = true;
          break;
        }
        const batch = this.#pending;
        const bytes = this.#pendingBytes;
        this.#pending = [];
        this.#pendingBytes = 0;
        // The SDK queues writes in call order, so a batch can be handed over at once (pipelined)
        // and awaited together; the next batch waits, which keeps memory bounded by the backlog.
        try {
          await Promise.all(batch.map((update) => this.#sink(update)));
        } finally {
          this.#account?.release(bytes);
        }
      }
    } catch (error) {
      // The connection is gone: later updates have nowhere to go; the prompt ends on its own.
      this.#failed = true;
      this.#pending = [];
      this.#account?.release(this.#pendingBytes);
      this.#pendingBytes = 0;
      this.#logger.warn("session/update could not be sent; dropping further updates for this session", { error: errorMessage(error) });
    } finally {
      this.#draining = undefined;
      if (hold && this.#timer === undefined) {
        this.#heldSince = performance.now();
        this.#timer = setTimeout(() => this.#startDrain(), this.#coalesceMs);
      }
    }
  }
}

function isTextChunk(update: SessionUpdate): update is TextChunk {
  return (update.sessionUpdate === "agent_message_chunk" || update.sessionUpdate === "agent_thought_chunk") && update.content.type === "text";
}
