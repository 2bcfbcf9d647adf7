import { AgentKitError, type Logger } from "../core/index.js";
import type { ApprovalMemoryStore } from "./approval-store.js";
import type { AuditLog } from "./audit.js";
import type { SessionLeases } from "./leases.js";
import type { QuotaStore } from "./quotas.js";
import { postgresBackend } from "./postgres/backend.js";
import { redactStoreUrl } from "./store-url.js";
import type { SessionStore } from "./types.js";

export { redactStoreUrl } from "./store-url.js";

// Shared stores are chosen by the URL's scheme (`--store URL`, AGENTKIT_STORE_URL): the CLI and
// `serve` name no backend. A backend's driver loads only in `open` (start-up without a store
// URL never pays for it). Adding a backend: one `StoreBackend` and one entry in `storeBackends`.

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

export interface OpenStoreOptions {
  url: string;
  logger: Logger;
  /** How long an instance's hold on an open session lasts unless renewed (the backend's default otherwise). */
  leaseTtlMs?: number | undefined;
  /** Told each lease deadline (ms from now; undefined = none): the orphan watchdog fences this instance's tools at it. */
  onLeaseDeadline?: ((msFromNow: number | undefined) => void) | undefined;
}

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

/** The registered backends. */
export const storeBackends: readonly StoreBackend[] = [postgresBackend];

/** The backend for a store URL; throws an `AgentKitError` (`invalid_store_url`) saying what a good URL looks like. */
export function storeBackendFor(url: string): StoreBackend {
  const use = storeBackends.map((b) => b.example).join(" or ");
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new AgentKitError("invalid_store_url", `store URL ${JSON.stringify(redactStoreUrl(url))} is not a URL; use ${use}`);
  }
  const backend = storeBackends.find((b) => b.schemes.includes(protocol.slice(0, -1)));
  if (!backend) {
    const schemes = storeBackends.flatMap((b) => b.schemes.map((s) => `${s}://`)).join(" or ");
    throw new AgentKitError("invalid_store_url", `store URL must start with ${schemes}, got ${JSON.stringify(protocol)}; use ${use}`);
  }
  return backend;
}

/** Checks a store URL without connecting or loading a driver (for command-line checks). */
export function checkStoreUrl(url: string): void {
  storeBackendFor(url).check(url);
}

/** Opens the store a URL names, through its backend. */
export function openStore(options: OpenStoreOptions): Promise<OpenedStore> {
  return storeBackendFor(options.url).open(options);
}
