import { isAbsolute, resolve } from "node:path";
import type { ListSessionsOptions, ListSessionsResult, SessionArchiveFilter, SessionSummary } from "./types.js";
import { SessionStoreError } from "./types.js";

/** Sessions one `SessionStore.list` page holds unless `limit` says otherwise. */
export const DEFAULT_LIST_LIMIT = 50;
/** The largest `limit` a `SessionStore.list` page takes; a larger one is lowered to it. */
export const MAX_LIST_LIMIT = 1000;

export interface CursorPosition {
  updatedAt: string;
  sessionId: string;
}

/** Newest first; ties by session id so the order is total and pages are stable. */
export function comparePosition(a: CursorPosition, b: CursorPosition): number {
  if (a.updatedAt !== b.updatedAt) return a.updatedAt < b.updatedAt ? 1 : -1;
  return a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0;
}

function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify(["v1", position.updatedAt, position.sessionId]), "utf8").toString("base64url");
}

function decodeCursor(cursor: string): CursorPosition {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(value) && value.length === 3 && value[0] === "v1" && typeof value[1] === "string" && typeof value[2] === "string") {
      return { updatedAt: value[1], sessionId: value[2] };
    }
  } catch {
    // fall through to the error below
  }
  throw new SessionStoreError("invalid_cursor", "invalid session list cursor");
}

/**
 * A `list` cursor from which the pages hold the sessions last updated at or before `time` (ISO),
 * oldest last as always: retention reaches the old sessions without paging through the rest.
 */
export function cursorBefore(time: string): string {
  return encodeCursor({ updatedAt: new Date(time).toISOString(), sessionId: "" });
}

/** Validated list options: what a store needs to fetch one page itself (e.g. in SQL). */
export interface PageQuery {
  limit: number;
  /** Normalized absolute cwd filter. */
  cwd?: string;
  /** Only this principal's sessions. */
  owner?: string;
  /** Return only entries strictly after this position (in list order). */
  after?: CursorPosition;
  /** Archived sessions: `exclude` (default), `include` or `only`. */
  archived: SessionArchiveFilter;
}

export function pageQuery(options: ListSessionsOptions = {}): PageQuery {
  const limit = options.limit ?? DEFAULT_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw new SessionStoreError("invalid_argument", `limit must be an integer from 1 to ${MAX_LIST_LIMIT}`);
  }
  const archived = options.archived ?? "exclude";
  if (archived !== "exclude" && archived !== "include" && archived !== "only") {
    throw new SessionStoreError("invalid_argument", `archived filter must be exclude, include or only, got ${JSON.stringify(archived)}`);
  }
  const query: PageQuery = { limit, archived };
  if (options.cwd !== undefined) {
    if (!isAbsolute(options.cwd)) throw new SessionStoreError("invalid_argument", "cwd filter must be an absolute path");
    query.cwd = resolve(options.cwd);
  }
  if (options.owner !== undefined) query.owner = options.owner;
  if (options.cursor !== undefined) query.after = decodeCursor(options.cursor);
  return query;
}

/** The page from up to `limit + 1` rows in list order (the extra row only says more follow). */
export function pageOf(rows: SessionSummary[], limit: number): ListSessionsResult {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const result: ListSessionsResult = { sessions: page };
  if (rows.length > limit && last) result.nextCursor = encodeCursor(last);
  return result;
}

/**
 * Keyset pagination: the cursor is the (updatedAt, sessionId) of the last entry returned, so a
 * page never repeats or skips sessions that did not change, even when others are added or removed.
 */
export function paginate(all: SessionSummary[], options: ListSessionsOptions = {}): ListSessionsResult {
  const query = pageQuery(options);
  let rows = all;
  if (query.cwd !== undefined) rows = rows.filter((s) => s.cwd === query.cwd);
  if (query.owner !== undefined) rows = rows.filter((s) => s.owner === query.owner);
  if (query.archived !== "include") rows = rows.filter((s) => (s.archived === true) === (query.archived === "only"));
  rows = [...rows].sort(comparePosition);
  const after = query.after;
  if (after !== undefined) rows = rows.filter((s) => comparePosition(s, after) > 0);
  return pageOf(rows, query.limit);
}
