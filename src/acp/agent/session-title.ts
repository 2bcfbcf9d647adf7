import type { Logger, TranscriptObserver } from "../../core/index.js";
import { errorMessage } from "../../core/index.js";
import type { SessionStore } from "../../store/index.js";

/**
 * The first prompt's title is stored as the prompt's user item is, so a session killed during
 * its first turn keeps it (it was stored after the turn, and such a session listed as untitled).
 */
export interface SessionTitleState {
  /** The title as last stored or told (undefined until the first prompt sets one). */
  title: string | undefined;
  /** The first prompt's title until its store write starts. */
  unstoredTitle?: string;
  /** That write (it never rejects), awaited when the turn ends. */
  titleWrite?: Promise<void>;
}

/** Starts the write of an unstored title, if any. */
export function startTitleWrite(state: SessionTitleState, store: SessionStore, sessionId: string, logger: Logger): void {
  const title = state.unstoredTitle;
  state.unstoredTitle = undefined;
  if (title === undefined) return;
  state.titleWrite = store.updateHeader(sessionId, { title }).catch((error: unknown) => {
    logger.warn("could not store the session title", { sessionId, error: errorMessage(error) });
  });
}

/**
 * The store observer, plus: the write of the first prompt's title starts right after its user
 * item's (the JSONL store makes both one append and one fdatasync; PostgreSQL runs it as the next
 * statement), not awaited there: the model is called once the item is durable, as before.
 */
export function titledTranscript(items: TranscriptObserver, state: () => SessionTitleState | undefined, store: SessionStore, sessionId: string, logger: Logger): TranscriptObserver {
  return {
    handleItem: (event) => {
      const written = items.handleItem(event);
      const entry = state();
      if (entry?.unstoredTitle !== undefined && event.item.role === "user") startTitleWrite(entry, store, sessionId, logger);
      return written;
    },
  };
}

/** At the turn's end: the title's write done (started now if no user item was written). */
export async function titleStored(state: SessionTitleState, store: SessionStore, sessionId: string, logger: Logger): Promise<void> {
  startTitleWrite(state, store, sessionId, logger);
  const write = state.titleWrite;
  state.titleWrite = undefined;
  await write;
}
