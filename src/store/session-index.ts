import { readFile, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../core/index.js";
import { errorMessage } from "../core/index.js";
import type { SessionSummary } from "./types.js";
import { isErrnoCode, writeFileAtomic } from "./durable-fs.js";
import { summaryOf } from "./header.js";
import { fileLocks } from "./keyed-lock.js";
import { parseSessionText } from "./records.js";
import { sessionFileStem } from "./session-ids.js";
import type { JournalPosition } from "./session-journal.js";

export const INDEX_FILE_NAME = "index.json";
const INDEX_VERSION = 2;
const STAT_BATCH = 32;

/**
 * A summary, and (when a scan read it) the file's identity, size and times: a scan that finds
 * them unchanged does not read the file again.
 */
interface IndexEntry {
  ino?: number;
  size?: number;
  mtimeMs?: number;
  ctimeMs?: number;
  summary: SessionSummary;
}

interface IndexFile {
  version: number;
  /** The journal position the entries are current at (null: unknown, validate every file). */
  journal: JournalPosition | null;
  entries: Record<string, IndexEntry>;
}

/** What a snapshot says: the summaries, current as of a journal position. */
export interface IndexSnapshot {
  summaries: SessionSummary[];
  journal: JournalPosition | null;
}

/**
 * A full scan of the session files: the summaries the list index (live-index.ts) starts from,
 * cached in `sessions/index.json`. The cache is only an accelerator: a scan stats each
 * `*.jsonl` file and reads (header and header updates, item records skipped without parsing)
 * only files whose stat changed. A lost, stale or corrupt snapshot costs reading the files,
 * never a wrong answer. Scans run at a cold start and after the journal was replaced.
 */
export class SessionListIndex {
  readonly #dir: string;
  readonly #logger: Logger;
  /** Files already reported as unreadable, so each is logged once per change. */
  readonly #reported = new Set<string>();

  constructor(sessionsDir: string, logger: Logger) {
    this.#dir = sessionsDir;
    this.#logger = logger;
  }

  get path(): string {
    return join(this.#dir, INDEX_FILE_NAME);
  }

  /**
   * Reads every session file whose stat differs from the snapshot's entry and saves a snapshot
   * current as of `journal` (the position taken before the scan began: replaying the journal
   * from there onto the result is exact, as its records hold absolute values).
   */
  summaries(journal: JournalPosition | undefined): Promise<SessionSummary[]> {
    return fileLocks.run(this.path, () => this.#summaries(journal ?? null));
  }

  /** The last snapshot, if readable (no file is read but index.json). */
  async snapshot(): Promise<IndexSnapshot | undefined> {
    const file = await this.#readIndex();
    const entries = Object.values(file.entries);
    // Trusted only whole: a damaged entry could hide its session, so then the files are scanned.
    if (file.journal === null || !entries.every(isEntry)) return undefined;
    return { summaries: entries.map((e) => e.summary), journal: file.journal };
  }

  /** Saves the summaries as current at `journal` (a cold start then reads this and the journal after it). */
  async save(summaries: Iterable<SessionSummary>, journal: JournalPosition): Promise<void> {
    const entries: Record<string, IndexEntry> = {};
    for (const summary of summaries) {
      const stem = sessionFileStem(summary.sessionId);
      if (stem !== undefined) entries[`${stem}.jsonl`] = { summary };
    }
    await this.#write({ version: INDEX_VERSION, journal, entries });
  }

  async #write(file: IndexFile): Promise<void> {
    await writeFileAtomic(this.path, JSON.stringify(file)).catch((error: unknown) =>
      this.#logger.debug("session index not written (it is only a cache)", { error: errorMessage(error) }),
    );
  }

  async #summaries(journal: JournalPosition | null): Promise<SessionSummary[]> {
    let names: string[];
    try {
      names = (await readdir(this.#dir)).filter((n) => n.endsWith(".jsonl") && !n.startsWith("."));
    } catch (error) {
      if (isErrnoCode(error, "ENOENT")) return [];
      throw error;
    }
    const cached = await this.#readIndex();
    const next: Record<string, IndexEntry> = {};
    const present = new Set(names);
    let changed = Object.keys(cached.entries).some((name) => !present.has(name));
    for (let i = 0; i < names.length; i += STAT_BATCH) {
      await Promise.all(
        names.slice(i, i + STAT_BATCH).map(async (name) => {
          const entry = await this.#entryFor(name, cached.entries[name]);
          if (entry) next[name] = entry;
          if (entry !== cached.entries[name]) changed = true;
        }),
      );
    }
    if (changed || JSON.stringify(journal) !== JSON.stringify(cached.journal)) await this.#write({ version: INDEX_VERSION, journal, entries: next });
    return Object.values(next).map((e) => e.summary);
  }

  /** One session's summary read from its file (undefined: no such session). */
  async summaryOf(sessionId: string): Promise<SessionSummary | undefined> {
    const stem = sessionFileStem(sessionId);
    return stem === undefined ? undefined : (await this.#entryFor(`${stem}.jsonl`, undefined))?.summary;
  }

  async #entryFor(name: string, cached: IndexEntry | undefined): Promise<IndexEntry | undefined> {
    const path = join(this.#dir, name);
    try {
      const s = await stat(path);
      if (cached && isEntry(cached) && cached.ino !== undefined && cached.ino === s.ino && cached.size === s.size && cached.mtimeMs === s.mtimeMs && cached.ctimeMs === s.ctimeMs) return cached;
      const parsed = parseSessionText(await readFile(path, "utf8"), name, { items: false });
      if (!parsed) return undefined; // a create that never finished
      if (sessionFileStem(parsed.header.sessionId) !== name.slice(0, -".jsonl".length)) {
        this.#reportOnce(name, s.size, `session file ${name} holds session ${JSON.stringify(parsed.header.sessionId)}; not listed`);
        return undefined;
      }
      return { ino: s.ino, size: s.size, mtimeMs: s.mtimeMs, ctimeMs: s.ctimeMs, summary: summaryOf(parsed.header) };
    } catch (error) {
      if (!isErrnoCode(error, "ENOENT")) this.#reportOnce(name, -1, `session file ${name} not listed: ${errorMessage(error)}`);
      return undefined;
    }
  }

  #reportOnce(name: string, size: number, message: string): void {
    const key = `${name}:${size}`;
    if (this.#reported.has(key)) return;
    this.#reported.add(key);
    this.#logger.warn(message);
  }

  async #readIndex(): Promise<IndexFile> {
    try {
      const value = JSON.parse(await readFile(this.path, "utf8")) as Partial<IndexFile>;
      if (typeof value.entries === "object" && value.entries !== null) {
        // Version 1 (before the journal) holds stat-checked entries only: usable by a scan.
        if (value.version === 1) return { version: INDEX_VERSION, journal: null, entries: value.entries };
        if (value.version === INDEX_VERSION) return { version: INDEX_VERSION, journal: isPosition(value.journal) ? value.journal : null, entries: value.entries };
      }
    } catch (error) {
      if (!isErrnoCode(error, "ENOENT")) this.#logger.debug("session index unreadable; rebuilding", { error: errorMessage(error) });
    }
    return { version: INDEX_VERSION, journal: null, entries: {} };
  }
}

function isPosition(value: unknown): value is JournalPosition {
  const v = value as Partial<JournalPosition> | null | undefined;
  return typeof v?.id === "string" && typeof v.offset === "number";
}

function isEntry(value: IndexEntry): boolean {
  const summary = (value as Partial<IndexEntry>).summary;
  return (
    typeof summary === "object" &&
    summary !== null &&
    typeof summary.sessionId === "string" &&
    // Summaries cached before owners existed have none: rescanned.
    typeof summary.owner === "string" &&
    typeof summary.cwd === "string" &&
    Array.isArray(summary.additionalDirectories) &&
    typeof summary.createdAt === "string" &&
    typeof summary.updatedAt === "string"
  );
}
