import { closeSync, constants, openSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { mkdir, open, readFile, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Item, Logger, SessionId } from "../core/index.js";
import { createStderrLogger } from "../core/index.js";
import type {
  CreateSessionInput,
  ListSessionsOptions,
  ListSessionsResult,
  LoadedSession,
  SessionHeader,
  SessionHeaderPatch,
  SessionReader,
  SessionStore,
} from "./types.js";
import { SessionStoreError } from "./types.js";
import { fdatasyncAsync, fsyncDirectory, isErrnoCode, readFirstLine, truncateTornTailSync, writeAllSync } from "./durable-fs.js";
import { assertItem, newHeader, normalizePatch, summaryOf } from "./header.js";
import { fileLocks } from "./keyed-lock.js";
import { LiveSessionIndex } from "./live-index.js";
import { openJsonlReader } from "./jsonl-reader.js";
import { pageQuery } from "./pagination.js";
import { headerLine, headerUpdateLine, itemLine, parseHeader, parseSessionText } from "./records.js";
import { SessionListIndex } from "./session-index.js";
import { SessionJournal, type JournalRecord } from "./session-journal.js";
import { defaultStateDir } from "./state-dir.js";
import { sessionFileStem } from "./session-ids.js";

/** Options of `JsonlSessionStore`: where the session files live, and where repairs are reported. */
export interface JsonlSessionStoreOptions {
  /** Defaults to `defaultStateDir()`; sessions live in `<stateDir>/sessions/`. */
  stateDir?: string;
  /** Where skipped lines and repairs are reported; stderr by default. */
  logger?: Logger;
  /** Source of `createdAt` / `updatedAt` times (tests pin it). */
  clock?: () => Date;
  /** @internal Size at which the list journal rotates (default 8 MiB; tests make it small). */
  listJournalRotateBytes?: number;
}

/** Open for appending without creating: a missing file is a missing session. */
const APPEND_FLAGS = constants.O_RDWR | constants.O_APPEND;

/**
 * The default store: one append-only JSONL file per session (see records.ts for the format).
 * Every write is one line written with O_APPEND and fdatasync'd before the promise resolves;
 * before each write a torn tail left by a crash is cut off, so it can never glue onto the next
 * record. Writes and reads of one file are serialized within the process. One process should
 * own a session at a time (two writers are not coordinated beyond O_APPEND).
 */
export class JsonlSessionStore implements SessionStore {
  readonly stateDir: string;
  readonly sessionsDir: string;
  readonly #logger: Logger;
  readonly #clock: () => Date;
  readonly #index: LiveSessionIndex;
  readonly #journal: SessionJournal;
  /** Per file: the append batch waiting for the file lock (see #appendLine). */
  readonly #waitingBatches = new Map<string, AppendBatch>();

  constructor(options: JsonlSessionStoreOptions = {}) {
    this.stateDir = options.stateDir ?? defaultStateDir();
    this.sessionsDir = join(this.stateDir, "sessions");
    this.#logger = options.logger ?? createStderrLogger();
    this.#clock = options.clock ?? (() => new Date());
    this.#journal = new SessionJournal(this.sessionsDir, options.listJournalRotateBytes);
    this.#index = new LiveSessionIndex(new SessionListIndex(this.sessionsDir, this.#logger), this.#journal, (id) => this.pathFor(id), this.#logger);
  }

  /** The file a session lives in, or undefined for an id that cannot be a session. */
  pathFor(sessionId: SessionId): string | undefined {
    const stem = sessionFileStem(sessionId);
    return stem === undefined ? undefined : join(this.sessionsDir, `${stem}.jsonl`);
  }

  async create(input: CreateSessionInput): Promise<SessionHeader> {
    const header = newHeader(input, this.#clock());
    const path = this.pathFor(header.sessionId)!;
    const created: JournalRecord = { c: summaryOf(header) };
    await fileLocks.run(path, async () => {
      // The journal hears of the session before its file exists: a crash between the two leaves
      // a record whose file is missing (never listed), never a file the lists do not know.
      const journaledFirst = this.#dirMade;
      if (journaledFirst) await this.#index.record([created]);
      let handle: FileHandle;
      try {
        handle = await this.#openNew(path, header.sessionId, this.#dirMade);
      } catch (error) {
        // sessions/ was removed since it was made: make it again.
        if (!this.#dirMade || !isErrnoCode(error, "ENOENT")) throw error;
        this.#dirMade = false;
        handle = await this.#openNew(path, header.sessionId, false);
      }
      // The new entry is in the directory now: its fsync runs alongside the header's write and
      // fdatasync (one is no use without the other, neither needs the other first; a crash
      // between them leaves an empty file, which reads as "no such session").
      const entry = fsyncDirectory(this.sessionsDir);
      try {
        await handle.appendFile(headerLine(header), "utf8");
        await handle.datasync();
      } finally {
        await handle.close();
        await entry;
      }
      // The first create made sessions/ (no journal before it); a rotation may have raced with the record.
      if (!journaledFirst || (await this.#journal.replacedSinceAppend())) await this.#index.record([created]);
    });
    return header;
  }

  /** Whether sessions/ was made (and its parents synced) by this store already. */
  #dirMade = false;

  async #openNew(path: string, sessionId: SessionId, dirMade: boolean): Promise<FileHandle> {
    if (!dirMade) {
      const madeDir = await mkdir(this.sessionsDir, { recursive: true, mode: 0o700 });
      // New directories' entries must be durable too: sync every parent from sessions/ up to the first one made.
      for (let dir = this.sessionsDir; madeDir !== undefined && dir !== dirname(madeDir); ) {
        dir = dirname(dir);
        await fsyncDirectory(dir);
      }
      this.#dirMade = true;
    }
    try {
      return await open(path, "wx", 0o600);
    } catch (error) {
      if (!isErrnoCode(error, "EEXIST")) throw error;
      // A file without a complete header is a create that crashed before it was acknowledged.
      if ((await readFirstLine(path)) !== undefined) throw new SessionStoreError("session_exists", `session ${sessionId} already exists`);
      return open(path, "w", 0o600);
    }
  }

  async append(sessionId: SessionId, item: Item): Promise<void> {
    assertItem(item);
    const at = this.#now();
    await this.#appendLine(sessionId, serialize(() => itemLine(item, at)), { t: sessionId, u: at });
  }

  async updateHeader(sessionId: SessionId, patch: SessionHeaderPatch): Promise<void> {
    const normalized = normalizePatch(patch);
    const at = this.#now();
    await this.#appendLine(sessionId, serialize(() => headerUpdateLine(normalized, at)), { p: sessionId, h: normalized, u: normalized.updatedAt ?? at });
  }

  async load(sessionId: SessionId): Promise<LoadedSession | undefined> {
    const path = this.pathFor(sessionId);
    if (path === undefined) return undefined;
    return fileLocks.run(path, async () => {
      let text: string;
      try {
        text = await readFile(path, "utf8");
      } catch (error) {
        if (isErrnoCode(error, "ENOENT")) return undefined;
        throw error;
      }
      const parsed = parseSessionText(text, path);
      if (!parsed) return undefined;
      if (parsed.header.sessionId !== sessionId) {
        throw new SessionStoreError("corrupt_session", `${path} holds session ${JSON.stringify(parsed.header.sessionId)}, not ${JSON.stringify(sessionId)}`);
      }
      for (const warning of parsed.warnings) this.#logger.warn(`session ${sessionId}: ${warning}`);
      return parsed;
    });
  }

  /** Item by item: the file's size is taken under its lock, and only that much is read (see jsonl-reader.ts). */
  async read(sessionId: SessionId): Promise<SessionReader | undefined> {
    const path = this.pathFor(sessionId);
    if (path === undefined) return undefined;
    // Skipped lines are reported when the read ends, as `load` reports them.
    const report = (warnings: string[]): void => warnings.forEach((warning) => this.#logger.warn(`session ${sessionId}: ${warning}`));
    return openJsonlReader(path, sessionId, (run) => fileLocks.run(path, run), report);
  }

  /** A page costs the journal's new records and the page itself, not the store (see live-index.ts). */
  async list(options: ListSessionsOptions = {}): Promise<ListSessionsResult> {
    return this.#index.page(pageQuery(options));
  }


  async delete(sessionId: SessionId): Promise<boolean> {
    const path = this.pathFor(sessionId);
    if (path === undefined) return false;
    return fileLocks.run(path, async () => {
      try {
        await unlink(path);
      } catch (error) {
        if (isErrnoCode(error, "ENOENT")) return false;
        throw error;
      }
      await fsyncDirectory(this.sessionsDir);
      await this.#index.record([{ d: sessionId }]);
      return true;
    });
  }

  async exists(sessionId: SessionId): Promise<boolean> {
    const path = this.pathFor(sessionId);
    if (path === undefined) return false;
    return fileLocks.run(path, async () => {
      try {
        const first = await readFirstLine(path);
        if (first === undefined) return false;
        return parseHeader(first, path).sessionId === sessionId;
      } catch (error) {
        if (isErrnoCode(error, "ENOENT")) return false;
        // Present but unreadable by this version (newer format, corrupt header): it exists.
        if (error instanceof SessionStoreError) return true;
        throw error;
      }
    });
  }

  #now(): string {
    return this.#clock().toISOString();
  }

  async #appendLine(sessionId: SessionId, line: string, record: JournalRecord): Promise<void> {
    const path = this.pathFor(sessionId);
    if (path === undefined) throw notFound(sessionId);
    // Appends made while a write to this file waits for its turn join it, in call order: one
    // write and one fdatasync for a burst (a fork's copied items, a step's results), and each
    // promise still resolves only once its line is durable.
    const waiting = this.#waitingBatches.get(path);
    if (waiting) {
      waiting.lines.push(line);
      waiting.records.push(record);
      return waiting.written;
    }
    const batch: AppendBatch = { lines: [line], records: [record], written: Promise.resolve() };
    this.#waitingBatches.set(path, batch);
    batch.written = this.#writeBatch(sessionId, path, batch);
    return batch.written;
  }

  async #writeBatch(sessionId: SessionId, path: string, batch: AppendBatch): Promise<void> {
    await fileLocks.run(path, async () => {
      // From here on, later appends start the next batch.
      this.#waitingBatches.delete(path);
      const line = Buffer.from(batch.lines.join(""), "utf8");
      // open, stat, the torn-tail check, write and close only touch the page cache: done
      // synchronously they cost a few µs each, where each async call costs tens (a promise and a
      // thread-pool round trip per call: most of an append's CPU). Only fdatasync, which waits
      // for the device, runs off the event loop.
      let fd: number;
      try {
        fd = openSync(path, APPEND_FLAGS);
      } catch (error) {
        if (isErrnoCode(error, "ENOENT")) throw notFound(sessionId);
        throw error;
      }
      try {
        const { size, dropped } = truncateTornTailSync(fd);
        if (dropped > 0) this.#logger.warn(`session ${sessionId}: cut a torn last line (${dropped} bytes) before appending`);
        if (size === 0) throw notFound(sessionId);
        writeAllSync(fd, line);
        await fdatasyncAsync(fd);
      } finally {
        closeSync(fd);
      }
      // After the lines are durable: a crash between leaves the list's order stale, never wrong data.
      await this.#index.record(batch.records);
    });
  }
}

/** Appends to one file made while a write to it waited: written (and journaled) together. */
interface AppendBatch {
  lines: string[];
  records: JournalRecord[];
  written: Promise<void>;
}

function notFound(sessionId: SessionId): SessionStoreError {
  return new SessionStoreError("session_not_found", `session ${JSON.stringify(sessionId)} not found`);
}

function serialize(make: () => string): string {
  try {
    return make();
  } catch (error) {
    throw new SessionStoreError("invalid_argument", "record is not JSON-serializable", { cause: error });
  }
}
