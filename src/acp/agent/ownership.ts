import type { Item, SessionId } from "../../core/index.js";
import type { CreateSessionInput, ListSessionsOptions, ListSessionsResult, LoadedSession, SessionHeader, SessionHeaderPatch, SessionReader, SessionStore } from "../../store/index.js";
import { SessionStoreError, openSessionReader } from "../../store/index.js";
import type { OpenSession, OpenSessions } from "./lifecycle-settings.js";

/** How many of its sessions a connection's store view remembers as its own. */
const MAX_REMEMBERED = 1024;

/**
 * The store as one principal sees it: sessions it creates are its own, and another principal's
 * read exactly like sessions that do not exist (load → undefined, exists/delete → false, header
 * writes → `session_not_found`), so nothing about them leaks and nothing of them changes.
 * `onForeign` hears of each such attempt (the audit trail), the client never does.
 */
export function ownedSessionStore(store: SessionStore, principal: string, onForeign?: (id: SessionId, owner: string) => void): SessionStore {
  const owned = async (id: SessionId): Promise<LoadedSession | undefined> => {
    const loaded = await store.load(id);
    if (loaded !== undefined && loaded.header.owner !== principal) onForeign?.(id, loaded.header.owner);
    return loaded?.header.owner === principal ? loaded : undefined;
  };
  // The owner is in the header as created: a reader tells it without reading the transcript.
  const read = async (id: SessionId): Promise<SessionReader | undefined> => {
    const reader = await openSessionReader(store, id);
    if (reader === undefined) return undefined;
    if (reader.created.owner === principal) return reader;
    onForeign?.(id, reader.created.owner);
    await reader.close();
    return undefined;
  };
  // Sessions known to be this principal's (the owner never changes): a header write to one goes
  // to the store in the same tick, so the JSONL store joins it to an append queued just before
  // (the first prompt's title with its user item: one write, one fdatasync).
  const mine = new Set<SessionId>();
  const remember = (id: SessionId): void => {
    if (mine.size >= MAX_REMEMBERED) mine.delete(mine.values().next().value as SessionId);
    mine.add(id);
  };
  const isOwned = async (id: SessionId): Promise<boolean> => {
    const reader = await read(id);
    await reader?.close();
    if (reader !== undefined) remember(id);
    return reader !== undefined;
  };
  const notFound = (id: SessionId): SessionStoreError => new SessionStoreError("session_not_found", `session ${JSON.stringify(id)} not found`);
  return {
    create: async (input: CreateSessionInput): Promise<SessionHeader> => {
      const header = await store.create({ ...input, owner: principal });
      remember(header.sessionId);
      return header;
    },
    // Only reached for sessions this connection opened or just created (both checked above).
    append: (id: SessionId, item: Item): Promise<void> => store.append(id, item),
    load: owned,
    read,
    list: (options: ListSessionsOptions = {}): Promise<ListSessionsResult> => store.list({ ...options, owner: principal }),
    updateHeader(id: SessionId, patch: SessionHeaderPatch): Promise<void> {
      if (mine.has(id)) return store.updateHeader(id, patch);
      return isOwned(id).then((owned) => {
        if (!owned) throw notFound(id);
        return store.updateHeader(id, patch);
      });
    },
    // The owner never changes, so checking first cannot race with another principal's write.
    delete: async (id: SessionId): Promise<boolean> => {
      const deleted = (await isOwned(id)) && (await store.delete(id));
      mine.delete(id);
      return deleted;
    },
    exists: isOwned,
  };
}

/** The runtime's open sessions as one principal sees them: another principal's are not there. */
export function ownedOpenSessions(open: OpenSessions, principal: string): OpenSessions {
  const mine = (entry: OpenSession | undefined): OpenSession | undefined => (entry?.owner === principal ? entry : undefined);
  return {
    get: (id) => mine(open.get(id)),
    set: (id, session) => {
      open.set(id, { ...session, owner: principal });
      return undefined;
    },
    delete: (id) => mine(open.get(id)) !== undefined && open.delete(id),
  };
}
