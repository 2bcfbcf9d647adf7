import { randomUUID } from "node:crypto";
import type { Logger, SessionId } from "../../core/index.js";
import { createStderrLogger, errorMessage } from "../../core/index.js";
import type { LeaseAttempt, LeaseHolder, SessionLeases } from "../leases.js";
import { DEFAULT_LEASE_TTL_MS, LeaseState, newLeaseHolderName } from "../leases.js";
import type { PostgresDatabase } from "./database.js";
import { sessionKey } from "./session-store.js";

/**
 * Options of `PostgresSessionLeases`: this instance's holder name, the lease time to live and renewal period, and who
 * is told the lease deadlines.
 */
export interface PostgresSessionLeasesOptions {
  /** This instance's name (default host:pid:random). */
  holder?: string;
  /** How long a lease lasts without renewal (default `DEFAULT_LEASE_TTL_MS`, 10 s): the bound on reclaiming a dead instance's sessions. */
  ttlMs?: number;
  /** Renewal period (default ttl / 3). */
  renewMs?: number;
  /**
   * Told, after each acquisition, renewal or loss, how long (ms from now) until the earliest
   * held lease stops counting locally; undefined when none is held. `serve` hands it to the
   * orphan watchdog, which kills our tools when that passes without a newer one.
   */
  onDeadline?: (msFromNow: number | undefined) => void;
  logger?: Logger;
}

interface Held {
  lease: LeaseState;
  token: string;
  /** Local monotonic time (ms) after which this instance no longer counts on the lease. */
  validUntil: number;
}

/**
 * Leases as rows with an expiry on the database clock, renewed by a heartbeat (one statement per
 * period for all of the instance's sessions). Why rows rather than advisory locks: an advisory
 * lock lives as long as its connection, so a holder cut off by the network keeps it until TCP
 * gives up (minutes to hours), and a dropped-and-reconnected connection loses it silently while
 * the session keeps running. A row expires on time whatever happens to the holder, and the
 * holder knows locally when to stop: it counts on a lease only until `ttl - margin` after the
 * start of its last successful renewal, so by the time the row expires (and another instance
 * may take it) the old holder has already given the session up. Each acquisition has its own
 * token, so a late release never deletes a newer lease.
 */
export class PostgresSessionLeases implements SessionLeases {
  readonly holder: string;
  readonly ttlMs: number;
  readonly #db: PostgresDatabase;
  readonly #table: string;
  readonly #logger: Logger;
  readonly #held = new Map<SessionId, Held>();
  readonly #timer: NodeJS.Timeout;
  readonly #margin: number;
  readonly #renewMs: number;
  readonly #onDeadline: ((msFromNow: number | undefined) => void) | undefined;
  #lastRenewal = performance.now();
  #renewing = false;
  #closed = false;
  /**
   * The token of this instance's latest lease per session, kept after a loss (until release or
   * a new acquisition): the session store writes only while the database still shows it.
   */
  readonly #fences = new Map<SessionId, string>();
  /** Releases still on their way to the database; `close` waits for them. */
  readonly #releasing = new Set<Promise<void>>();

  constructor(db: PostgresDatabase, options: PostgresSessionLeasesOptions = {}) {
    this.#db = db;
    this.#table = db.table("agentkit_leases");
    this.holder = options.holder ?? newLeaseHolderName();
    this.ttlMs = options.ttlMs ?? DEFAULT_LEASE_TTL_MS;
    this.#margin = Math.min(1_000, this.ttlMs / 5);
    this.#logger = options.logger ?? createStderrLogger();
    this.#renewMs = options.renewMs ?? Math.floor(this.ttlMs / 3);
    this.#onDeadline = options.onDeadline;
    // Deadlines are checked often (no database work); renewals go out every renewMs.
    this.#timer = setInterval(() => this.#tick(), Math.min(250, this.#renewMs));
    this.#timer.unref();
  }

  acquire(sessionId: SessionId): Promise<LeaseAttempt> {
    return this.#acquire(sessionId, 3);
  }

