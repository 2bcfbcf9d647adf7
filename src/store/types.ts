import type { Item, SessionId } from "../core/index.js";
import { AgentKitError } from "../core/index.js";

/** The newest session file format this build writes and reads. Older versions stay readable. */
export const SESSION_FORMAT_VERSION = 1;

/** The owner of sessions created without one (and of every session stored before owners existed). */
export const DEFAULT_OWNER = "default";

/** The durable description of a session: the header record with every update applied. */
export interface SessionHeader {
  /** Format version of the file the session was written in. */
  version: number;
  sessionId: SessionId;
  /** The principal that created the session (never changes); `DEFAULT_OWNER` for older sessions. */
  owner: string;
  /** Absolute working directory. */
  cwd: string;
  additionalDirectories: string[];
  createdAt: string;
  /** Time of the last write (append or header update) unless set explicitly. */
  updatedAt: string;
  title?: string;
  /** Hidden from `list` unless asked for (ACP `session/archive`). Absent = not archived. */
  archived?: boolean;
  /** The session this one was forked from (ACP `session/fork`). */
  forkedFrom?: SessionId;
  /**
   * Free host data that survives load (e.g. the runtime's current mode id and config option
   * values). JSON values only.
   */
  metadata: Record<string, unknown>;
}

/** What `SessionStore.create` needs: the id, owner, cwd and roots; the store stamps the times. */
export interface CreateSessionInput {
  sessionId: SessionId;
  /** Default `DEFAULT_OWNER`. */
  owner?: string;
  cwd: string;
  additionalDirectories?: string[];
  title?: string;
  metadata?: Record<string, unknown>;
  /** Lineage of a fork; stored as the header's `forkedFrom`. */
  forkedFrom?: SessionId;
  /** Defaults to the store's clock. */
  createdAt?: string;
}

/**
 * A change to the header. `metadata` is merged shallowly (top-level keys replace; a key set to
 * `null` stays `null`). `title: null` clears the title. `updatedAt` defaults to the write time.
 */
export interface SessionHeaderPatch {
  title?: string | null;
  /** `false` un-archives. */
  archived?: boolean;
  updatedAt?: string;
  cwd?: string;
  additionalDirectories?: string[];
  metadata?: Record<string, unknown>;
}

/**
 * A stored session read back: its header and committed items, with the problems skipped on the way (a torn last line,
 * unknown records).
 */
export interface LoadedSession {
  header: SessionHeader;
  /** Committed transcript items, in append order. */
  items: Item[];
  /** Problems that were skipped (a torn last line, unknown record types …). Empty when clean. */
  warnings: string[];
}

/** One transcript item as stored, with the time it was appended. */
export interface StoredItem {
  item: Item;
  /** ISO time of the append. */
  at: string;
}

/**
 * A stored session read item by item (a long session's `session/load` replays while it reads;
 * `sessions export` writes while it reads): memory holds one batch, not the transcript. Reads
 * what was committed when the reader was opened. `close` when done (also when not iterated).
 */
export interface SessionReader {
  /**
   * The header as created: id, owner and createdAt never change; the other fields are as first
   * written (later updates are met among the items — `result()` has them applied).
   */
  readonly created: SessionHeader;
  /** The items in append order; iterate once. */
  items(): AsyncIterable<StoredItem>;
  /** After `items()` is exhausted: the header with every update applied and what was skipped. */
  result(): { header: SessionHeader; warnings: string[] };
  close(): Promise<void>;
}

/** What `list` returns per session (cheap: no transcript). */
export interface SessionSummary {
  sessionId: SessionId;
  owner: string;
  cwd: string;
  additionalDirectories: string[];
  title?: string;
  /** Present (true) only for archived sessions. */
  archived?: boolean;
  forkedFrom?: SessionId;
  createdAt: string;
  updatedAt: string;
}

/**
 * Filters and paging of `SessionStore.list`: by cwd, owner and archived state; `cursor` continues after the previous
 * page.
 */
export interface ListSessionsOptions {
  /** Only sessions whose cwd equals this (both sides path-normalized). */
  cwd?: string;
  /** Only sessions this principal owns. */
  owner?: string;
  /** Opaque cursor from a previous page's `nextCursor`. */
  cursor?: string;
  /** Page size; default 50, at most 1000. */
  limit?: number;
  /** Archived sessions: `exclude` (default), `include` or `only`. */
  archived?: SessionArchiveFilter;
}

/** Archived sessions in a list: left out (default), included, or alone. */
export type SessionArchiveFilter = "exclude" | "include" | "only";

/** One page of `SessionStore.list`; `nextCursor` fetches the next. */
export interface ListSessionsResult {
  /** Newest `updatedAt` first; ties ordered by session id. */
  sessions: SessionSummary[];
  /** Present when more sessions follow. */
  nextCursor?: string;
}

/**
 * Durable sessions: a header plus an append-only transcript. Unknown (or invalid) ids read as
 * absent: `load` → undefined, `exists`/`delete` → false; `append`/`updateHeader` reject with
 * code `session_not_found`.
 */
export interface SessionStore {
  /** Rejects with `session_exists` if the id is taken, `invalid_session_id` if unusable. */
  create(input: CreateSessionInput): Promise<SessionHeader>;
  /** Resolves once the item is durable (fsync'd for file stores). Appends to one session are serialized. */
  append(sessionId: SessionId, item: Item): Promise<void>;
  load(sessionId: SessionId): Promise<LoadedSession | undefined>;
  /**
   * The session item by item (undefined when there is none); a store without it is read
   * through `load` (see `openSessionReader`).
   */
  read?(sessionId: SessionId): Promise<SessionReader | undefined>;
  list(options?: ListSessionsOptions): Promise<ListSessionsResult>;
  /** Durable like `append`. */
  updateHeader(sessionId: SessionId, patch: SessionHeaderPatch): Promise<void>;
  /** Removes the session; resolves false if it did not exist. */
  delete(sessionId: SessionId): Promise<boolean>;
  exists(sessionId: SessionId): Promise<boolean>;
}

/** Why a `SessionStore` call failed (`SessionStoreError.code`). */
export type SessionStoreErrorCode =
  | "session_not_found"
  | "session_exists"
  | "invalid_session_id"
  | "invalid_argument"
  | "invalid_cursor"
  | "unsupported_format"
  | "corrupt_session";

/** Every deliberate store failure; match on `code`. */
export class SessionStoreError extends AgentKitError {
  override readonly code: SessionStoreErrorCode;
  constructor(code: SessionStoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = "SessionStoreError";
    this.code = code;
  }
}
