import { stat } from "node:fs/promises";
import type { Logger } from "../core/index.js";
import { errorMessage } from "../core/index.js";
import type { ListSessionsResult, SessionHeader, SessionHeaderPatch, SessionSummary } from "./types.js";
import { SESSION_FORMAT_VERSION } from "./types.js";
import { applyPatch, summaryOf } from "./header.js";
import { isErrnoCode } from "./durable-fs.js";
import { pageOf, type PageQuery } from "./pagination.js";
import type { SessionListIndex } from "./session-index.js";
import type { JournalRecord, SessionJournal } from "./session-journal.js";
import { SortedSessions } from "./sorted-sessions.js";

/** Page rows are checked for their file in batches of this many (a session deleted by a crashed writer). */
const VERIFY_BATCH = 64;
/**
 * A listed session whose file stays absent this long is forgotten. Shorter would race a create in
 * another process: its record is written before its file, and the file starts empty.
 */
const ABSENT_GRACE_MS = 60_000;

/**
 * The JSONL store's `list`: the summaries in list order in memory, built once by a scan of
 * the files (`SessionListIndex`, with its `index.json` snapshot) and kept current through the
 * shared journal — this process's writes and every other process's alike. A page costs a
 * journal read, a binary search and the page's rows (each checked to still have its file),
 * not a stat of every session. When the journal was replaced (rotation) or a write to it
 * failed, the files are rescanned in the background while pages go on from what is known.
 */
export class LiveSessionIndex {
  readonly #scan: SessionListIndex;
  readonly #journal: SessionJournal;
  readonly #fileOf: (sessionId: string) => string | undefined;
  readonly #logger: Logger;
  #sorted: SortedSessions | undefined;
  #building: Promise<void> | undefined;
  #refreshing: Promise<void> | undefined;
  /** While a background rescan runs: the records applied meanwhile, replayed onto its result. */
  #sinceRescan: JournalRecord[] | undefined;
  #stale = false;
  /** Sessions seen without a file (or with an empty one), and since when. */
  readonly #absentSince = new Map<string, number>();

  constructor(scan: SessionListIndex, journal: SessionJournal, fileOf: (sessionId: string) => string | undefined, logger: Logger) {
    this.#scan = scan;
    this.#journal = journal;
    this.#fileOf = fileOf;
    this.#logger = logger;
  }

