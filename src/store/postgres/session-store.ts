import type { Item, SessionId } from "../../core/index.js";
import { AgentKitError } from "../../core/index.js";
import type {
  CreateSessionInput,
  ListSessionsOptions,
  ListSessionsResult,
  LoadedSession,
  SessionHeader,
  SessionHeaderPatch,
  SessionReader,
  SessionStore,
  SessionSummary,
  StoredItem,
} from "../types.js";
import { DEFAULT_OWNER, SessionStoreError } from "../types.js";
import { applyPatch, assertItem, newHeader, normalizePatch, summaryOf } from "../header.js";
import type { PageQuery } from "../pagination.js";
import { pageOf, pageQuery } from "../pagination.js";
import { isValidSessionId } from "../session-ids.js";
import type { PostgresDatabase } from "./database.js";
import { GroupItemWriter } from "./item-writer.js";

/**
 * Options of `PostgresSessionStore`: the clock, and the lease fence that refuses writes to a session this instance no
 * longer holds.
 */
export interface PostgresSessionStoreOptions {
  /** Source of `createdAt` / `updatedAt` times (tests pin it). */
  clock?: () => Date;
  /**
   * Fencing: the lease token this instance holds for a session (e.g. `leases.fenceToken`).
   * Writes to a session with a token commit only while that lease is still current in the
   * database, so a write delayed past a lost lease can never land in a session another
   * instance has taken over (it fails with `session_lease_lost`).
   */
  fence?: (sessionId: SessionId) => string | undefined;
}

/** Items per query of a streaming read. */
const READ_BATCH = 500;
/** Headers remembered for one-statement patches (a session's first prompt stores its title). */
const MAX_CACHED_HEADERS = 1024;
const EPOCH = new Date(0);

/** The key a session is stored under: UTF-16BE bytes, so `bytea` order is JavaScript string order. */
export function sessionKey(sessionId: SessionId): Buffer {
  return Buffer.from(sessionId, "utf16le").swap16();
}

/** What a header row keeps in `header` (cwd and updatedAt live in their own, indexed, columns). */
type StoredHeader = Omit<SessionHeader, "cwd" | "updatedAt">;

type HeaderRow = {
  header: StoredHeader;
  cwd: string;
  updated_at: Date;
};

type Pending =
  | { kind: "item"; json: string; at: string; done: Settle }
  | { kind: "patch"; patch: SessionHeaderPatch; at: string; done: Settle };

interface Settle {
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Sessions in PostgreSQL (tables in migrations.ts). Each write is acknowledged only after its
 * commit, so an instance killed at any point loses nothing it acknowledged. Writes to one
 * session are queued in call order; items that queue up while a write is in flight go out
 * together, and so do other sessions' (GroupItemWriter: one statement, one commit), so a busy
 * server costs fewer round trips without acknowledging anything early. A header update is one
 * statement when the header is as this instance last wrote or read it, else a transaction
 * (read, patch with the same rules as the file store, write).
 */
export class PostgresSessionStore implements SessionStore {
  readonly #db: PostgresDatabase;
  readonly #clock: () => Date;
  readonly #fence: (sessionId: SessionId) => string | undefined;
  readonly #leases: string;
  readonly #queues = new Map<SessionId, Pending[]>();
  readonly #sessions: string;
  readonly #items: string;
  readonly #writer: GroupItemWriter;
  readonly #headers = new Map<SessionId, { text: string; header: SessionHeader }>();

  constructor(db: PostgresDatabase, options: PostgresSessionStoreOptions = {}) {
    this.#db = db;
    this.#clock = options.clock ?? (() => new Date());
    this.#fence = options.fence ?? (() => undefined);
    this.#leases = db.table("agentkit_leases");
    this.#sessions = db.table("agentkit_sessions");
    this.#items = db.table("agentkit_items");
    this.#writer = new GroupItemWriter(db);
  }