  async #acquire(sessionId: SessionId, attempts: number): Promise<LeaseAttempt> {
    const token = randomUUID();
    const started = performance.now();
    const { rows } = await this.#db.query<{ token: string }>(
      `INSERT INTO ${this.#table} AS l (session_id, holder, token, acquired_at, expires_at)
       VALUES ($1, $2, $3, now(), now() + $4 * interval '1 millisecond')
       ON CONFLICT (session_id) DO UPDATE
         SET holder = EXCLUDED.holder, token = EXCLUDED.token, acquired_at = now(), expires_at = EXCLUDED.expires_at
         WHERE l.expires_at <= now() OR l.holder = EXCLUDED.holder
       RETURNING token`,
      [sessionKey(sessionId), this.holder, token, this.ttlMs],
      "lease",
    );
    if (rows.length === 0) {
      const holder = await this.holderOf(sessionId);
      // Freed between the two statements: try again rather than report a holder that is gone.
      if (holder || attempts <= 1) return { acquired: false, ...(holder ?? { holder: "unknown" }) };
      return this.#acquire(sessionId, attempts - 1);
    }
    this.#held.get(sessionId)?.lease.end();
    const deadline = { validUntil: started + this.ttlMs - this.#margin };
    const lease: LeaseState = new LeaseState(
      sessionId,
      () => this.#release(sessionId, lease, token),
      () => performance.now() < deadline.validUntil,
    );
    // The same object as `deadline`: renewals move the deadline the lease checks.
    this.#held.set(sessionId, Object.assign(deadline, { lease, token }));
    this.#fences.set(sessionId, token);
    this.#reportDeadline();
    return { acquired: true, lease };
  }

  /**
   * The lease token writes to this session must be fenced with, if this instance has taken the
   * session's lease (undefined: it has not, and writes are not fenced).
   */
  fenceToken(sessionId: SessionId): string | undefined {
    return this.#fences.get(sessionId);
  }

  async holderOf(sessionId: SessionId): Promise<LeaseHolder | undefined> {
    const { rows } = await this.#db.query<{ holder: string; expires_at: Date }>(
      `SELECT holder, expires_at FROM ${this.#table} WHERE session_id = $1 AND expires_at > now()`,
      [sessionKey(sessionId)],
    );
    const row = rows[0];
    return row ? { holder: row.holder, expiresAt: row.expires_at.toISOString() } : undefined;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    await Promise.all(this.#releasing);
    const tokens = [...this.#held.values()].map((h) => h.token);
    for (const held of this.#held.values()) held.lease.end();
    this.#held.clear();
    this.#fences.clear();
    this.#reportDeadline();
    if (tokens.length === 0) return;
    await this.#db.query(`DELETE FROM ${this.#table} WHERE token = ANY($1::text[])`, [tokens], "lease").catch((error: unknown) => {
      this.#logger.warn("could not release session leases (they expire on their own)", { error: errorMessage(error) });
    });
  }

  async #release(sessionId: SessionId, lease: LeaseState, token: string): Promise<void> {
    if (this.#held.get(sessionId)?.lease === lease) this.#held.delete(sessionId);
    if (this.#fences.get(sessionId) === token) this.#fences.delete(sessionId);
    this.#reportDeadline();
    const deleting = this.#db
      .query(`DELETE FROM ${this.#table} WHERE session_id = $1 AND token = $2`, [sessionKey(sessionId), token], "lease")
      .then(
        () => undefined,
        (error: unknown) => this.#logger.warn("could not release a session lease (it expires on its own)", { sessionId, error: errorMessage(error) }),
      );
    this.#releasing.add(deleting);
    await deleting;
    this.#releasing.delete(deleting);
  }

  /** Drops leases past their local deadline, then renews the rest (one renewal in flight at a time). */
  #tick(): void {
    const now = performance.now();
    for (const [id, held] of this.#held) {
      if (now < held.validUntil) continue;
      this.#held.delete(id);
      held.lease.lose(`the lease on session ${id} could not be renewed in time`);
      this.#reportDeadline();
    }
    if (this.#renewing || this.#held.size === 0 || this.#closed || now - this.#lastRenewal < this.#renewMs) return;
    this.#renewing = true;
    this.#lastRenewal = now;
    void this.#renew().finally(() => {
      this.#renewing = false;
    });
  }

  async #renew(): Promise<void> {
    const batch = [...this.#held.entries()];
    const started = performance.now();
    let renewed: Set<string>;
    try {
      const { rows } = await this.#db.query<{ token: string }>(
        `UPDATE ${this.#table} l SET expires_at = now() + $2 * interval '1 millisecond'
           WHERE l.token = ANY($1::text[]) AND l.expires_at > now()
           RETURNING l.token`,
        [batch.map(([, h]) => h.token), this.ttlMs],
        "lease",
        this.#renewMs, // a stuck renewal gives way to the next one instead of outliving the leases
      );
      renewed = new Set(rows.map((r) => r.token));
    } catch (error) {
      this.#logger.warn("renewing session leases failed; retrying", { error: errorMessage(error) });
      return;
    }
    for (const [id, held] of batch) {
      if (this.#held.get(id) !== held) continue; // released or replaced meanwhile
      if (renewed.has(held.token)) {
        held.validUntil = started + this.ttlMs - this.#margin;
      } else {
        this.#held.delete(id);
        held.lease.lose(`the lease on session ${id} expired or was taken over`);
      }
    }
    this.#reportDeadline();
  }

  /** The earliest local deadline of the leases held, to whoever fences side effects with it. */
  #reportDeadline(): void {
    if (this.#onDeadline === undefined) return;
    let earliest = Infinity;
    for (const held of this.#held.values()) earliest = Math.min(earliest, held.validUntil);
    this.#onDeadline(earliest === Infinity ? undefined : Math.max(1, earliest - performance.now()));
  }
}
