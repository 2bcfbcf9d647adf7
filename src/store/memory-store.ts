import type { Item, SessionId } from "../core/index.js";
import type {
  CreateSessionInput,
  ListSessionsOptions,
  ListSessionsResult,
  LoadedSession,
  SessionHeader,
  SessionHeaderPatch,
  SessionStore,
} from "./types.js";
import { SessionStoreError } from "./types.js";
import { applyPatch, assertItem, jsonClone, newHeader, normalizePatch, summaryOf } from "./header.js";
import { paginate } from "./pagination.js";

/** Options of `InMemorySessionStore`: the clock that stamps sessions (tests pin it). */
export interface InMemorySessionStoreOptions {
  clock?: () => Date;
}

/**
 * Process-lifetime store with the file store's semantics (same validation, same JSON round
 * trip of every value, same ordering and pagination). For tests and ephemeral runtimes.
 */
export class InMemorySessionStore implements SessionStore {
  readonly #sessions = new Map<SessionId, { header: SessionHeader; items: Item[] }>();
  readonly #clock: () => Date;

  constructor(options: InMemorySessionStoreOptions = {}) {
    this.#clock = options.clock ?? (() => new Date());
  }

  async create(input: CreateSessionInput): Promise<SessionHeader> {
    const header = newHeader(input, this.#clock());
    if (this.#sessions.has(header.sessionId)) throw new SessionStoreError("session_exists", `session ${header.sessionId} already exists`);
    this.#sessions.set(header.sessionId, { header: jsonClone(header), items: [] });
    return header;
  }

  async append(sessionId: SessionId, item: Item): Promise<void> {
    assertItem(item);
    const copy = jsonClone(item);
    const session = this.#get(sessionId);
    session.items.push(copy);
    session.header.updatedAt = this.#clock().toISOString();
  }

  async updateHeader(sessionId: SessionId, patch: SessionHeaderPatch): Promise<void> {
    const normalized = normalizePatch(patch);
    applyPatch(this.#get(sessionId).header, normalized, this.#clock().toISOString());
  }

  async load(sessionId: SessionId): Promise<LoadedSession | undefined> {
    const session = this.#sessions.get(sessionId);
    if (!session) return undefined;
    return { header: jsonClone(session.header), items: jsonClone(session.items), warnings: [] };
  }

  async list(options: ListSessionsOptions = {}): Promise<ListSessionsResult> {
    return paginate(
      [...this.#sessions.values()].map((s) => summaryOf(s.header)),
      options,
    );
  }

  async delete(sessionId: SessionId): Promise<boolean> {
    return this.#sessions.delete(sessionId);
  }

  async exists(sessionId: SessionId): Promise<boolean> {
    return this.#sessions.has(sessionId);
  }

  #get(sessionId: SessionId): { header: SessionHeader; items: Item[] } {
    const session = this.#sessions.get(sessionId);
    if (!session) throw new SessionStoreError("session_not_found", `session ${JSON.stringify(sessionId)} not found`);
    return session;
  }
}
