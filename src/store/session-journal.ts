import { closeSync, constants, fstatSync, openSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { link, rename, stat, unlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { SessionHeaderPatch, SessionSummary } from "./types.js";
import { isErrnoCode, openIfPresent, writeAllSync } from "./durable-fs.js";

export const JOURNAL_FILE_NAME = "journal.log";
/** The journal before the last rotation, kept so readers finish it instead of rescanning. */
export const PREVIOUS_JOURNAL_FILE_NAME = "journal.log.1";
/** Past this size the reader that notices renames the journal to journal.log.1 (a new one starts). */
export const JOURNAL_ROTATE_BYTES = 8 * 1024 * 1024;
/** The most of the journal one refresh reads; more than that (a long pause) costs a rescan. */
const MAX_READ_BYTES = 16 * 1024 * 1024;

/**
 * One change to the list of sessions, as every store instance on the directory sees it:
 * `c` created (the whole summary; written *before* the file is), `t` touched (a new
 * `updatedAt`), `p` header patch, `d` deleted.
 */
export type JournalRecord =
  | { c: SessionSummary }
  | { t: string; u: string }
  | { p: string; h: SessionHeaderPatch; u: string }
  | { d: string };

/** Where a reader is: the journal generation (its header's id) and the end of the last complete line read. */
export interface JournalPosition {
  id: string;
  offset: number;
}

/** What a refresh found: records to apply, or that records may have been missed (rescan the files). */
export type JournalRead = { records: JournalRecord[]; reset: false } | { records: []; reset: true };

/** An open journal file: its generation id (first line), size, and where its records start. */
interface OpenJournal {
  handle: FileHandle;
  id: string;
  size: number;
  ino: number;
  headerBytes: number;
}

const HEADER_READ_BYTES = 128;

/**
 * `sessions/journal.log`: the list index's change feed, shared by every process on the state
 * directory. Each store write appends one record after the session file changed (a create
 * before it), so others learn of it by reading the journal's new bytes instead of statting
 * every session file. Only an accelerator: not fsync'd; whatever it misses (a crash between
 * the two writes) leaves a list order stale until the next full scan, never a session hidden.
 * Each record is written as `\n{json}\n`: a record torn by a crash never glues onto the next.
 * The first line names the generation (`{"journal":ID}`; inode numbers are reused). When it
 * grows past 8 MiB a reader renames it to `journal.log.1` and starts the next generation;
 * readers still inside the old one finish it there; one further behind rescans the files.
 */
export class SessionJournal {
  readonly path: string;
  readonly #previousPath: string;
  readonly #rotateBytes: number;
  /** The inode the last append went to. */
  #writtenTo: number | undefined;
  /** Where this reader is (undefined: no journal existed when it started). */
  #read: JournalPosition | undefined;

  constructor(sessionsDir: string, rotateBytes = JOURNAL_ROTATE_BYTES) {
    this.path = join(sessionsDir, JOURNAL_FILE_NAME);
    this.#previousPath = join(sessionsDir, PREVIOUS_JOURNAL_FILE_NAME);
    this.#rotateBytes = rotateBytes;
  }

  /**
   * Appends records in one write; resolves once written to the file (not synced). Synchronous
   * inside: open, write, stat and close of an unsynced append only touch the page cache, and
   * cost a few µs each where each async call costs tens (this runs after every store write).
   */
  async append(records: JournalRecord[]): Promise<void> {
    const text = Buffer.from(records.map((r) => `\n${JSON.stringify(r)}\n`).join(""), "utf8");
    let fd: number;
    try {
      fd = openSync(this.path, constants.O_WRONLY | constants.O_APPEND);
    } catch (error) {
      if (!isErrnoCode(error, "ENOENT")) throw error;
      await this.#create();
      fd = openSync(this.path, constants.O_WRONLY | constants.O_APPEND);
    }
    try {
      writeAllSync(fd, text);
      this.#writtenTo = fstatSync(fd).ino;
    } finally {
      closeSync(fd);
    }
  }

  /** Whether the journal at the path is no longer the one the last append went to (a rotation raced with it). */
  async replacedSinceAppend(): Promise<boolean> {
    const written = this.#writtenTo;
    return written !== undefined && (await inodeOf(this.path)) !== written;
  }

  /**
   * Starts this reader at the journal's current end (before a full scan), creating the journal
   * if there is none yet, so that the scan's snapshot has a position to be current at.
   */
  async mark(): Promise<void> {
    let current = await this.#open(this.path);
    if (current === undefined) {
      await this.#create().catch((error: unknown) => {
        if (!isErrnoCode(error, "ENOENT")) throw error; // no sessions/ yet: nothing to mark
      });
      current = await this.#open(this.path);
    }
    this.#read = current === undefined ? undefined : { id: current.id, offset: current.size };
    await current?.handle.close();
  }

  /** Starts reading at a position saved earlier (a snapshot's); `readNew` says `reset` if it is gone. */
  resumeAt(position: JournalPosition): void {
    this.#read = { ...position };
  }

  /** How far this reader has read (undefined before any journal existed). */
  get position(): JournalPosition | undefined {
    return this.#read === undefined ? undefined : { ...this.#read };
  }

  /** The records appended since the last read, or `reset` when some may have been missed. */
  async readNew(): Promise<JournalRead> {
    const current = await this.#open(this.path);
    try {
      const records: JournalRecord[] = [];
      let read = this.#read;
      if (read !== undefined && read.id !== current?.id) {
        // Rotated: finish the previous generation if that is where this reader was.
        const previous = await this.#open(this.#previousPath);
        try {
          const rest = previous?.id === read.id ? await readFrom(previous, read) : "reset";
          if (rest === "reset") return this.#resetTo(current);
          records.push(...rest);
        } finally {
          await previous?.handle.close();
        }
        read = this.#read = current === undefined ? undefined : { id: current.id, offset: current.headerBytes };
      }
      if (current === undefined) return { records, reset: false };
      // No journal when this reader started: this one was created since, so it is read whole.
      read ??= this.#read = { id: current.id, offset: current.headerBytes };
      const fresh = await readFrom(current, read);
      if (fresh === "reset") return this.#resetTo(current);
      records.push(...fresh);
      return { records, reset: false };
    } finally {
      await current?.handle.close();
    }
  }

  /**
   * Renames the journal to journal.log.1 once this reader has read past the rotation size, and
   * starts the next generation. Resolves true when it rotated.
   */
  async rotateIfLarge(): Promise<boolean> {
    const read = this.#read;
    if (read === undefined || read.offset < this.#rotateBytes) return false;
    const current = await this.#open(this.path);
    await current?.handle.close();
    if (current?.id !== read.id) return false; // another reader rotated it already
    await rename(this.path, this.#previousPath);
    await this.#create();
    return true;
  }

  #resetTo(current: OpenJournal | undefined): JournalRead {
    this.#read = current === undefined ? undefined : { id: current.id, offset: current.size };
    return { records: [], reset: true };
  }

  /** A new generation, complete with its header before it appears at the path (never replaces one). */
  async #create(): Promise<void> {
    const id = randomBytes(9).toString("base64url");
    const temp = join(dirname(this.path), `.${JOURNAL_FILE_NAME}.${id}.tmp`);
    await writeFile(temp, `${JSON.stringify({ journal: id })}\n`, { mode: 0o600 });
    try {
      await link(temp, this.path);
    } catch (error) {
      if (!isErrnoCode(error, "EEXIST")) throw error; // another process made it first: use theirs
    } finally {
      await unlink(temp).catch(() => undefined);
    }
  }

  /** Opens a journal and reads its generation id; undefined when there is none (or no header). */
  async #open(path: string): Promise<OpenJournal | undefined> {
    const handle = await openIfPresent(path);
    if (handle === undefined) return undefined;
    try {
      const { size, ino } = await handle.stat();
      const head = Buffer.alloc(Math.min(HEADER_READ_BYTES, size));
      const { bytesRead } = await handle.read(head, 0, head.length, 0);
      const end = head.subarray(0, bytesRead).indexOf(0x0a);
      const id = end < 0 ? undefined : (JSON.parse(head.subarray(0, end).toString("utf8")) as { journal?: unknown }).journal;
      if (typeof id === "string") return { handle, id, size, ino, headerBytes: end + 1 };
    } catch {
      // not a journal of ours: treated as none
    }
    await handle.close();
    return undefined;
  }
}