  async create(input: CreateSessionInput): Promise<SessionHeader> {
    const header = newHeader(input, this.#clock());
    const { cwd, updatedAt, ...stored } = header;
    const text = json(stored);
    const result = await this.#db
      .query(
        `INSERT INTO ${this.#sessions} (id, cwd, updated_at, header, owner) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING`,
        [sessionKey(header.sessionId), cwd, updatedAt, text, header.owner],
        true,
      )
      .catch(translate);
    if (result.rowCount === 0) throw new SessionStoreError("session_exists", `session ${header.sessionId} already exists`);
    this.#remember(header.sessionId, text, cwd);
    return header;
  }

  async append(sessionId: SessionId, item: Item): Promise<void> {
    assertItem(item);
    const text = json(item);
    return this.#enqueue(sessionId, (done) => ({ kind: "item", json: text, at: this.#now(), done }));
  }

  async updateHeader(sessionId: SessionId, patch: SessionHeaderPatch): Promise<void> {
    const normalized = normalizePatch(patch);
    return this.#enqueue(sessionId, (done) => ({ kind: "patch", patch: normalized, at: this.#now(), done }));
  }

  async load(sessionId: SessionId): Promise<LoadedSession | undefined> {
    if (!isValidSessionId(sessionId)) return undefined;
    // One statement: header and items come from one snapshot.
    const { rows } = await this.#db
      .query<HeaderRow & { items: Item[] }>(
        `SELECT s.header, s.cwd, s.updated_at,
                (SELECT coalesce(json_agg(i.item ORDER BY i.seq), '[]'::json) FROM ${this.#items} i WHERE i.session_id = s.id) AS items
           FROM ${this.#sessions} s WHERE s.id = $1`,
        [sessionKey(sessionId)],
      )
      .catch(translate);
    const row = rows[0];
    if (!row) return undefined;
    this.#remember(sessionId, json(row.header), row.cwd); // a restore updates cwd next
    return { header: headerOf(row), items: row.items, warnings: [] };
  }

  /**
   * Item by item, in batches of `READ_BATCH` (keyset on seq): the items committed when the
   * header was read, so a long session never arrives as one JSON array.
   */
  async read(sessionId: SessionId): Promise<SessionReader | undefined> {
    if (!isValidSessionId(sessionId)) return undefined;
    const key = sessionKey(sessionId);
    const { rows } = await this.#db
      .query<HeaderRow & { item_count: number }>(`SELECT header, cwd, updated_at, item_count FROM ${this.#sessions} WHERE id = $1`, [key])
      .catch(translate);
    const row = rows[0];
    if (!row) return undefined;
    const header = headerOf(row);
    const db = this.#db;
    const items = this.#items;
    return {
      created: structuredClone(header),
      async *items(): AsyncIterable<StoredItem> {
        for (let after = 0; after < row.item_count; ) {
          const batch = await db
            .query<{ seq: number; at: Date; item: Item }>(`SELECT seq, at, item FROM ${items} WHERE session_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT ${READ_BATCH}`, [
              key,
              after,
              row.item_count,
            ])
            .catch(translate);
          if (batch.rows.length === 0) break;
          for (const r of batch.rows) yield { item: r.item, at: r.at.toISOString() };
          after = batch.rows.at(-1)!.seq;
        }
      },
      result: () => ({ header, warnings: [] }),
      close: async () => {},
    };
  }

  async list(options: ListSessionsOptions = {}): Promise<ListSessionsResult> {
    const query = pageQuery(options);
    const { text, values } = listStatement(this.#sessions, query);
    const { rows } = await this.#db.query<HeaderRow>(text, values).catch(translate);
    const summaries: SessionSummary[] = rows.map((row) => summaryOf(headerOf(row)));
    return pageOf(summaries, query.limit);
  }

  async delete(sessionId: SessionId): Promise<boolean> {
    if (!isValidSessionId(sessionId)) return false;
    this.#headers.delete(sessionId);
    const result = await this.#db.query(`DELETE FROM ${this.#sessions} WHERE id = $1`, [sessionKey(sessionId)], true).catch(translate);
    return (result.rowCount ?? 0) > 0;
  }

  async exists(sessionId: SessionId): Promise<boolean> {
    if (!isValidSessionId(sessionId)) return false;
    const result = await this.#db.query(`SELECT 1 FROM ${this.#sessions} WHERE id = $1`, [sessionKey(sessionId)]).catch(translate);
    return (result.rowCount ?? 0) > 0;
  }

  /** SQL: true when no fence token is given (parameter `param`) or that lease is still current. */
  #fenced(param: string): string {
    return `(${param}::text IS NULL OR EXISTS (SELECT 1 FROM ${this.#leases} l WHERE l.session_id = $1 AND l.token = ${param} AND l.expires_at > now()))`;
  }

  async #whyNotWritten(sessionId: SessionId, token: string | null): Promise<AgentKitError> {
    if (token !== null && (await this.exists(sessionId))) return leaseLost(sessionId);
    return notFound(sessionId);
  }

