import { checkStoreUrl } from "../store/backends.js";
import { UsageError } from "./usage.js";

/** What decides where sessions are kept: --store, whether --state-dir / --no-persist were given. */
export interface StoreFlags {
  store: string | undefined;
  storeGiven: boolean;
  stateDirGiven: boolean;
  noPersist?: boolean;
}

/** --store wins; AGENTKIT_STORE_URL applies unless --state-dir or --no-persist chose otherwise. The store registry checks the URL. */
export function storeUrlFrom(flags: StoreFlags, env: Readonly<Record<string, string | undefined>>): string | undefined {
  if (flags.storeGiven) {
    if (flags.noPersist) throw new UsageError("--store and --no-persist exclude each other: choose where sessions are kept");
    if (flags.stateDirGiven) throw new UsageError("--store and --state-dir exclude each other: sessions go to PostgreSQL or to files, not both");
  }
  const blank = (text: string | undefined): string | undefined => (text === undefined || text.trim() === "" ? undefined : text.trim());
  const url = blank(flags.store) ?? (flags.noPersist || flags.stateDirGiven ? undefined : blank(env.AGENTKIT_STORE_URL));
  if (flags.storeGiven && url === undefined) throw new UsageError("--store needs a URL such as postgres://USER:PASSWORD@HOST:5432/DATABASE");
  if (url === undefined) return undefined;
  try {
    checkStoreUrl(url);
  } catch (error) {
    throw new UsageError(`${flags.storeGiven ? "--store" : "AGENTKIT_STORE_URL"}: ${(error as Error).message}`);
  }
  return url;
}

const AGE_UNITS = { d: 86_400_000, h: 3_600_000, m: 60_000 } as const;

/** `30d`, `12h`, `90m` or a bare number of days → milliseconds (positive). */
export function parseAge(text: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)([dhm]?)$/.exec(text.trim());
  const value = match ? Number(match[1]) * AGE_UNITS[(match[2] || "d") as keyof typeof AGE_UNITS] : NaN;
  if (!(value > 0) || !Number.isFinite(value)) throw new UsageError(`${flag} takes an age such as 30d, 12h or 90m (a bare number is days), more than zero (got "${text}")`);
  return value;
}

/** Milliseconds as the largest whole unit `parseAge` reads: 2592000000 → `30d` (for help texts showing a default). */
export function formatAge(ms: number): string {
  const [unit, size] = Object.entries(AGE_UNITS).find(([, size]) => ms % size === 0) ?? ["m", AGE_UNITS.m];
  return `${ms / size}${unit}`;
}
