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
 * Replays a session file. Returns undefined when there is no complete header line (a create
 * that never finished). A torn last line, an unreadable middle line or an unknown record type
 * is skipped with a warning; a bad header or a newer format throws. With `items: false` item
 * records are not parsed (for listing).
 */
export function parseSessionText(text: string, source: string, options: { items: boolean } = { items: true }): ParsedSession | undefined {
  const warnings: string[] = [];
  const lines = text.split("\n");
  const tail = lines.pop() ?? "";
  if (tail.length > 0) warnings.push(`${source}: torn last line (${Buffer.byteLength(tail)} bytes without a newline) skipped`);
  const first = lines[0];
  if (first === undefined) return undefined;
  const header = parseHeader(first, source);
  const items: Item[] = [];
  for (let index = 1; index < lines.length; index++) {
    const line = lines[index]!;
    if (line.trim().length === 0) continue;
    const where = `${source}:${index + 1}`;
    if (!options.items) {
      const fast = ITEM_PREFIX.exec(line);
      if (fast) {
        header.updatedAt = fast[1]!;
        continue;
      }
    }
    let record: Record<string, unknown>;
    try {
      const value: unknown = JSON.parse(line);
      if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("not an object");
      record = value as Record<string, unknown>;
    } catch (error) {
      warnings.push(`${where}: unreadable record skipped (${errorMessage(error)})`);
      continue;
    }
    const at = typeof record.at === "string" ? record.at : undefined;
    if (record.type === "item") {
      if (!isItem(record.item)) {
        warnings.push(`${where}: item record without a valid item skipped`);
        continue;
      }
      if (options.items) items.push(record.item);
      if (at !== undefined) header.updatedAt = at;
    } else if (record.type === "header_update") {
      try {
        const patch = normalizePatch((record.patch ?? {}) as SessionHeaderPatch);
        applyPatch(header, patch, at ?? header.updatedAt);
      } catch (error) {
        warnings.push(`${where}: invalid header update skipped (${errorMessage(error)})`);
      }
    } else {
      warnings.push(`${where}: unknown record type ${JSON.stringify(record.type)} skipped`);
    }
  }
  return { header, items, warnings };
}
