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

export const INDEX_FILE_NAME = "index.json";
const INDEX_VERSION = 1;
const STAT_BATCH = 32;

/** A cached summary is valid while the file's identity, size and times are unchanged. */
interface IndexEntry {
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  summary: SessionSummary;
}

interface IndexFile {
  version: number;
  entries: Record<string, IndexEntry>;
}

/**
 * The summaries `list` needs, cached in `sessions/index.json`. The cache is only an
 * accelerator: every call stats each `*.jsonl` file and rescans (header and header updates,
 * item records skipped without parsing) only files whose stat changed. A lost, stale or
 * corrupt index costs a rescan, never a wrong answer.
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

  summaries(): Promise<SessionSummary[]> {
    return fileLocks.run(this.path, () => this.#summaries());
  }

  async #summaries(): Promise<SessionSummary[]> {
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
    if (changed) {
      await writeFileAtomic(this.path, JSON.stringify({ version: INDEX_VERSION, entries: next } satisfies IndexFile)).catch((error: unknown) =>
        this.#logger.debug("session index not written (it is only a cache)", { error: errorMessage(error) }),
      );
    }
    return Object.values(next).map((e) => e.summary);
  }

  async #entryFor(name: string, cached: IndexEntry | undefined): Promise<IndexEntry | undefined> {
    const path = join(this.#dir, name);
    try {
      const s = await stat(path);
      if (cached && isEntry(cached) && cached.ino === s.ino && cached.size === s.size && cached.mtimeMs === s.mtimeMs && cached.ctimeMs === s.ctimeMs) return cached;
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
      if (value.version === INDEX_VERSION && typeof value.entries === "object" && value.entries !== null) return value as IndexFile;
    } catch (error) {
      if (!isErrnoCode(error, "ENOENT")) this.#logger.debug("session index unreadable; rebuilding", { error: errorMessage(error) });
    }
    return { version: INDEX_VERSION, entries: {} };
  }
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
