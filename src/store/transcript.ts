import type { LoopSnapshot, SessionId, TranscriptObserver } from "../core/index.js";
import type { LoadedSession, SessionHeader, SessionReader, SessionStore, StoredItem } from "./types.js";

/**
 * Options of `storeTranscriptObserver`: which store session each committed item goes to, and where a failed write is
 * reported.
 */
export interface StoreTranscriptObserverOptions {
  /**
   * The store session an item goes to. Default: the loop's own session id. Pass a string when
   * one observer serves one session under another id (e.g. the ACP session id), or a function
   * to map loop session ids.
   */
  sessionId?: SessionId | ((loopSessionId: SessionId) => SessionId);
}

/**
 * Persists every committed transcript item. The loop awaits `handleItem`, so an item is durable
 * before the turn goes on; a failing store fails the turn rather than losing items silently.
 * The store session must exist (`store.create`) before the first item is committed.
 */
export function storeTranscriptObserver(store: SessionStore, options: StoreTranscriptObserverOptions = {}): TranscriptObserver {
  const target = options.sessionId;
  const idFor = (loopSessionId: SessionId): SessionId =>
    target === undefined ? loopSessionId : typeof target === "string" ? target : target(loopSessionId);
  return {
    handleItem: ({ sessionId, item }) => store.append(idFor(sessionId), item),
  };
}

/** Options of `snapshotFromSession`: the loop session id and metadata a stored session resumes under. */
export interface SnapshotFromSessionOptions {
  /** The loop session id to resume under; default: the stored session id. */
  sessionId?: SessionId;
  /** Loop metadata; default: the stored header metadata. */
  metadata?: Record<string, unknown>;
}

/** A `LoopSnapshot` for `agent.start({ snapshot })`: the loaded transcript becomes the loop's, nothing re-emitted. */
export function snapshotFromSession(session: LoadedSession, options: SnapshotFromSessionOptions = {}): LoopSnapshot {
  return {
    version: 1,
    sessionId: options.sessionId ?? session.header.sessionId,
    items: structuredClone(session.items),
    metadata: structuredClone(options.metadata ?? session.header.metadata),
  };
}

/**
 * The session item by item: the store's own reader where it has one, else its `load` behind the
 * same interface (the whole transcript then is in memory at once).
 */
export async function openSessionReader(store: SessionStore, sessionId: SessionId): Promise<SessionReader | undefined> {
  if (store.read) return store.read(sessionId);
  const loaded = await store.load(sessionId);
  if (!loaded) return undefined;
  return {
    created: structuredClone(loaded.header),
    async *items(): AsyncIterable<StoredItem> {
      for (const item of loaded.items) yield { item, at: item.createdAt };
    },
    result: (): { header: SessionHeader; warnings: string[] } => ({ header: loaded.header, warnings: loaded.warnings }),
    close: async () => {},
  };
}
