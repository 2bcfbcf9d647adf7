import type { SessionSummary } from "./types.js";
import { comparePosition, type PageQuery } from "./pagination.js";

/**
 * Session summaries held in list order (newest `updatedAt` first, ties by id), so a page is a
 * binary search to the cursor plus a walk of the page — not a sort of the whole store.
 */
export class SortedSessions {
  readonly #byId = new Map<string, SessionSummary>();
  /** The same summaries in list order. */
  readonly #ordered: SessionSummary[] = [];

  constructor(summaries: Iterable<SessionSummary> = []) {
    for (const summary of summaries) this.#byId.set(summary.sessionId, summary);
    this.#ordered.push(...this.#byId.values());
    this.#ordered.sort(comparePosition);
  }

  get size(): number {
    return this.#byId.size;
  }

  get(sessionId: string): SessionSummary | undefined {
    return this.#byId.get(sessionId);
  }

  values(): IterableIterator<SessionSummary> {
    return this.#byId.values();
  }

  /** Inserts or replaces a session's summary, keeping the order. */
  put(summary: SessionSummary): void {
    this.delete(summary.sessionId);
    this.#byId.set(summary.sessionId, summary);
    this.#ordered.splice(this.#firstAfter(summary, true), 0, summary);
  }

  delete(sessionId: string): boolean {
    const old = this.#byId.get(sessionId);
    if (old === undefined) return false;
    this.#byId.delete(sessionId);
    const at = this.#firstAfter(old, true);
    if (this.#ordered[at] === old) this.#ordered.splice(at, 1);
    else this.#ordered.splice(this.#ordered.indexOf(old), 1); // not reached while entries are never mutated in place
    return true;
  }

  /** The summaries matching the query's filters, in list order, after its cursor. */
  *walk(query: PageQuery): Generator<SessionSummary> {
    const start = query.after === undefined ? 0 : this.#firstAfter(query.after, false);
    for (let i = start; i < this.#ordered.length; i++) {
      const summary = this.#ordered[i]!;
      if (query.cwd !== undefined && summary.cwd !== query.cwd) continue;
      if (query.owner !== undefined && summary.owner !== query.owner) continue;
      if (query.archived !== "include" && (summary.archived === true) !== (query.archived === "only")) continue;
      yield summary;
    }
  }

  /**
   * Index of the first entry ordered after `position` (binary search); with `orEqual`, the
   * first entry not before it (where an entry with exactly this position is or would go).
   */
  #firstAfter(position: { updatedAt: string; sessionId: string }, orEqual: boolean): number {
    let low = 0;
    let high = this.#ordered.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const order = comparePosition(this.#ordered[mid]!, position);
      if (order < 0 || (order === 0 && !orEqual)) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}
