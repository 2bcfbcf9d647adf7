import { UsageError } from "./usage.js";

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `30d`, `12h`, `90m`, `45s`, `2w` (or `0`) in milliseconds; UsageError naming the flag otherwise. */
export function parseDurationMs(text: string, flag: string): number {
  const match = /^(\d{1,9})([smhdw])?$/.exec(text.trim());
  if (!match || (match[2] === undefined && match[1] !== "0")) throw new UsageError(`${flag} takes a duration such as 30d, 12h, 90m or 45s (got "${text}")`);
  return Number(match[1]) * (match[2] === undefined ? 0 : UNITS[match[2]]!);
}

/** A duration back from now (`--since 1h`) or an ISO time (`--since 2026-12-01T00:00:00Z`). */
export function parseSince(text: string, flag: string, now = Date.now()): Date {
  if (/^\d{4}-\d{2}-\d{2}/.test(text.trim())) {
    const at = Date.parse(text.trim());
    if (Number.isNaN(at)) throw new UsageError(`${flag} "${text}" is not an ISO time; use e.g. 2026-12-01T09:00:00Z or a duration such as 1h`);
    return new Date(at);
  }
  try {
    return new Date(now - parseDurationMs(text, flag));
  } catch {
    throw new UsageError(`${flag} takes a duration back from now (30d, 12h, 90m, 45s) or an ISO time (got "${text}")`);
  }
}
