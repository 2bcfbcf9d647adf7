import { mkdir, open, readFile, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { fsyncDirectory, isErrnoCode } from "./durable-fs.js";

/**
 * Who did what on a service: one record per session opened, loaded, deleted, prompt, tool call
 * (with its permission outcome) and refusal, with principal, session, instance and time.
 */
export interface AuditRecord {
  /** ISO time. */
  at: string;
  /** The instance (lease holder name) that handled it. */
  instance: string;
  principal: string;
  sessionId?: string;
  /** e.g. `session/new`, `prompt`, `tool_call`, `refused`. */
  action: string;
  /** Small JSON details (method, reason, tool, permission outcome, stop reason …); never prompt text. */
  detail: Record<string, unknown>;
}

/** Which audit records `AuditLog.query` returns: one principal's, since a time, at most `limit` (oldest first). */
export interface AuditQuery {
  principal?: string;
  /** Records at or after this time. */
  since?: Date;
  /** At most this many (the oldest first); default 10 000. */
  limit?: number;
}

/** Records one `AuditLog.query` returns unless `limit` says otherwise. */
export const DEFAULT_AUDIT_QUERY_LIMIT = 10_000;

/** Where audit records are kept: appended in batches, read in time order, pruned by age. */
export interface AuditLog {
  append(records: readonly AuditRecord[]): Promise<void>;
  query(query?: AuditQuery): Promise<AuditRecord[]>;
  /** Removes records older than `before`; resolves with how many went (file store: whole days). */
  prune(before: Date): Promise<number>;
}

function matches(record: AuditRecord, query: AuditQuery): boolean {
  return (query.principal === undefined || record.principal === query.principal) && (query.since === undefined || Date.parse(record.at) >= query.since.getTime());
}

/** The last 10 000 records of this process (`--no-persist`). */
export class InMemoryAuditLog implements AuditLog {
  readonly #records: AuditRecord[] = [];
  readonly #max: number;

  constructor(max = 10_000) {
    this.#max = max;
  }

  async append(records: readonly AuditRecord[]): Promise<void> {
    this.#records.push(...records);
    if (this.#records.length > this.#max) this.#records.splice(0, this.#records.length - this.#max);
  }

  async query(query: AuditQuery = {}): Promise<AuditRecord[]> {
    return this.#records.filter((r) => matches(r, query)).slice(0, query.limit ?? DEFAULT_AUDIT_QUERY_LIMIT);
  }

  async prune(before: Date): Promise<number> {
    const keep = this.#records.filter((r) => Date.parse(r.at) >= before.getTime());
    const gone = this.#records.length - keep.length;
    this.#records.splice(0, this.#records.length, ...keep);
    return gone;
  }
}

const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.jsonl$/;

/**
 * `<stateDir>/audit/YYYY-MM-DD.jsonl` (UTC days): each batch is one `O_APPEND` write, synced,
 * so several processes on the state directory append without interleaving lines. Pruning
 * removes whole days. A torn last line (a crash mid-write) is skipped on reading.
 */
export class FileAuditLog implements AuditLog {
  readonly dir: string;

  constructor(stateDir: string) {
    this.dir = join(stateDir, "audit");
  }

  async append(records: readonly AuditRecord[]): Promise<void> {
    const byDay = new Map<string, string[]>();
    for (const record of records) {
      const day = record.at.slice(0, 10);
      byDay.set(day, [...(byDay.get(day) ?? []), `${JSON.stringify(record)}\n`]);
    }
    for (const [day, lines] of byDay) {
      const path = join(this.dir, `${day}.jsonl`);
      const handle = await open(path, "a", 0o600).catch(async (error: unknown) => {
        if (!isErrnoCode(error, "ENOENT")) throw error;
        await mkdir(this.dir, { recursive: true, mode: 0o700 });
        await fsyncDirectory(join(this.dir, ".."));
        return open(path, "a", 0o600);
      });
      try {
        await handle.write(lines.join(""));
        await handle.sync();
      } finally {
        await handle.close();
      }
    }
  }

  async #days(): Promise<string[]> {
    try {
      return (await readdir(this.dir)).flatMap((name) => DAY_FILE.exec(name)?.[1] ?? []).sort();
    } catch (error) {
      if (isErrnoCode(error, "ENOENT")) return [];
      throw error;
    }
  }

  async query(query: AuditQuery = {}): Promise<AuditRecord[]> {
    const limit = query.limit ?? DEFAULT_AUDIT_QUERY_LIMIT;
    const from = query.since?.toISOString().slice(0, 10) ?? "";
    const out: AuditRecord[] = [];
    for (const day of await this.#days()) {
      if (day < from) continue;
      const text = await readFile(join(this.dir, `${day}.jsonl`), "utf8").catch(() => "");
      const records: AuditRecord[] = [];
      for (const line of text.split("\n")) {
        if (line === "") continue;
        try {
          const record = JSON.parse(line) as AuditRecord;
          if (matches(record, query)) records.push(record);
        } catch {
          // a line torn by a crash
        }
      }
      // Processes append batches independently: order each day by time.
      out.push(...records.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0)));
      if (out.length >= limit) break;
    }
    return out.slice(0, limit);
  }

  async prune(before: Date): Promise<number> {
    const cutoff = before.toISOString().slice(0, 10);
    let gone = 0;
    for (const day of await this.#days()) {
      if (day >= cutoff) break;
      await rm(join(this.dir, `${day}.jsonl`), { force: true });
      gone++;
    }
    return gone;
  }
}
