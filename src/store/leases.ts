import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { SessionId } from "../core/index.js";

/**
 * Session leases: a session runs on one instance at a time. The runtime takes a session's lease
 * when it opens the session (new, load, resume) and gives it back when it closes it; an
 * instance that cannot get it answers that the session is active elsewhere. One interface, two
 * implementations: `InProcessSessionLeases` (file and memory stores: one process owns its
 * sessions) and `PostgresSessionLeases` (instances sharing a database).
 */
export interface SessionLease {
  readonly sessionId: SessionId;
  /** False once released or lost. */
  readonly held: boolean;
  /**
   * Called once if the lease is lost without `release` (it could not be renewed in time, e.g.
   * the database was away longer than the lease lasts): the session must stop running here.
   */
  onLost(listener: (reason: string) => void): void;
  /** Gives the lease back (idempotent; never throws: an unreleased lease simply expires). */
  release(): Promise<void>;
}

/**
 * How long a shared store's session lease lasts without renewal unless configured (`serve
 * --lease-ttl`): the bound on how soon a dead instance's sessions are free again.
 */
export const DEFAULT_LEASE_TTL_MS = 10_000;

/** Who holds a session's lease. */
export interface LeaseHolder {
  holder: string;
  /** When the lease runs out unless renewed (ISO time), where leases expire. */
  expiresAt?: string;
}

/** What `SessionLeases.acquire` returns: the lease, or who holds it (and until when, where leases expire). */
export type LeaseAttempt = { acquired: true; lease: SessionLease } | ({ acquired: false } & LeaseHolder);

/**
 * Who runs which session: a session is open on one instance at a time. Implemented in process
 * (`InProcessSessionLeases`) and over PostgreSQL (`PostgresSessionLeases`) for instances sharing a store.
 */
export interface SessionLeases {
  /** This instance's name as a lease holder. */
  readonly holder: string;
  /** Takes the lease unless another instance holds it. This instance's own earlier lease on the session is replaced. */
  acquire(sessionId: SessionId): Promise<LeaseAttempt>;
  /** The current holder, or undefined when the session is free. */
  holderOf(sessionId: SessionId): Promise<LeaseHolder | undefined>;
  /** Releases every lease this instance holds and stops renewing (shutdown). */
  close(): Promise<void>;
}

/** A readable, unique holder name: host, pid and a random suffix. */
export function newLeaseHolderName(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

/** Shared state of one lease: listeners fire once on loss; release and loss both end it. */
export class LeaseState implements SessionLease {
  readonly sessionId: SessionId;
  #held = true;
  readonly #listeners: Array<(reason: string) => void> = [];
  readonly #release: () => Promise<void>;
  readonly #valid: () => boolean;

  /** `valid` says whether the lease still counts right now (e.g. before its local deadline). */
  constructor(sessionId: SessionId, release: () => Promise<void>, valid: () => boolean = () => true) {
    this.sessionId = sessionId;
    this.#release = release;
    this.#valid = valid;
  }

  get held(): boolean {
    return this.#held && this.#valid();
  }

  onLost(listener: (reason: string) => void): void {
    this.#listeners.push(listener);
  }

  async release(): Promise<void> {
    if (!this.#held) return;
    // Released after its deadline: the row may already belong to someone else, but the token guards it.
    this.#held = false;
    await this.#release();
  }

  /** Marks the lease lost and tells the listeners (once). */
  lose(reason: string): void {
    if (!this.#held) return;
    this.#held = false;
    for (const listener of this.#listeners.splice(0)) listener(reason);
  }

  /** Ends the lease without a release call (it was replaced or the leases closed). */
  end(): void {
    this.#held = false;
  }
}

/** One table per process, so several runtimes in one process exclude each other too. */
const processLeases = new Map<SessionId, { holder: string; lease: LeaseState }>();

/**
 * Leases within one process (the file and memory stores have one owner process): never expire,
 * freed by release or `close`. Two instances in one process exclude each other.
 */
export class InProcessSessionLeases implements SessionLeases {
  #holder: string | undefined;

  constructor(holder?: string) {
    this.#holder = holder;
  }

  /** Named on first use: the first random UUID of a process costs ~2 ms, not worth paying before `initialize` is answered. */
  get holder(): string {
    return (this.#holder ??= newLeaseHolderName());
  }

  async acquire(sessionId: SessionId): Promise<LeaseAttempt> {
    const current = processLeases.get(sessionId);
    if (current && current.holder !== this.holder && current.lease.held) return { acquired: false, holder: current.holder };
    current?.lease.end();
    const lease: LeaseState = new LeaseState(sessionId, async () => {
      if (processLeases.get(sessionId)?.lease === lease) processLeases.delete(sessionId);
    });
    processLeases.set(sessionId, { holder: this.holder, lease });
    return { acquired: true, lease };
  }

  async holderOf(sessionId: SessionId): Promise<LeaseHolder | undefined> {
    const current = processLeases.get(sessionId);
    return current && current.lease.held ? { holder: current.holder } : undefined;
  }

  async close(): Promise<void> {
    for (const [id, entry] of processLeases) {
      if (entry.holder !== this.holder) continue;
      entry.lease.end();
      processLeases.delete(id);
    }
  }
}
