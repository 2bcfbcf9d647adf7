import { access, constants, mkdir } from "node:fs/promises";
import { InMemoryApprovalMemory, NoopApprovalMemory, type AcpApprovalMemory } from "../acp/agent/approval-memory.js";
import { AutoApproveResolver, AutoDenyResolver, ClientPermissionResolver, type AcpApprovalResolver } from "../acp/agent/approval.js";
import { DurableApprovalMemory } from "../acp/agent/durable-approval-memory.js";
import type { Logger } from "../core/index.js";
import { fenceGroupsWithin } from "../core/index.js";
import type { AuditLog, LeaseAttempt, QuotaStore, SessionLeases, SessionStore } from "../store/index.js";
import {
  FileApprovalMemoryStore,
  FileAuditLog,
  FileQuotaStore,
  InMemoryAuditLog,
  InMemoryQuotaStore,
  InProcessSessionLeases,
  InMemorySessionStore,
  JsonlSessionStore,
  defaultStateDir,
  newLeaseHolderName,
  openStore,
  retentionAudit,
  startRetention,
  storeBackendFor,
} from "../store/index.js";
import type { PermissionMode } from "../tools/index.js";

import type { ApproveMode } from "./defaults.js";

export type { ApproveMode } from "./defaults.js";

/** The persistence choices of `serve` (`--state-dir`, `--no-persist`, …). */
export interface ServeStateOptions {
  /** --state-dir; else AGENTKIT_STATE_DIR / XDG_STATE_HOME / ~/.local/state. */
  stateDir: string | undefined;
  /** --no-persist: sessions and approvals live in memory only (nothing is written). */
  persist: boolean;
  /**
   * With `persist: false`: a session that no connection has open any more is forgotten (set by
   * `serve --listen`, whose process may serve for months: the memory store must not grow with
   * every session it ever had).
   */
  forgetClosed?: boolean | undefined;
  /** --no-approval-memory: "always" answers are not offered and nothing is remembered. */
  approvalMemory: boolean;
  /** --clear-approval-memory: forget every remembered answer at start-up. */
  clearApprovalMemory: boolean;
  /** --store / AGENTKIT_STORE_URL: a shared store's URL (e.g. postgres://); sessions, approvals and leases go there instead of files. */
  storeUrl?: string | undefined;
  /** --lease-ttl: the shared store's lease time to live (default `DEFAULT_LEASE_TTL_MS` of agentkit-acp/store). */
  leaseTtlMs?: number | undefined;
  /**
   * --retain: sessions not updated for this long are deleted, by a sweep at start-up and then
   * every `retainIntervalMs` (default one hour; AGENTKIT_RETAIN_INTERVAL_MS), at most 1000 per
   * run. Sessions open on any instance (leased) are kept; archived ones age like the others.
   */
  retainMs?: number | undefined;
  retainIntervalMs?: number | undefined;
}

/**
 * What the reference agent keeps, opened by `serveState` from its options (memory, files or a shared store):
 * sessions, approvals, leases, quotas and the audit trail.
 */
export interface ServeState {
  /** Where files go (undefined with --no-persist). */
  stateDir: string | undefined;
  sessions: SessionStore;
  approvalMemory: AcpApprovalMemory;
  /** Whether the editor is offered "always allow / always reject". */
  offerAlways: boolean;
  /** Shared session leases (a --store backend); undefined → the runtime's in-process leases. */
  leases?: SessionLeases;
  /** Per-principal quota counters, shared with the other instances on the same store. */
  quotas: QuotaStore;
  /** The audit trail's store. */
  audit: AuditLog;
  /** This instance's name in audit records (the lease holder name on PostgreSQL). */
  instance: string;
  /** Where sessions are kept, for the start-up log line. */
  description: string;
  /** The store can be used right now (for `/readyz`); never throws. */
  ready(): Promise<boolean>;
  /** Releases leases and connections (before exit). */
  close(): Promise<void>;
}

/** Builds the session store and approval memory (and starts the retention policy); clears remembered answers first when asked. */
export async function serveState(options: ServeStateOptions, env: NodeJS.ProcessEnv, logger: Logger): Promise<ServeState> {
  const state = await buildState(options, env, logger);
  if (options.retainMs === undefined) return state;
  // The runtime's own leases (file and memory stores) live in this process's table: a lease
  // holder of our own sees every session open here as held by another.
  const sweeper = startRetention(state.sessions, {
    maxAgeMs: options.retainMs,
    ...(options.retainIntervalMs !== undefined ? { intervalMs: options.retainIntervalMs } : {}),
    leases: state.leases ?? new InProcessSessionLeases(),
    logger,
    onDeleted: (session) => state.audit.append([retentionAudit(session, state.instance, "serve --retain")]),
  });
  const close = state.close;
  return {
    ...state,
    description: `${state.description}; sessions not updated for ${formatAge(options.retainMs)} are deleted (--retain)`,
    close: async () => {
      await sweeper.stop();
      await close();
    },
  };
}

function formatAge(ms: number): string {
  const days = ms / 86_400_000;
  return days >= 1 && Number.isInteger(days) ? `${days} day${days === 1 ? "" : "s"}` : `${Math.round(ms / 60_000)} minutes`;
}