async function inodeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).ino;
  } catch (error) {
    if (isErrnoCode(error, "ENOENT")) return undefined;
    throw error;
  }
}

/** Complete records from the reader's offset to the file's end; advances the reader. */
async function readFrom(file: OpenJournal, read: JournalPosition): Promise<JournalRecord[] | "reset"> {
  if (file.size < read.offset || file.size - read.offset > MAX_READ_BYTES) return "reset";
  if (file.size === read.offset) return [];
  const buffer = Buffer.alloc(file.size - read.offset);
  const { bytesRead } = await file.handle.read(buffer, 0, buffer.length, read.offset);
  const bytes = buffer.subarray(0, bytesRead);
  const end = bytes.lastIndexOf(0x0a);
  if (end < 0) return [];
  read.offset += end + 1;
  return parseRecords(bytes.subarray(0, end).toString("utf8"));
}

/** Complete lines to records; blank lines (the separators) and torn or foreign lines are skipped. */
function parseRecords(text: string): JournalRecord[] {
  const records: JournalRecord[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    try {
      const value = JSON.parse(line) as unknown;
      if (isRecord(value)) records.push(value);
    } catch {
      // a record torn by a crash: whatever it said, a rescan or a later record repairs
    }
  }
  return records;
}

function isRecord(value: unknown): value is JournalRecord {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  if ("c" in v) return typeof v.c === "object" && v.c !== null && typeof (v.c as SessionSummary).sessionId === "string" && typeof (v.c as SessionSummary).updatedAt === "string";
  if ("t" in v) return typeof v.t === "string" && typeof v.u === "string";
  if ("p" in v) return typeof v.p === "string" && typeof v.u === "string" && typeof v.h === "object" && v.h !== null;
  return "d" in v && typeof v.d === "string";
}
