import type { PostgresDatabase } from "./database.js";

/** One session's items to append, in order; `token`: the lease token the write is fenced with. */
export interface ItemBatch {
  key: Buffer;
  token: string | null;
  items: ReadonlyArray<{ json: string; at: string }>;
}

interface Waiting {
  batch: ItemBatch;
  resolve(written: boolean): void;
  reject(error: unknown): void;
}

/** Statements in flight at once: while they commit, what arrives is gathered into the next. */
const MAX_IN_FLIGHT = 2;
/** Bounds on one statement. */
const MAX_SESSIONS = 256;
const MAX_BYTES = 8 * 1024 * 1024;

/**
 * Group commit across sessions: item writes of different sessions that arrive while
 * `MAX_IN_FLIGHT` statements are committing go out together as one statement (one round trip,
 * one commit, one WAL flush); writes arriving in the same tick are gathered too. Nothing is
 * acknowledged before its commit, and a session has at most one batch here at a time (the
 * session store's queue), so each session's items still land in call order. `write` resolves
 * false when the session was not written (missing, or its lease no longer current).
 */
export class GroupItemWriter {
  readonly #db: PostgresDatabase;
  readonly #single: string;
  readonly #group: string;
  #waiting: Waiting[] = [];
  #inFlight = 0;
  #scheduled = false;

  constructor(db: PostgresDatabase) {
    this.#db = db;
    const sessions = db.table("agentkit_sessions");
    const items = db.table("agentkit_items");
    const leases = db.table("agentkit_leases");
    const fenced = (id: string, token: string): string =>
      `(${token} IS NULL OR EXISTS (SELECT 1 FROM ${leases} l WHERE l.session_id = ${id} AND l.token = ${token} AND l.expires_at > now()))`;
    // One item of one session (a quiet server's usual write): plain parameters, no arrays to
    // escape into literals here and parse back there.
    this.#single = `WITH s AS (
        UPDATE ${sessions} SET item_count = item_count + 1, updated_at = $2 WHERE id = $1 AND ${fenced("$1", "$4::text")} RETURNING item_count
      )
      INSERT INTO ${items} (session_id, seq, at, item) SELECT $1, s.item_count, $2, $3::json FROM s`;
    // Sessions b (index, key, count, last time, token), items i (session index, ordinal, time, item).
    this.#group = `WITH b AS (
        SELECT * FROM unnest($1::bytea[], $2::int[], $3::timestamptz[], $4::text[]) WITH ORDINALITY AS b(id, n, at, token, idx)
      ), s AS (
        UPDATE ${sessions} x SET item_count = x.item_count + b.n, updated_at = b.at FROM b
         WHERE x.id = b.id AND ${fenced("b.id", "b.token")}
        RETURNING b.idx, x.id, x.item_count - b.n AS base
      ), i AS (
        INSERT INTO ${items} (session_id, seq, at, item)
        SELECT s.id, s.base + i.ord, i.at, i.item
          FROM unnest($5::int[], $6::int[], $7::timestamptz[], $8::json[]) AS i(idx, ord, at, item) JOIN s ON s.idx = i.idx
      )
      SELECT idx FROM s`;
  }

  write(batch: ItemBatch): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ batch, resolve, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      queueMicrotask(() => {
        this.#scheduled = false;
        this.#kick();
      });
    });
  }

  #kick(): void {
    while (this.#inFlight < MAX_IN_FLIGHT && this.#waiting.length > 0) {
      let bytes = 0;
      let take = 0;
      while (take < this.#waiting.length && take < MAX_SESSIONS && (take === 0 || bytes < MAX_BYTES)) {
        for (const item of this.#waiting[take]!.batch.items) bytes += item.json.length;
        take++;
      }
      const group = this.#waiting.splice(0, take);
      this.#inFlight++;
      void this.#send(group).finally(() => {
        this.#inFlight--;
        this.#kick();
      });
    }
  }

  async #send(group: Waiting[]): Promise<void> {
    try {
      const written = await this.#statement(group.map((w) => w.batch));
      group.forEach((w, i) => w.resolve(written.has(i + 1)));
    } catch (error) {
      // A deadlock (the statement locks several sessions' rows; another transaction locking
      // two of them the other way round, e.g. a prune, can close a cycle): nothing was
      // committed, so each session's batch goes again on its own. Anything else fails them all
      // unretried (the connection lost: the commit may or may not have happened).
      if (group.length > 1 && definite(error)) {
        await Promise.all(group.map((w) => this.#send([w])));
        return;
      }
      for (const w of group) w.reject(error);
    }
  }

  /** The 1-based indexes (in `batches`) of the sessions written. */
  async #statement(batches: ItemBatch[]): Promise<Set<number>> {
    const only = batches[0]!;
    if (batches.length === 1 && only.items.length === 1) {
      const item = only.items[0]!;
      const { rowCount } = await this.#db.query(this.#single, [only.key, item.at, item.json, only.token], true, undefined, "agentkit_append_item");
      return new Set(rowCount === 1 ? [1] : []);
    }
    const itemIdx: number[] = [];
    const ords: number[] = [];
    const ats: string[] = [];
    const jsons: string[] = [];
    batches.forEach((b, i) => {
      b.items.forEach((item, ord) => {
        itemIdx.push(i + 1);
        ords.push(ord + 1);
        ats.push(item.at);
        jsons.push(item.json);
      });
    });
    const { rows } = await this.#db.query<{ idx: string }>(
      this.#group,
      [batches.map((b) => b.key), batches.map((b) => b.items.length), batches.map((b) => b.items.at(-1)!.at), batches.map((b) => b.token), itemIdx, ords, ats, jsons],
      true,
      undefined,
      "agentkit_append_items",
    );
    return new Set(rows.map((r) => Number(r.idx)));
  }
}

/** Deadlock or serialization failure: the statement certainly did not commit. */
function definite(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === "40P01" || code === "40001";
}