  #now(): string {
    return this.#clock().toISOString();
  }

  #enqueue(sessionId: SessionId, make: (done: Settle) => Pending): Promise<void> {
    if (!isValidSessionId(sessionId)) return Promise.reject(notFound(sessionId));
    return new Promise<void>((resolve, reject) => {
      const entry = make({ resolve, reject });
      const queue = this.#queues.get(sessionId);
      if (queue) {
        queue.push(entry);
        return;
      }
      this.#queues.set(sessionId, [entry]);
      void this.#drain(sessionId);
    });
  }

  /** Writes a session's queue in order until it is empty; every entry is settled exactly once. */
  async #drain(sessionId: SessionId): Promise<void> {
    const queue = this.#queues.get(sessionId)!;
    while (queue.length > 0) {
      const first = queue[0]!;
      let batch: Pending[];
      if (first.kind === "item") {
        const end = queue.findIndex((p) => p.kind !== "item");
        batch = queue.splice(0, end === -1 ? queue.length : end);
      } else {
        batch = queue.splice(0, 1);
      }
      try {
        if (first.kind === "patch") await this.#writePatch(sessionId, first.patch, first.at);
        else await this.#writeItems(sessionId, batch as Array<Extract<Pending, { kind: "item" }>>);
        for (const p of batch) p.done.resolve();
      } catch (error) {
        for (const p of batch) p.done.reject(error);
      }
    }
    this.#queues.delete(sessionId);
  }

  async #writeItems(sessionId: SessionId, batch: Array<Extract<Pending, { kind: "item" }>>): Promise<void> {
    const token = this.#fence(sessionId) ?? null;
    const written = await this.#writer.write({ key: sessionKey(sessionId), token, items: batch }).catch(translate);
    if (!written) throw await this.#whyNotWritten(sessionId, token);
    this.#db.countItems(batch.length);
  }



  async #writePatch(sessionId: SessionId, patch: SessionHeaderPatch, at: string): Promise<void> {
    const token = this.#fence(sessionId) ?? null;
    const cached = this.#headers.get(sessionId);
    if (cached) {
      // One statement when the header is as this instance last saw it (compared in the same
      // statement, so a change by anyone else since falls back to the transaction below).
      const { cwd, updatedAt, ...stored } = applyPatch(structuredClone(cached.header), patch, at);
      const text = json(stored);
      const { rowCount } = await this.#db
        .query(
          `UPDATE ${this.#sessions} SET header = $2, cwd = $3, updated_at = $4, archived = $5
            WHERE id = $1 AND header::text = $6 AND cwd = $7 AND ${this.#fenced("$8")}`,
          [sessionKey(sessionId), text, cwd, updatedAt, stored.archived === true, cached.text, cached.header.cwd, token],
          true,
          undefined,
          "agentkit_patch_header",
        )
        .catch(translate);
      if (rowCount === 1) return this.#remember(sessionId, text, cwd);
    }
    await this.#db
      .transaction(async (query) => {
        const { rows } = await query<HeaderRow>(`SELECT header, cwd, updated_at FROM ${this.#sessions} WHERE id = $1 AND ${this.#fenced("$2")} FOR UPDATE`, [sessionKey(sessionId), token]);
        const row = rows[0];
        if (!row) throw await this.#whyNotWritten(sessionId, token);
        const { cwd, updatedAt, ...stored } = applyPatch(headerOf(row), patch, at);
        const text = json(stored);
        await query(`UPDATE ${this.#sessions} SET header = $2, cwd = $3, updated_at = $4, archived = $5 WHERE id = $1`, [sessionKey(sessionId), text, cwd, updatedAt, stored.archived === true]);
        this.#remember(sessionId, text, cwd);
      })
      .catch(translate);
  }

  /** The header as stored (its `header` column's text and cwd), for the next patch; the most recent MAX_CACHED_HEADERS sessions. */
  #remember(sessionId: SessionId, text: string, cwd: string): void {
    this.#headers.delete(sessionId);
    this.#headers.set(sessionId, { text, header: headerOf({ header: JSON.parse(text) as StoredHeader, cwd, updated_at: EPOCH }) });
    if (this.#headers.size > MAX_CACHED_HEADERS) this.#headers.delete(this.#headers.keys().next().value!);
  }

}