  /** One page of the list; the first call scans the files (the cold start). */
  async page(query: PageQuery): Promise<ListSessionsResult> {
    await this.#current();
    const sorted = this.#sorted!;
    const rows: SessionSummary[] = [];
    const walk = sorted.walk(query);
    for (let done = false; !done && rows.length <= query.limit; ) {
      const batch: SessionSummary[] = [];
      while (batch.length < Math.min(VERIFY_BATCH, query.limit + 1 - rows.length)) {
        const next = walk.next();
        if (next.done === true) {
          done = true;
          break;
        }
        batch.push(next.value);
      }
      const present = await Promise.all(batch.map((s) => this.#hasFile(s.sessionId)));
      batch.forEach((summary, i) => (present[i] ? rows.push(summary) : this.#absent(sorted, summary.sessionId)));
    }
    return pageOf(rows, query.limit);
  }

  /** Records a change made by this process (appended to the journal; applied at the next page). */
  async record(records: JournalRecord[]): Promise<void> {
    try {
      await this.#journal.append(records);
    } catch (error) {
      // The change is on disk; only the other processes' (and this one's) list may miss it: rescan.
      if (!this.#stale) this.#logger.warn("the session list journal could not be written; the list will rescan the session files", { error: errorMessage(error) });
      this.#stale = true;
    }
  }

  #current(): Promise<void> {
    if (this.#sorted === undefined) {
      this.#building ??= this.#build().finally(() => (this.#building = undefined));
      return this.#building;
    }
    this.#refreshing ??= this.#refresh().finally(() => (this.#refreshing = undefined));
    return this.#refreshing;
  }

  /**
   * The cold start: the snapshot plus the journal after it when the journal still reaches back
   * there (no session file is read); otherwise a scan of the files.
   */
  async #build(): Promise<void> {
    const snapshot = await this.#scan.snapshot();
    if (snapshot?.journal) {
      this.#journal.resumeAt(snapshot.journal);
      const read = await this.#journal.readNew();
      if (!read.reset) {
        const sorted = new SortedSessions(snapshot.summaries);
        const unknown = new Set<string>();
        for (const record of read.records) applyRecord(sorted, record, unknown);
        this.#sorted = sorted;
        for (const sessionId of unknown) await this.#adopt(sessionId);
        await this.#rotateIfLarge();
        return;
      }
    }
    await this.#journal.mark();
    this.#sorted = new SortedSessions(await this.#scan.summaries(this.#journal.position));
    await this.#refresh();
  }

  async #refresh(): Promise<void> {
    if (this.#stale) {
      this.#stale = false;
      this.#rescan();
    }
    const read = await this.#journal.readNew();
    if (read.reset) {
      this.#rescan();
      return;
    }
    const unknown = new Set<string>();
    for (const record of read.records) {
      applyRecord(this.#sorted!, record, unknown);
      if ("d" in record) this.#absentSince.delete(record.d);
      this.#sinceRescan?.push(record);
    }
    for (const sessionId of unknown) await this.#adopt(sessionId);
    if (read.records.length > 0) await this.#rotateIfLarge();
  }

  /**
   * Rotates a large journal, finishes the old one, then saves a snapshot at the new one's start:
   * cold starts stay short (not while a rescan is to replace what this process knows).
   */
  async #rotateIfLarge(): Promise<void> {
    if (this.#sinceRescan !== undefined || !(await this.#journal.rotateIfLarge())) return;
    const read = await this.#journal.readNew();
    if (read.reset) return this.#rescan();
    for (const record of read.records) applyRecord(this.#sorted!, record, new Set());
    const position = this.#journal.position;
    if (position !== undefined) await this.#scan.save(this.#sorted!.values(), position);
    this.#logger.debug("session list journal rotated; snapshot saved", { sessions: this.#sorted!.size });
  }

  /** Rebuilds from the files in the background; records seen meanwhile are replayed onto the result. */
  #rescan(): void {
    if (this.#sinceRescan !== undefined) return;
    const since: JournalRecord[] = [];
    this.#sinceRescan = since;
    void this.#scan
      .summaries(this.#journal.position)
      .then((summaries) => {
        const fresh = new SortedSessions(summaries);
        for (const record of since) applyRecord(fresh, record, new Set());
        this.#sorted = fresh;
      })
      .catch((error: unknown) => {
        this.#stale = true;
        this.#logger.warn("rescanning the session files failed; will retry at the next list", { error: errorMessage(error) });
      })
      .finally(() => (this.#sinceRescan = undefined));
  }

  /** A session this index has not seen (its create record was lost): read its summary from its file. */
  async #adopt(sessionId: string): Promise<void> {
    const summary = await this.#scan.summaryOf(sessionId).catch(() => undefined);
    if (summary !== undefined) this.#sorted!.put(summary);
  }

  /** Not listed now; forgotten once absent past the grace (a crashed create, a lost delete record). */
  #absent(sorted: SortedSessions, sessionId: string): void {
    const since = this.#absentSince.get(sessionId);
    if (since === undefined) this.#absentSince.set(sessionId, Date.now());
    else if (Date.now() - since > ABSENT_GRACE_MS) {
      sorted.delete(sessionId);
      this.#absentSince.delete(sessionId);
    }
  }

  async #hasFile(sessionId: string): Promise<boolean> {
    const path = this.#fileOf(sessionId);
    if (path === undefined) return false;
    try {
      const present = (await stat(path)).size > 0;
      if (present && this.#absentSince.size > 0) this.#absentSince.delete(sessionId);
      return present;
    } catch (error) {
      if (isErrnoCode(error, "ENOENT")) return false;
      throw error;
    }
  }
}

/**
 * Applies one record. Records hold absolute values (a summary, a time, a patch's fields), so a
 * suffix of the journal replayed in order onto any state from within it ends in the same state.
 */
function applyRecord(sorted: SortedSessions, record: JournalRecord, unknown: Set<string>): void {
  if ("c" in record) {
    sorted.put(record.c);
  } else if ("d" in record) {
    sorted.delete(record.d);
  } else {
    const sessionId = "t" in record ? record.t : record.p;
    const current = sorted.get(sessionId);
    if (current === undefined) {
      unknown.add(sessionId);
      return;
    }
    sorted.put("t" in record ? { ...current, updatedAt: record.u } : patchSummary(current, record.h, record.u));
  }
}

function patchSummary(summary: SessionSummary, patch: SessionHeaderPatch, updatedAt: string): SessionSummary {
  // The header rules themselves (applyPatch), on a header that is only the summary's fields.
  const header: SessionHeader = { ...summary, additionalDirectories: [...summary.additionalDirectories], version: SESSION_FORMAT_VERSION, metadata: {} };
  return summaryOf(applyPatch(header, { ...patch, updatedAt }, updatedAt));
}