async function buildState(options: ServeStateOptions, env: NodeJS.ProcessEnv, logger: Logger): Promise<ServeState> {
  if (!options.persist) {
    if (options.clearApprovalMemory) logger.warn("--clear-approval-memory has nothing to clear with --no-persist");
    const sessions = new InMemorySessionStore();
    return {
      stateDir: undefined,
      sessions,
      ...(options.forgetClosed ? { leases: forgettingLeases(sessions) } : {}),
      approvalMemory: options.approvalMemory ? new InMemoryApprovalMemory() : new NoopApprovalMemory(),
      offerAlways: options.approvalMemory,
      quotas: new InMemoryQuotaStore(),
      audit: new InMemoryAuditLog(),
      instance: newLeaseHolderName(),
      description: options.forgetClosed ? "sessions are kept in memory only while a connection has them open (--no-persist)" : "sessions are kept in memory only (--no-persist)",
      ready: async () => true,
      close: async () => {},
    };
  }
  if (options.storeUrl !== undefined) return sharedStoreState(options, options.storeUrl, logger);
  const stateDir = options.stateDir ?? defaultStateDir(env);
  // Fail at start-up, not at the first session/new, when the directory cannot be made.
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const approvals = new FileApprovalMemoryStore({ stateDir, logger });
  if (options.clearApprovalMemory) {
    await approvals.clear();
    logger.info(`cleared the remembered approvals in ${approvals.dir}`);
  }
  const instance = newLeaseHolderName();
  const quotas = new FileQuotaStore({ stateDir, holder: instance, logger });
  return {
    stateDir,
    sessions: new JsonlSessionStore({ stateDir, logger }),
    quotas,
    audit: new FileAuditLog(stateDir),
    instance,
    approvalMemory: options.approvalMemory ? new DurableApprovalMemory(approvals) : new NoopApprovalMemory(),
    offerAlways: options.approvalMemory,
    description: `sessions and approvals are kept in ${stateDir}`,
    ready: () =>
      access(stateDir, constants.W_OK).then(
        () => true,
        () => false,
      ),
    close: () => quotas.close(),
  };
}

/**
 * A shared store named by its URL (the store registry picks the backend by scheme; its driver
 * loads only here). Rejects with an error saying what to fix when the store cannot be used.
 */
async function sharedStoreState(options: ServeStateOptions, url: string, logger: Logger): Promise<ServeState> {
  // The orphan watchdog kills our tools when a lease deadline passes unrenewed (a no-op unless the CLI enabled it).
  const store = await openStore({ url, logger, onLeaseDeadline: fenceGroupsWithin, leaseTtlMs: options.leaseTtlMs });
  if (options.clearApprovalMemory) {
    await store.approvals.clear();
    logger.info(`cleared the remembered approvals in the ${storeBackendFor(url).name} store`);
  }
  return {
    stateDir: undefined,
    sessions: store.sessions,
    leases: store.leases,
    quotas: store.quotas,
    audit: store.audit,
    instance: store.leases.holder,
    approvalMemory: options.approvalMemory ? new DurableApprovalMemory(store.approvals) : new NoopApprovalMemory(),
    offerAlways: options.approvalMemory,
    description: store.description,
    ready: () => store.ready(),
    close: () => store.close(),
  };
}

/**
 * `--approve` decides who answers what the session mode asks about: the editor (ask,
 * auto-reads), nobody (auto-all approves, deny refuses).
 */
export function approvalResolverFor(approve: ApproveMode, offerAlways: boolean): AcpApprovalResolver {
  if (approve === "auto-all") return new AutoApproveResolver();
  if (approve === "deny") return new AutoDenyResolver();
  return new ClientPermissionResolver({ offerAlways });
}

/** The mode sessions start in: --mode, else what --approve implies. */
export function initialModeFor(approve: ApproveMode, mode: PermissionMode | undefined): PermissionMode {
  if (mode !== undefined) return mode;
  if (approve === "auto-all") return "auto-edit";
  if (approve === "deny") return "read-only";
  return "ask";
}

/**
 * In-process leases that forget a session when its lease is given back: the runtime holds a
 * session's lease exactly while a connection has it open (a second connection opening it takes
 * the lease over, and only the last one's release counts), so a closed session leaves memory.
 */
function forgettingLeases(store: SessionStore): SessionLeases {
  const leases = new InProcessSessionLeases();
  return {
    get holder() {
      return leases.holder;
    },
    holderOf: (id) => leases.holderOf(id),
    close: () => leases.close(),
    async acquire(id): Promise<LeaseAttempt> {
      const attempt = await leases.acquire(id);
      if (!attempt.acquired) return attempt;
      const { lease } = attempt;
      return {
        acquired: true,
        lease: {
          sessionId: id,
          get held() {
            return lease.held;
          },
          onLost: (listener) => lease.onLost(listener),
          async release() {
            const last = lease.held; // false once another connection took it over
            await lease.release();
            if (last) await store.delete(id).catch(() => false);
          },
        },
      };
    },
  };
}
