import type { Item } from "../core/index.js";
import { errorMessage } from "../core/index.js";
import type { SessionHeader, SessionHeaderPatch } from "./types.js";
import { DEFAULT_OWNER, SESSION_FORMAT_VERSION, SessionStoreError } from "./types.js";
import { applyPatch, isItem, normalizePatch } from "./header.js";

/**
 * JSONL session file, one record per line; a record counts only once its newline is on disk.
 *   {"type":"header","version":1,"sessionId":…,"cwd":…,"additionalDirectories":[…],"createdAt":…,"updatedAt":…,"title"?:…,"metadata":{…}}
 *   {"type":"item","at":<ISO time>,"item":<Item>}
 *   {"type":"header_update","at":<ISO time>,"patch":<SessionHeaderPatch>}
 * Later minor additions add fields or record types (older readers skip unknown types with a
 * warning); an incompatible change bumps `version`, which older readers refuse.
 */

export function headerLine(header: SessionHeader): string {
  return `${JSON.stringify({ type: "header", ...header })}\n`;
}

export function itemLine(item: Item, at: string): string {
  return `${JSON.stringify({ type: "item", at, item })}\n`;
}

export function headerUpdateLine(patch: SessionHeaderPatch, at: string): string {
  return `${JSON.stringify({ type: "header_update", at, patch })}\n`;
}

export interface ParsedSession {
  header: SessionHeader;
  items: Item[];
  warnings: string[];
}

/** Cheap path for `list`: an item line's time without parsing the item itself. */
const ITEM_PREFIX = /^\{"type":"item","at":"([^"\\]*)"/;

export function parseHeader(line: string, source: string): SessionHeader {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw new SessionStoreError("corrupt_session", `${source}: header line is not JSON (${errorMessage(error)})`);
  }
  const v = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
  if (v.type !== "header") throw new SessionStoreError("corrupt_session", `${source}: first record is not a header`);
  const version = v.version;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 1) {
    throw new SessionStoreError("corrupt_session", `${source}: header has no valid format version`);
  }
  if (version > SESSION_FORMAT_VERSION) {
    throw new SessionStoreError(
      "unsupported_format",
      `${source}: session format version ${version} is newer than this agentkit-acp reads (up to ${SESSION_FORMAT_VERSION}); upgrade agentkit-acp`,
    );
  }
  const strings = ["sessionId", "cwd", "createdAt", "updatedAt"] as const;
  for (const key of strings) {
    if (typeof v[key] !== "string") throw new SessionStoreError("corrupt_session", `${source}: header field ${key} is missing`);
  }
  const dirs = Array.isArray(v.additionalDirectories) ? v.additionalDirectories.filter((d): d is string => typeof d === "string") : [];
  const metadata = typeof v.metadata === "object" && v.metadata !== null && !Array.isArray(v.metadata) ? (v.metadata as Record<string, unknown>) : {};
  const header: SessionHeader = {
    version,
    sessionId: v.sessionId as string,
    owner: typeof v.owner === "string" && v.owner !== "" ? v.owner : DEFAULT_OWNER,
    cwd: v.cwd as string,
    additionalDirectories: dirs,
    createdAt: v.createdAt as string,
    updatedAt: v.updatedAt as string,
    metadata,
  };
  if (typeof v.title === "string") header.title = v.title;
  if (v.archived === true) header.archived = true;
  if (typeof v.forkedFrom === "string") header.forkedFrom = v.forkedFrom;
  return header;
}

/**
 * Reads a session file's records after its header line, one line at a time (whole-text and
 * streaming readers share it): items are returned, header updates applied to `header`, anything
 * unreadable skipped with a warning.
 */
export class SessionRecordParser {
  readonly header: SessionHeader;
  readonly warnings: string[] = [];
  readonly #source: string;
  readonly #items: boolean;

  constructor(header: SessionHeader, source: string, options: { items: boolean } = { items: true }) {
    this.header = header;
    this.#source = source;
    this.#items = options.items;
  }

  /** One complete line (without its newline); `lineNo` counts from 1 (the header). */
  line(line: string, lineNo: number): { item: Item; at: string } | undefined {
    if (line.trim().length === 0) return undefined;
    const where = `${this.#source}:${lineNo}`;
    if (!this.#items) {
      const fast = ITEM_PREFIX.exec(line);
      if (fast) {
        this.header.updatedAt = fast[1]!;
        return undefined;
      }
    }
    let record: Record<string, unknown>;
    try {
      const value: unknown = JSON.parse(line);
      if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("not an object");
      record = value as Record<string, unknown>;
    } catch (error) {
      this.warnings.push(`${where}: unreadable record skipped (${errorMessage(error)})`);
      return undefined;
    }
    const at = typeof record.at === "string" ? record.at : undefined;
    if (record.type === "item") {
      if (!isItem(record.item)) {
        this.warnings.push(`${where}: item record without a valid item skipped`);
        return undefined;
      }
      if (at !== undefined) this.header.updatedAt = at;
      return this.#items ? { item: record.item, at: at ?? this.header.updatedAt } : undefined;
    }
    if (record.type === "header_update") {
      try {
        const patch = normalizePatch((record.patch ?? {}) as SessionHeaderPatch);
        applyPatch(this.header, patch, at ?? this.header.updatedAt);
      } catch (error) {
        this.warnings.push(`${where}: invalid header update skipped (${errorMessage(error)})`);
      }
    } else {
      this.warnings.push(`${where}: unknown record type ${JSON.stringify(record.type)} skipped`);
    }
    return undefined;
  }

  /** The text after the last newline: a torn last line (a write cut short) is skipped. */
  end(tail: string): void {
    if (tail.length > 0) this.warnings.push(`${this.#source}: torn last line (${Buffer.byteLength(tail)} bytes without a newline) skipped`);
  }
}

/**
 * Replays a session file. Returns undefined when there is no complete header line (a create
 * that never finished). A torn last line, an unreadable middle line or an unknown record type
 * is skipped with a warning; a bad header or a newer format throws. With `items: false` item
 * records are not parsed (for listing).
 */
export function parseSessionText(text: string, source: string, options: { items: boolean } = { items: true }): ParsedSession | undefined {
  const lines = text.split("\n");
  const tail = lines.pop() ?? "";
  const first = lines[0];
  if (first === undefined) return undefined;
  const parser = new SessionRecordParser(parseHeader(first, source), source, options);
  parser.end(tail);
  const items: Item[] = [];
  for (let index = 1; index < lines.length; index++) {
    const read = parser.line(lines[index]!, index + 1);
    if (read) items.push(read.item);
  }
  return { header: parser.header, items, warnings: parser.warnings };
}
