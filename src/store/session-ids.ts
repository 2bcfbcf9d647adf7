import { SessionStoreError } from "./types.js";

/** Longest encoded file stem we write; keeps `<stem>.jsonl` well under the 255-byte name limit. */
const MAX_ENCODED_LENGTH = 200;

/**
 * Maps any session id to a safe, reversible file stem: `[a-z0-9_-]` stay, every other byte
 * (including `.`, `/`, `\`, `%` and upper case, so case-insensitive file systems cannot
 * collide) becomes `%XX`. The result can never be `.`, `..` or contain a separator.
 * Returns undefined when the id is empty or too long to be a file name.
 */
export function sessionFileStem(sessionId: string): string | undefined {
  if (typeof sessionId !== "string" || sessionId.length === 0) return undefined;
  let out = "";
  for (const byte of Buffer.from(sessionId, "utf8")) {
    const isSafe = (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39) || byte === 0x5f || byte === 0x2d;
    out += isSafe ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
    if (out.length > MAX_ENCODED_LENGTH) return undefined;
  }
  return out;
}

/** True when the id can name a session in every store. */
export function isValidSessionId(sessionId: string): boolean {
  return sessionFileStem(sessionId) !== undefined;
}

export function assertValidSessionId(sessionId: string): void {
  if (!isValidSessionId(sessionId)) {
    throw new SessionStoreError("invalid_session_id", `invalid session id ${JSON.stringify(String(sessionId).slice(0, 80))}: empty or too long`);
  }
}