/**
 * One page of `list` as SQL (exported so the benchmark can EXPLAIN exactly what runs). The
 * keyset condition repeats `updated_at <= cursor` on its own: the OR alone is not an index
 * condition, so a deep page would scan every row before the cursor and filter them out; with it
 * the index scan starts at the cursor. Parameters are planned with their values (unnamed
 * statements), so an absent filter (`$n IS NULL`) folds away and the owner / cwd index applies.
 */
export function listStatement(table: string, query: PageQuery): { text: string; values: unknown[] } {
  const after = query.after;
  if (after !== undefined && Number.isNaN(Date.parse(after.updatedAt))) throw new SessionStoreError("invalid_cursor", "invalid session list cursor");
  return {
    text: `SELECT header, cwd, updated_at FROM ${table}
          WHERE ($1::text IS NULL OR cwd = $1)
            AND ($2::timestamptz IS NULL OR (updated_at <= $2 AND (updated_at < $2 OR id > $3)))
            AND ($5::text = 'include' OR archived = ($5::text = 'only'))
            AND ($6::text IS NULL OR owner = $6)
          ORDER BY updated_at DESC, id ASC
          LIMIT $4`,
    values: [query.cwd ?? null, after?.updatedAt ?? null, after ? sessionKey(after.sessionId) : null, query.limit + 1, query.archived, query.owner ?? null],
  };
}

/** The lease was lost (another instance may run the session now): nothing was written. */
function leaseLost(sessionId: SessionId): AgentKitError {
  return new AgentKitError("session_lease_lost", `this instance no longer holds the lease on session ${JSON.stringify(sessionId)}; nothing was written`);
}

function headerOf(row: HeaderRow): SessionHeader {
  const { header } = row;
  const out: SessionHeader = {
    version: header.version,
    sessionId: header.sessionId,
    owner: typeof header.owner === "string" && header.owner !== "" ? header.owner : DEFAULT_OWNER,
    cwd: row.cwd,
    additionalDirectories: header.additionalDirectories,
    createdAt: header.createdAt,
    updatedAt: row.updated_at.toISOString(),
    metadata: header.metadata,
  };
  if (header.title !== undefined) out.title = header.title;
  if (header.archived === true) out.archived = true;
  if (header.forkedFrom !== undefined) out.forkedFrom = header.forkedFrom;
  return out;
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    throw new SessionStoreError("invalid_argument", "record is not JSON-serializable", { cause: error });
  }
}

function notFound(sessionId: SessionId): SessionStoreError {
  return new SessionStoreError("session_not_found", `session ${JSON.stringify(sessionId)} not found`);
}

/** Our own errors pass; a value PostgreSQL refuses (class 22: e.g. NUL in text) is bad input; the rest says the store failed. */
function translate(error: unknown): never {
  if (error instanceof AgentKitError) throw error;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && code.startsWith("22")) throw new SessionStoreError("invalid_argument", `PostgreSQL refused a value: ${(error as Error).message}`, { cause: error });
  throw new AgentKitError("store_unavailable", `PostgreSQL session store: ${(error as Error).message ?? String(error)}`, { cause: error });
}
