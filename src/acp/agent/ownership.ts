import type { Item, SessionId } from "../../core/index.js";
import type { CreateSessionInput, ListSessionsOptions, ListSessionsResult, LoadedSession, SessionHeader, SessionHeaderPatch, SessionStore } from "../../store/index.js";
import { SessionStoreError } from "../../store/index.js";
import type { OpenSession, OpenSessions } from "./lifecycle-settings.js";

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
  const notFound = (id: SessionId): SessionStoreError => new SessionStoreError("session_not_found", `session ${JSON.stringify(id)} not found`);
  return {
    create: (input: CreateSessionInput): Promise<SessionHeader> => store.create({ ...input, owner: principal }),
    // Only reached for sessions this connection opened or just created (both checked above).
    append: (id: SessionId, item: Item): Promise<void> => store.append(id, item),
    load: owned,
    list: (options: ListSessionsOptions = {}): Promise<ListSessionsResult> => store.list({ ...options, owner: principal }),
    async updateHeader(id: SessionId, patch: SessionHeaderPatch): Promise<void> {
      if (!(await owned(id))) throw notFound(id);
      await store.updateHeader(id, patch);
    },
    // The owner never changes, so checking first cannot race with another principal's write.
    delete: async (id: SessionId): Promise<boolean> => (await owned(id)) !== undefined && store.delete(id),
    exists: async (id: SessionId): Promise<boolean> => (await owned(id)) !== undefined,
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
