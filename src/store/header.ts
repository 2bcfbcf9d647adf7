import { isAbsolute, resolve } from "node:path";
import type { Item } from "../core/index.js";
import type { CreateSessionInput, SessionHeader, SessionHeaderPatch, SessionSummary } from "./types.js";
import { DEFAULT_OWNER, SESSION_FORMAT_VERSION, SessionStoreError } from "./types.js";
import { assertValidSessionId } from "./session-ids.js";

/** Rules both stores share, so the in-memory store behaves exactly like the file store. */

export function isoTime(value: string, field: string): string {
  const date = new Date(value);
  if (typeof value !== "string" || Number.isNaN(date.getTime())) {
    throw new SessionStoreError("invalid_argument", `${field} must be an ISO date string, got ${JSON.stringify(value)}`);
  }
  return date.toISOString();
}

function absolutePath(value: string, field: string): string {
  if (typeof value !== "string" || !isAbsolute(value)) {
    throw new SessionStoreError("invalid_argument", `${field} must be an absolute path, got ${JSON.stringify(value)}`);
  }
  return resolve(value);
}

/** Relative entries resolve against `cwd`; without one (a patch) every entry must be absolute. */
function directories(values: string[], cwd: string | undefined): string[] {
  if (!Array.isArray(values)) throw new SessionStoreError("invalid_argument", "additionalDirectories must be an array of paths");
  return values.map((d) => {
    if (typeof d !== "string") throw new SessionStoreError("invalid_argument", "additionalDirectories must be an array of paths");
    return cwd === undefined ? absolutePath(d, "additionalDirectories entry") : resolve(cwd, d);
  });
}

function plainObject(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new SessionStoreError("invalid_argument", `${field} must be a plain object`);
  }
  return jsonClone(value as Record<string, unknown>);
}

/** A JSON round trip: what a file store would give back (drops undefined, rejects BigInt/cycles). */
export function jsonClone<T>(value: T): T {
  try {
    return JSON.parse(JSON.stringify(value)) as T;
  } catch (error) {
    throw new SessionStoreError("invalid_argument", "value is not JSON-serializable", { cause: error });
  }
}

export function newHeader(input: CreateSessionInput, now: Date): SessionHeader {
  assertValidSessionId(input.sessionId);
  const cwd = absolutePath(input.cwd, "cwd");
  const createdAt = input.createdAt === undefined ? now.toISOString() : isoTime(input.createdAt, "createdAt");
  const header: SessionHeader = {
    version: SESSION_FORMAT_VERSION,
    sessionId: input.sessionId,
    owner: ownerName(input.owner ?? DEFAULT_OWNER),
    cwd,
    additionalDirectories: directories(input.additionalDirectories ?? [], cwd),
    createdAt,
    updatedAt: createdAt,
    metadata: plainObject(input.metadata ?? {}, "metadata"),
  };
  if (input.title !== undefined) header.title = String(input.title);
  if (input.forkedFrom !== undefined) {
    assertValidSessionId(input.forkedFrom);
    header.forkedFrom = input.forkedFrom;
  }
  return header;
}

function ownerName(value: string): string {
  if (typeof value !== "string" || value.length === 0) throw new SessionStoreError("invalid_argument", `owner must be a non-empty string, got ${JSON.stringify(value)}`);
  return value;
}

/** Validates and normalizes a patch before it is written, so a stored patch always applies cleanly. */
export function normalizePatch(patch: SessionHeaderPatch): SessionHeaderPatch {
  const out: SessionHeaderPatch = {};
  if (patch.title !== undefined) out.title = patch.title === null ? null : String(patch.title);
  if (patch.archived !== undefined) {
    if (typeof patch.archived !== "boolean") throw new SessionStoreError("invalid_argument", "archived must be a boolean");
    out.archived = patch.archived;
  }
  if (patch.updatedAt !== undefined) out.updatedAt = isoTime(patch.updatedAt, "updatedAt");
  if (patch.cwd !== undefined) out.cwd = absolutePath(patch.cwd, "cwd");
  if (patch.additionalDirectories !== undefined) out.additionalDirectories = directories(patch.additionalDirectories, undefined);
  if (patch.metadata !== undefined) out.metadata = plainObject(patch.metadata, "metadata");
  return out;
}

/** Applies a normalized patch written at `at`; mutates and returns `header`. */
export function applyPatch(header: SessionHeader, patch: SessionHeaderPatch, at: string): SessionHeader {
  if (patch.title === null) delete header.title;
  else if (typeof patch.title === "string") header.title = patch.title;
  if (patch.archived === true) header.archived = true;
  else if (patch.archived === false) delete header.archived;
  if (typeof patch.cwd === "string") header.cwd = patch.cwd;
  if (Array.isArray(patch.additionalDirectories)) header.additionalDirectories = [...patch.additionalDirectories];
  if (patch.metadata && typeof patch.metadata === "object") header.metadata = { ...header.metadata, ...patch.metadata };
  header.updatedAt = typeof patch.updatedAt === "string" ? patch.updatedAt : at;
  return header;
}

export function summaryOf(header: SessionHeader): SessionSummary {
  const summary: SessionSummary = {
    sessionId: header.sessionId,
    owner: header.owner,
    cwd: header.cwd,
    additionalDirectories: [...header.additionalDirectories],
    createdAt: header.createdAt,
    updatedAt: header.updatedAt,
  };
  if (header.title !== undefined) summary.title = header.title;
  if (header.archived === true) summary.archived = true;
  if (header.forkedFrom !== undefined) summary.forkedFrom = header.forkedFrom;
  return summary;
}

/** Shallow shape check of a transcript item (full validation is the loop's job). */
export function isItem(value: unknown): value is Item {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.id === "string" && typeof v.role === "string" && Array.isArray(v.parts);
}

export function assertItem(value: unknown): asserts value is Item {
  if (!isItem(value)) throw new SessionStoreError("invalid_argument", "item must have a string id, a role and a parts array");
}
