import pg from "pg";
import type { Logger } from "../../core/index.js";
import { createStderrLogger, errorMessage } from "../../core/index.js";
import { migrate } from "./migrations.js";
import { PostgresStoreError, parsePostgresUrl, redact } from "./url.js";

/** Options of `PostgresDatabase.open` (and `openPostgresStore`): the URL, schema, pool size and time bounds. */
export interface PostgresDatabaseOptions {
  /** `postgres://user:password@host:port/database` (or `postgresql://`); libpq query parameters such as `sslmode` work. */
  url: string;
  /** Schema holding the tables (created when missing); default `public`. Lower-case letters, digits and `_`. */
  schema?: string;
  /** Most connections this instance opens (default 10). */
  poolSize?: number;
  /** Bound on connecting (default 5 s). */
  connectTimeoutMs?: number;
  /** Bound on each query, measured by the client (default 30 s). */
  queryTimeoutMs?: number;
  logger?: Logger;
}

/** Counts of what this instance sent, for benchmarks (writes per turn) and tests. */
export interface PostgresStoreStats {
  /** Round trips that changed sessions, items or approvals (each one commit). */
  writes: number;
  /** Transcript items written. */
  items: number;
  /** Lease round trips (acquire, renew, release): per session open/close plus one renewal per period for the whole instance. */
  leaseWrites: number;
  /** Every round trip, reads included. */
  queries: number;
}

/** What a query gives back (our own shape, so the public types do not depend on the driver's). */
export interface QueryResult<R> {
  rows: R[];
  rowCount: number | null;
}
/** A result row, column name to value, as `pg` returns it. */
export type Row = Record<string, unknown>;
/** A parameterised statement run on the pool or inside a transaction (`$1`, `$2` … bound to `values`). */
export type Query = <R extends Row = Row>(text: string, values?: unknown[]) => Promise<QueryResult<R>>;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * A connection pool plus the schema: `open` connects (bounded), creates and migrates the tables
 * under an advisory lock (so instances starting together migrate once), and fails with a
 * `PostgresStoreError` that says what to fix. The session store, approval store and leases of
 * one instance share it.
 */
export class PostgresDatabase {
  readonly schema: string;
  readonly url: string;
  readonly #pool: pg.Pool;
  readonly #logger: Logger;
  readonly #stats: PostgresStoreStats = { writes: 0, items: 0, leaseWrites: 0, queries: 0 };
  #closed = false;

  private constructor(options: PostgresDatabaseOptions, logger: Logger) {
    this.schema = options.schema ?? "public";
    this.url = options.url;
    this.#logger = logger;
    this.#pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
      query_timeout: options.queryTimeoutMs ?? 30_000,
      idleTimeoutMillis: 30_000,
      keepAlive: true,
      application_name: "agentkit-acp",
    });
    // An idle connection dropped by the server (restart, network) must not crash the process.
    this.#pool.on("error", (error) => this.#logger.warn("PostgreSQL connection lost", { error: errorMessage(error) }));
  }

  static async open(options: PostgresDatabaseOptions): Promise<PostgresDatabase> {
    parsePostgresUrl(options.url);
    if (options.schema !== undefined && !SCHEMA_NAME.test(options.schema)) {
      throw new PostgresStoreError("invalid_store_url", `schema name ${JSON.stringify(options.schema)} must be lower-case letters, digits and _`);
    }
    const db = new PostgresDatabase(options, options.logger ?? createStderrLogger());
    try {
      const client = await db.#pool.connect().catch((error: unknown) => {
        throw unavailable(options.url, error);
      });
      try {
        await migrate(client, db.schema).catch((error: unknown) => {
          throw error instanceof PostgresStoreError ? error : unavailable(options.url, error);
        });
      } finally {
        client.release();
      }
    } catch (error) {
      await db.close();
      throw error;
    }
    return db;
  }

  /** A table name qualified with the schema. */
  table(name: string): string {
    return `"${this.schema}".${name}`;
  }

  /**
   * One statement on any pooled connection; `write` counts it in `stats()`; `timeoutMs` overrides
   * the query bound; `name` makes it a prepared statement (parsed and planned once per connection:
   * for the statements every turn runs). A name stands for one text.
   */
  async query<R extends Row = Row>(text: string, values: unknown[] = [], write: boolean | "lease" = false, timeoutMs?: number, name?: string): Promise<QueryResult<R>> {
    this.#stats.queries++;
    const config: pg.QueryConfig & { query_timeout?: number } = { text, values };
    if (timeoutMs !== undefined) config.query_timeout = timeoutMs;
    if (name !== undefined) config.name = name;
    const result = await this.#pool.query<R>(config);
    if (write === "lease") this.#stats.leaseWrites++;
    else if (write) this.#stats.writes++;
    return result;
  }

  /** Runs `work` in one transaction (one commit) on one connection. */
  async transaction<T>(work: (query: Query) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    let broken = false;
    try {
      await client.query("BEGIN");
      const result = await work(<R extends Row = Row>(text: string, values: unknown[] = []) => {
        this.#stats.queries++;
        return client.query<R>(text, values);
      });
      await client.query("COMMIT");
      this.#stats.writes++;
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {
        broken = true;
      });
      throw error;
    } finally {
      client.release(broken);
    }
  }

  countItems(n: number): void {
    this.#stats.items += n;
  }

  stats(): PostgresStoreStats {
    return { ...this.#stats };
  }

  /** True when the database answers within `timeoutMs` (for `/readyz`); never throws. */
  async ready(timeoutMs = 2_000): Promise<boolean> {
    if (this.#closed) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
      timer.unref();
    });
    const probe = this.#pool.query("SELECT 1").then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([probe, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool.end().catch((error: unknown) => this.#logger.warn("closing the PostgreSQL pool failed", { error: errorMessage(error) }));
  }
}

/** A connection failure as an error that says what to fix. */
export function unavailable(url: string, error: unknown): PostgresStoreError {
  const where = describeTarget(url);
  const code = (error as { code?: unknown }).code;
  const reason = errorMessage(error);
  let fix: string;
  switch (code) {
    case "ECONNREFUSED":
      fix = `nothing accepts connections at ${where}: start PostgreSQL there or fix the host/port in the store URL`;
      break;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      fix = `the host of ${where} does not resolve: fix the host in the store URL`;
      break;
    case "28P01":
    case "28000":
      fix = `PostgreSQL at ${where} refused the login (${reason}): fix the user/password in the store URL`;
      break;
    case "3D000":
      fix = `${reason} at ${where}: create it (createdb) or fix the database name in the store URL`;
      break;
    case "42501":
      fix = `${reason}: grant the store's user CREATE on the database/schema, or run once as its owner`;
      break;
    default:
      fix = /timeout/i.test(reason) ? `no answer from ${where} in time: check the host/port and that PostgreSQL is up` : `cannot use PostgreSQL at ${where}: ${reason}`;
  }
  return new PostgresStoreError("store_unavailable", fix, { cause: error });
}

function describeTarget(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname || parsed.searchParams.get("host") || "localhost"}:${parsed.port || "5432"}${parsed.pathname || ""}`;
  } catch {
    return redact(url);
  }
}
