import type { Logger } from "../core/index.js";
import { errorMessage } from "../core/index.js";
import type { SessionLeases } from "./leases.js";
import { cursorBefore } from "./pagination.js";
import type { AuditRecord } from "./audit.js";
import type { SessionStore, SessionSummary } from "./types.js";

/** Sessions examined per run unless told otherwise: a run's work is bounded, the next run goes on. */
export const DEFAULT_PRUNE_BATCH = 1000;

/**
 * Options of `pruneSessions`: the age cut-off, and what is kept (archived sessions, sessions leased by an instance).
 */
export interface PruneOptions {
  /** Sessions last updated before this time (ISO) go. */
  before: string;
  /** Only list what would go. */
  dryRun?: boolean;
  /** Keep archived sessions whatever their age (default: they age like the others). */
  keepArchived?: boolean;
  /** Only this principal's sessions. */
  owner?: string;
  /**
   * The instances' session leases: a session leased by anyone is skipped and reported (it is
   * open somewhere), and the lease is held while the session is deleted, so no instance opens
   * it meanwhile. Without leases nothing is skipped.
   */
  leases?: SessionLeases;
  /** At most this many sessions are examined (deleted or skipped) in one run (default 1000). */
  limit?: number;
  /** Each deletion is logged at info (and each skip); default: silent. */
  logger?: Logger;
  /** Called after each deletion (e.g. the audit trail). */
  onDeleted?: (session: SessionSummary) => void | Promise<void>;
}

/**
 * What a `pruneSessions` run did: the sessions deleted, those kept because an instance holds them, those that failed,
 * and whether it stopped at its bound.
 */
export interface PruneReport {
  /** Deleted (or, in a dry run, to be deleted). */
  deleted: SessionSummary[];
  /** Old enough but open on an instance (leased): kept. */
  leased: Array<{ session: SessionSummary; holder: string; expiresAt?: string }>;
  /** Old enough but gone before it could be deleted (another process was quicker), or failed. */
  failed: Array<{ session: SessionSummary; error: string }>;
  /** The run stopped at its bound: more old sessions may be left for the next run. */
  more: boolean;
}

/**
 * Deletes the sessions not updated since `before`, oldest-bounded work: the walk starts at the
 * cutoff (a `list` cursor, never paging through newer sessions) and stops after `limit`
 * sessions. Keyset pages are stable under the deletions behind them.
 */
export async function pruneSessions(store: SessionStore, options: PruneOptions): Promise<PruneReport> {
  const limit = options.limit ?? DEFAULT_PRUNE_BATCH;
  const report: PruneReport = { deleted: [], leased: [], failed: [], more: false };
  let cursor: string | undefined = cursorBefore(options.before);
  let examined = 0;
  while (cursor !== undefined) {
    const page = await store.list({
      cursor,
      limit: Math.min(200, limit - examined + 1),
      archived: options.keepArchived ? "exclude" : "include",
      ...(options.owner !== undefined ? { owner: options.owner } : {}),
    });
    for (const session of page.sessions) {
      if (examined === limit) {
        report.more = true;
        return report;
      }
      examined += 1;
      await pruneOne(store, session, options, report);
    }
    cursor = page.nextCursor;
  }
  return report;
}

