import type { Logger } from "../core/index.js";
import type { ApprovalMemoryStore } from "./approval-store.js";
import type { AuditLog } from "./audit.js";
import type { SessionLeases } from "./leases.js";
import type { QuotaStore } from "./quotas.js";
import type { SessionStore } from "./types.js";

// What a shared store backend is (the registry of them: backends.ts).

/** What a shared store holds for `serve`: sessions, remembered approvals and session leases. */
export interface OpenedStore {
  sessions: SessionStore;
  approvals: ApprovalMemoryStore;
  leases: SessionLeases;
  /** Per-principal quota counters shared by the instances (slots held under `leases.holder`). */
  quotas: QuotaStore;
  /** The audit trail. */
  audit: AuditLog;
  /** Where things are kept, for the start-up log line (no password). */
  description: string;
  /** The store answers (for `/readyz`); never throws. */
  ready(): Promise<boolean>;
  /** Releases the leases, then the connections. */
  close(): Promise<void>;
}

/** Options of `openStore` and `StoreBackend.open`: the URL, the logger, and the lease settings of the instance. */
export interface OpenStoreOptions {
  url: string;
  logger: Logger;
  /** How long an instance's hold on an open session lasts unless renewed (the backend's default otherwise). */
  leaseTtlMs?: number | undefined;
  /** Told each lease deadline (ms from now; undefined = none): the orphan watchdog fences this instance's tools at it. */
  onLeaseDeadline?: ((msFromNow: number | undefined) => void) | undefined;
}

/**
 * A shared store kind behind `openStore`, chosen by URL scheme (`storeBackends`). It checks URLs without a driver and
 * loads its driver only in `open`.
 */
export interface StoreBackend {
  /** For messages: "PostgreSQL". */
  name: string;
  /** URL schemes without `:`, e.g. `postgres`, `postgresql`. */
  schemes: readonly string[];
  /** A URL shape for messages: `postgres://USER:PASSWORD@HOST:PORT/DATABASE`. */
  example: string;
  /** Throws an error saying what to fix when the URL cannot work; loads no driver. */
  check(url: string): void;
  /** Connects (bounded), migrates, and returns the stores; rejects saying what to fix. */
  open(options: OpenStoreOptions): Promise<OpenedStore>;
}
