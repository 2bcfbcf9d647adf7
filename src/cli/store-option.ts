import { checkStoreUrl } from "../store/backends.js";
import { UsageError } from "./usage.js";

/** --store wins; AGENTKIT_STORE_URL applies unless --state-dir or --no-persist chose otherwise. */
export function storeUrlFrom(values: Record<string, unknown>, env: Readonly<Record<string, string | undefined>>): string | undefined {
  const flag = values.store as string | undefined;
  if (flag !== undefined) {
    if (values["no-persist"] === true) throw new UsageError("--store and --no-persist exclude each other: choose where sessions are kept");
    if (values["state-dir"] !== undefined) throw new UsageError("--store and --state-dir exclude each other: sessions go to PostgreSQL or to files, not both");
  }
  const url = nonEmpty(flag) ?? (values["no-persist"] === true || values["state-dir"] !== undefined ? undefined : nonEmpty(env.AGENTKIT_STORE_URL));
  if (flag !== undefined && url === undefined) throw new UsageError("--store needs a URL such as postgres://USER:PASSWORD@HOST:5432/DATABASE");
  if (url === undefined) return undefined;
  try {
    checkStoreUrl(url);
  } catch (error) {
    throw new UsageError(`${flag !== undefined ? "--store" : "AGENTKIT_STORE_URL"}: ${(error as Error).message}`);
  }
  return url;
}

export function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

/** `30d`, `12h`, `90m` or a bare number of days → milliseconds (positive). */
export function parseAge(text: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)([dhm]?)$/.exec(text.trim());
  const value = match ? Number(match[1]) * { d: 86_400_000, h: 3_600_000, m: 60_000, "": 86_400_000 }[match[2] as "d" | "h" | "m" | ""] : NaN;
  if (!(value > 0) || !Number.isFinite(value)) throw new UsageError(`${flag} takes an age such as 30d, 12h or 90m (a bare number is days), more than zero (got "${text}")`);
  return value;
}