async function pruneOne(store: SessionStore, session: SessionSummary, options: PruneOptions, report: PruneReport): Promise<void> {
  const { leases, logger } = options;
  const fields = { sessionId: session.sessionId, owner: session.owner, updatedAt: session.updatedAt, ...(session.archived ? { archived: true } : {}) };
  if (options.dryRun) {
    const holder = await leases?.holderOf(session.sessionId);
    if (holder) report.leased.push({ session, ...holder });
    else report.deleted.push(session);
    return;
  }
  const attempt = leases ? await leases.acquire(session.sessionId) : undefined;
  if (attempt && !attempt.acquired) {
    logger?.info("retention: session kept, it is open on an instance (leased)", { ...fields, holder: attempt.holder, ...(attempt.expiresAt ? { expiresAt: attempt.expiresAt } : {}) });
    report.leased.push({ session, holder: attempt.holder, ...(attempt.expiresAt ? { expiresAt: attempt.expiresAt } : {}) });
    return;
  }
  try {
    if (!(await store.delete(session.sessionId))) {
      report.failed.push({ session, error: "already gone" });
      return;
    }
    logger?.info("retention: session deleted", fields);
    report.deleted.push(session);
  } catch (error) {
    logger?.warn("retention: could not delete a session", { ...fields, error: errorMessage(error) });
    report.failed.push({ session, error: errorMessage(error) });
  } finally {
    if (attempt?.acquired) await attempt.lease.release();
  }
  if (report.deleted.at(-1) === session) {
    await Promise.resolve(options.onDeleted?.(session)).catch((error: unknown) => logger?.warn("retention: the deletion could not be recorded", { ...fields, error: errorMessage(error) }));
  }
}

/** Time between `startRetention` runs unless `intervalMs` says otherwise (`serve --retain-interval`): an hour. */
export const DEFAULT_RETAIN_INTERVAL_MS = 3_600_000;

/**
 * Options of `startRetention`: the maximum age, the interval between runs and what each run keeps (as
 * `PruneOptions`).
 */
export interface RetentionOptions {
  /** Sessions not updated for this long go. */
  maxAgeMs: number;
  /** Time between runs (default {@link DEFAULT_RETAIN_INTERVAL_MS}); a run that stopped at its bound is followed within a second. */
  intervalMs?: number;
  keepArchived?: boolean;
  leases?: SessionLeases;
  limit?: number;
  logger: Logger;
  clock?: () => Date;
  /** Called after each deletion (e.g. the audit trail). */
  onDeleted?: (session: SessionSummary) => void | Promise<void>;
}

/** A running retention policy: `stop` ends it (waiting for a run in progress). */
export interface RetentionSweeper {
  stop(): Promise<void>;
}

/**
 * Runs `pruneSessions` now and then periodically (never two runs at once; the timer does not
 * keep the process alive). A failed run is logged and retried at the next interval.
 */
export function startRetention(store: SessionStore, options: RetentionOptions): RetentionSweeper {
  const interval = options.intervalMs ?? DEFAULT_RETAIN_INTERVAL_MS;
  const clock = options.clock ?? (() => new Date());
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const schedule = (ms: number): void => {
    if (stopped) return;
    timer = setTimeout(() => (running = sweep().finally(() => (running = undefined))), ms);
    timer.unref();
  };
  const sweep = async (): Promise<void> => {
    const before = new Date(clock().getTime() - options.maxAgeMs).toISOString();
    let more = false;
    try {
      const report = await pruneSessions(store, {
        before,
        ...(options.keepArchived ? { keepArchived: true } : {}),
        ...(options.leases ? { leases: options.leases } : {}),
        ...(options.limit !== undefined ? { limit: options.limit } : {}),
        logger: options.logger,
        ...(options.onDeleted ? { onDeleted: options.onDeleted } : {}),
      });
      more = report.more;
      options.logger.info("retention: run done", { before, deleted: report.deleted.length, keptOpen: report.leased.length, failed: report.failed.length, more });
    } catch (error) {
      options.logger.warn("retention: run failed; retrying at the next interval", { error: errorMessage(error) });
    }
    schedule(more ? Math.min(interval, 1000) : interval);
  };
  schedule(0);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

/** The audit record of a session retention deleted: under its owner, so the owner's records show it. */
export function retentionAudit(session: SessionSummary, instance: string, by: string): AuditRecord {
  return {
    at: new Date().toISOString(),
    instance,
    principal: session.owner,
    sessionId: session.sessionId,
    action: "retention/delete",
    detail: { by, updatedAt: session.updatedAt, ...(session.archived ? { archived: true } : {}) },
  };
}

