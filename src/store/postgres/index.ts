import type { Logger } from "../../core/index.js";
import { createStderrLogger } from "../../core/index.js";
import type { PostgresDatabaseOptions, PostgresStoreStats } from "./database.js";
import { PostgresDatabase } from "./database.js";
import { PostgresApprovalMemoryStore } from "./approval-store.js";
import type { PostgresSessionLeasesOptions } from "./leases.js";
import { PostgresSessionLeases } from "./leases.js";
import { PostgresSessionStore } from "./session-store.js";
import { PostgresQuotaStore } from "./quotas.js";
import { PostgresAuditLog } from "./audit.js";

export { PostgresDatabase } from "./database.js";
export type { PostgresDatabaseOptions, PostgresStoreStats, Query, QueryResult, Row } from "./database.js";
export { PostgresStoreError, parsePostgresUrl, redact as redactStoreUrl } from "./url.js";
export type { PostgresStoreErrorCode } from "./url.js";
export { PostgresSessionStore } from "./session-store.js";
export type { PostgresSessionStoreOptions } from "./session-store.js";
export { PostgresApprovalMemoryStore } from "./approval-store.js";
export { PostgresSessionLeases } from "./leases.js";
export type { PostgresSessionLeasesOptions } from "./leases.js";
export { SCHEMA_VERSION } from "./migrations.js";
export { PostgresQuotaStore } from "./quotas.js";
export type { PostgresQuotaStoreOptions } from "./quotas.js";
export { PostgresAuditLog } from "./audit.js";

/** Options of `openPostgresStore`: the database's, plus the lease settings and the clock of session times. */
export interface OpenPostgresStoreOptions extends PostgresDatabaseOptions {
  leases?: Omit<PostgresSessionLeasesOptions, "logger">;
  clock?: () => Date;
}

/** Everything an instance keeps in PostgreSQL, over one pool. */
export interface PostgresStore {
  db: PostgresDatabase;
  sessions: PostgresSessionStore;
  approvals: PostgresApprovalMemoryStore;
  leases: PostgresSessionLeases;
  /** Per-principal quota counters (slots held by this instance under the leases' holder name). */
  quotas: PostgresQuotaStore;
  audit: PostgresAuditLog;
  /** The database answers (for `/readyz`); never throws. */
  ready(): Promise<boolean>;
  stats(): PostgresStoreStats;
  /** Releases the leases, then closes the pool. */
  close(): Promise<void>;
}

/**
 * Connects (bounded), migrates the schema, and returns the stores. Rejects with a
 * `PostgresStoreError` saying what to fix (bad URL, unreachable server, login refused, missing
 * database, schema newer than this build).
 */
export async function openPostgresStore(options: OpenPostgresStoreOptions): Promise<PostgresStore> {
  const logger: Logger = options.logger ?? createStderrLogger();
  const db = await PostgresDatabase.open({ ...options, logger });
  const leases = new PostgresSessionLeases(db, { ...options.leases, logger });
  const quotas = new PostgresQuotaStore(db, { holder: leases.holder, logger });
  return {
    db,
    // Writes to a session this instance leased are fenced by the lease (see PostgresSessionStore).
    sessions: new PostgresSessionStore(db, { fence: (id) => leases.fenceToken(id), ...(options.clock ? { clock: options.clock } : {}) }),
    approvals: new PostgresApprovalMemoryStore(db),
    leases,
    quotas,
    audit: new PostgresAuditLog(db),
    ready: () => db.ready(),
    stats: () => db.stats(),
    close: async () => {
      await quotas.close();
      await leases.close();
      await db.close();
    },
  };
}
