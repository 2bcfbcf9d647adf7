import type { AgentEvent, Item, Logger, LoopObserver, SessionId, TranscriptObserver } from "../core/index.js";
import { errorMessage } from "../core/index.js";

/** Fans events and committed items out to every observer; an observer that throws is logged, never fatal. */
export class ObserverHub {
  readonly #observers: LoopObserver[];
  readonly #transcript: TranscriptObserver[];
  readonly #sessionId: SessionId;
  readonly #logger: Logger;

  constructor(sessionId: SessionId, observers: LoopObserver[], transcript: TranscriptObserver[], logger: Logger) {
    this.#sessionId = sessionId;
    this.#observers = observers;
    this.#transcript = transcript;
    this.#logger = logger;
  }

  emit(event: AgentEvent): void {
    for (const observer of this.#observers) {
      try {
        observer.handleEvent({ sessionId: this.#sessionId, event });
      } catch (error) {
        this.#logger.warn("loop observer threw; ignored", { error: errorMessage(error), event: event.type });
      }
    }
  }

  /** The first observer's backlog (see `LoopObserver.backlog`), undefined when none has one. */
  backlog(): Promise<void> | undefined {
    for (const observer of this.#observers) {
      const wait = observer.backlog?.(this.#sessionId);
      if (wait !== undefined) return wait;
    }
    return undefined;
  }

  /** Awaited: a durable store flushes the item before the turn goes on. A failing store is an error. */
  async commit(item: Item): Promise<void> {
    for (const observer of this.#transcript) await observer.handleItem({ sessionId: this.#sessionId, item });
  }
}
