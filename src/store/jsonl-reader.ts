import type { FileHandle } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";
import type { SessionHeader, SessionReader, StoredItem } from "./types.js";
import { SessionStoreError } from "./types.js";
import { openIfPresent } from "./durable-fs.js";
import { SessionRecordParser, parseHeader } from "./records.js";

/** Bytes read per chunk: a few hundred typical records. */
const CHUNK_BYTES = 256 * 1024;

/**
 * Opens a session file for reading record by record. Only the bytes present when it is opened
 * are read (its size is taken under the file lock): an append made meanwhile is not half read.
 * Undefined when the file is missing or has no complete header line.
 */
export async function openJsonlReader(
  path: string,
  sessionId: string,
  locked: <T>(run: () => Promise<T>) => Promise<T>,
  report: (warnings: string[]) => void,
): Promise<SessionReader | undefined> {
  // Opened, sized and its header read under the file's lock (queued in call order like `load`):
  // the header is the one written before every write queued earlier.
  return locked(async () => {
    const handle = await openIfPresent(path);
    if (handle === undefined) return undefined;
    try {
      const lines = new LineChunks(handle, (await handle.stat()).size);
      const first = await lines.next();
      if (first === undefined) {
        await handle.close();
        return undefined;
      }
      const created = parseHeader(first, path);
      if (created.sessionId !== sessionId) throw new SessionStoreError("corrupt_session", `${path} holds session ${JSON.stringify(created.sessionId)}, not ${JSON.stringify(sessionId)}`);
      return new JsonlReader(handle, lines, new SessionRecordParser(structuredClone(created), path), created, report);
    } catch (error) {
      await handle.close();
      throw error;
    }
  });
}

class JsonlReader implements SessionReader {
  readonly created: SessionHeader;
  readonly #handle: FileHandle;
  readonly #lines: LineChunks;
  readonly #parser: SessionRecordParser;
  #closed = false;

  readonly #report: (warnings: string[]) => void;

  constructor(handle: FileHandle, lines: LineChunks, parser: SessionRecordParser, created: SessionHeader, report: (warnings: string[]) => void) {
    this.#report = report;
    this.#handle = handle;
    this.#lines = lines;
    this.#parser = parser;
    this.created = created;
  }

  async *items(): AsyncIterable<StoredItem> {
    for (let line = await this.#lines.next(); line !== undefined; line = await this.#lines.next()) {
      const read = this.#parser.line(line, this.#lines.lineNo);
      if (read) yield read;
    }
    this.#parser.end(this.#lines.tail);
    this.#report(this.#parser.warnings);
  }

  result(): { header: SessionHeader; warnings: string[] } {
    return { header: this.#parser.header, warnings: this.#parser.warnings };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#handle.close();
  }
}

/** Complete lines of the first `end` bytes of a file, a chunk at a time; what follows the last newline is `tail`. */
class LineChunks {
  readonly #handle: FileHandle;
  readonly #end: number;
  readonly #decoder = new StringDecoder("utf8");
  #position = 0;
  #pending: string[] = [];
  #next = 0;
  #partial = "";
  #done = false;
  lineNo = 0;

  constructor(handle: FileHandle, end: number) {
    this.#handle = handle;
    this.#end = end;
  }

  get tail(): string {
    return this.#done ? this.#partial : "";
  }

  async next(): Promise<string | undefined> {
    while (this.#next >= this.#pending.length) {
      if (this.#done) return undefined;
      await this.#fill();
    }
    this.lineNo += 1;
    return this.#pending[this.#next++];
  }

  async #fill(): Promise<void> {
    const want = Math.min(CHUNK_BYTES, this.#end - this.#position);
    if (want <= 0) {
      this.#partial += this.#decoder.end();
      this.#done = true;
      return;
    }
    const buffer = Buffer.allocUnsafe(want);
    const { bytesRead } = await this.#handle.read(buffer, 0, want, this.#position);
    if (bytesRead === 0) {
      this.#partial += this.#decoder.end();
      this.#done = true;
      return;
    }
    this.#position += bytesRead;
    const parts = (this.#partial + this.#decoder.write(buffer.subarray(0, bytesRead))).split("\n");
    this.#partial = parts.pop() ?? "";
    this.#pending = parts;
    this.#next = 0;
  }
}
