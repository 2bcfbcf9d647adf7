import type { Logger } from "../core/index.js";
import { errorMessage } from "../core/index.js";
import type { SessionLeases } from "./leases.js";
import { cursorBefore } from "./pagination.js";
import type { SessionStore, SessionSummary } from "./types.js";

/** Sessions examined per run unless told otherwise: a run's work is bounded, the next run goes on. */
export const DEFAULT_PRUNE_BATCH = 1000;

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
    await options.onDeleted?.(session);
  } catch (error) {
    logger?.warn("retention: could not delete a session", { ...fields, error: errorMessage(error) });
    report.failed.push({ session, error: errorMessage(error) });
  } finally {
    if (attempt?.acquired) await attempt.lease.release();
  }
}
