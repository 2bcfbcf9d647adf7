import { parseAge } from "./store-option.js";
import { UsageError } from "./usage.js";

/** An age back from now (`--since 1h`, as `parseAge` reads it) or an ISO time (`--since 2026-12-01T00:00:00Z`). */
export function parseSince(text: string, flag: string, now = Date.now()): Date {
  if (/^\d{4}-\d{2}-\d{2}/.test(text.trim())) {
    const at = Date.parse(text.trim());
    if (Number.isNaN(at)) throw new UsageError(`${flag} "${text}" is not an ISO time; use e.g. 2026-12-01T09:00:00Z or an age such as 1h`);
    return new Date(at);
  }
  try {
    return new Date(now - parseAge(text, flag));
  } catch {
    throw new UsageError(`${flag} takes an age back from now (30d, 12h, 90m) or an ISO time (got "${text}")`);
  }
}
