import type { Logger } from "../../core/index.js";
import { createStderrLogger, errorMessage } from "../../core/index.js";
import { newLeaseHolderName } from "../leases.js";
import type { QuotaSlotKind, QuotaStore, QuotaTake } from "../quotas.js";
import { PROMPT_WINDOW_MS, QUOTA_SLOT_TTL_MS } from "../quotas.js";
import type { PostgresDatabase, Query } from "./database.js";

/** Options of `PostgresQuotaStore`: this instance's holder name, how long an unrenewed slot counts, and the logger. */
export interface PostgresQuotaStoreOptions {
  holder?: string;
  ttlMs?: number;
  logger?: Logger;
}

/** Days of token counters kept (today and the day before are all a per-day quota reads). */
const TOKEN_DAYS_KEPT = 2;

/**
 * Quotas in PostgreSQL, shared by every instance on the database. Each take is one transaction
 * under a transaction-level advisory lock on (schema, principal, what): instances asking at the
 * same moment are serialized, so a limit is never passed by a race. Slots are rows with an
 * expiry on the database clock that this instance renews in one statement every third of the
 * ttl; a dead instance's slots stop counting when they expire.
 */
export class PostgresQuotaStore implements QuotaStore {
  readonly holder: string;
  readonly #db: PostgresDatabase;
  readonly #ttlMs: number;
  readonly #logger: Logger;
  readonly #timer: NodeJS.Timeout;
  #held = 0;
  #lastPrune = 0;

  constructor(db: PostgresDatabase, options: PostgresQuotaStoreOptions = {}) {
    this.#db = db;
    this.holder = options.holder ?? newLeaseHolderName();
    this.#ttlMs = options.ttlMs ?? QUOTA_SLOT_TTL_MS;
    this.#logger = options.logger ?? createStderrLogger();
    this.#timer = setInterval(() => void this.#renew(), Math.floor(this.#ttlMs / 3));
    this.#timer.unref();
  }

  #lock(query: Query, principal: string, what: string): Promise<unknown> {
    return query("SELECT pg_advisory_xact_lock(hashtext($1))", [`agentkit-acp quota ${this.#db.schema} ${principal} ${what}`]);
  }

  async acquireSlot(principal: string, kind: QuotaSlotKind, id: string, limit: number): Promise<QuotaTake> {
    const table = this.#db.table("agentkit_quota_slots");
    const taken = await this.#db.transaction(async (query): Promise<QuotaTake> => {
      await this.#lock(query, principal, kind);
      await query(`DELETE FROM ${table} WHERE principal = $1 AND kind = $2 AND expires_at <= now()`, [principal, kind]);
      const { rows } = await query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE principal = $1 AND kind = $2 AND id <> $3`, [principal, kind, id]);
      const used = Number(rows[0]?.n ?? 0);
      if (used >= limit) return { ok: false, used, retryAfterMs: Math.floor(this.#ttlMs / 3) };
      await query(
        `INSERT INTO ${table} (kind, id, principal, holder, expires_at) VALUES ($1, $2, $3, $4, now() + $5 * interval '1 millisecond')
         ON CONFLICT (kind, id) DO UPDATE SET principal = EXCLUDED.principal, holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at`,
        [kind, id, principal, this.holder, this.#ttlMs],
      );
      return { ok: true };
    });
    if (taken.ok) this.#held++;
    return taken;
  }

  async releaseSlot(principal: string, kind: QuotaSlotKind, id: string): Promise<void> {
    const { rowCount } = await this.#db.query(`DELETE FROM ${this.#db.table("agentkit_quota_slots")} WHERE kind = $1 AND id = $2 AND principal = $3 AND holder = $4`, [kind, id, principal, this.holder], true);
    if ((rowCount ?? 0) > 0) this.#held = Math.max(0, this.#held - 1);
  }

  countPrompt(principal: string, limit: number): Promise<QuotaTake> {
    const table = this.#db.table("agentkit_quota_prompts");
    return this.#db.transaction(async (query): Promise<QuotaTake> => {
      await this.#lock(query, principal, "prompts");
      const window = `$2 * interval '1 millisecond'`;
      await query(`DELETE FROM ${table} WHERE principal = $1 AND at <= now() - ${window}`, [principal, PROMPT_WINDOW_MS]);
      const { rows } = await query<{ n: string; wait: number | null }>(
        `SELECT count(*) AS n, ceil(extract(epoch FROM (min(at) + ${window} - now())) * 1000)::float8 AS wait FROM ${table} WHERE principal = $1`,
        [principal, PROMPT_WINDOW_MS],
      );
      const used = Number(rows[0]?.n ?? 0);
      if (used >= limit) return { ok: false, used, retryAfterMs: Math.max(1, rows[0]?.wait ?? 1) };
      await query(`INSERT INTO ${table} (principal, at) VALUES ($1, now())`, [principal]);
      return { ok: true };
    });
  }

  async tokensToday(principal: string): Promise<number> {
    const { rows } = await this.#db.query<{ tokens: string }>(
      `SELECT tokens FROM ${this.#db.table("agentkit_quota_tokens")} WHERE principal = $1 AND day = (now() AT TIME ZONE 'UTC')::date`,
      [principal],
    );
    return Number(rows[0]?.tokens ?? 0);
  }

  async addTokens(principal: string, tokens: number): Promise<void> {
    const table = this.#db.table("agentkit_quota_tokens");
    await this.#db.query(
      `INSERT INTO ${table} AS t (principal, day, tokens) VALUES ($1, (now() AT TIME ZONE 'UTC')::date, $2)
       ON CONFLICT (principal, day) DO UPDATE SET tokens = t.tokens + EXCLUDED.tokens`,
      [principal, tokens],
      true,
    );
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
  }

  async #renew(): Promise<void> {
    try {
      if (this.#held > 0) {
        await this.#db.query(`UPDATE ${this.#db.table("agentkit_quota_slots")} SET expires_at = now() + $2 * interval '1 millisecond' WHERE holder = $1`, [this.holder, this.#ttlMs], true);
      }
      // Old token counters go once an hour (by whichever instance gets there).
      if (Date.now() - this.#lastPrune > 3_600_000) {
        this.#lastPrune = Date.now();
        await this.#db.query(`DELETE FROM ${this.#db.table("agentkit_quota_tokens")} WHERE day < (now() AT TIME ZONE 'UTC')::date - $1::int`, [TOKEN_DAYS_KEPT], true);
      }
    } catch (error) {
      this.#logger.warn("quota slots not renewed", { error: errorMessage(error) });
    }
  }
}
