import { ConfigError } from "../../core/errors.js";

// Parsing and resolving limits: kept apart from the gate so that parsing the flags loads nothing else.

/** The per-principal limits of `serve --quota`, across every instance on the store. */
export const QUOTA_NAMES = ["sessions", "turns", "prompts-per-minute", "tokens-per-day"] as const;
export type QuotaName = (typeof QUOTA_NAMES)[number];
export type QuotaLimits = Partial<Record<QuotaName, number>>;

/**
 * `NAME=VALUE,…` (e.g. `sessions=20,turns=2,prompts-per-minute=30,tokens-per-day=2000000`):
 * whole numbers ≥ 0 (0 refuses everything). ConfigError naming what to fix.
 */
export function parseQuotas(text: string, source = "--quota"): QuotaLimits {
  const limits: QuotaLimits = {};
  for (const part of text.split(",").map((p) => p.trim())) {
    const match = /^([a-z-]+)=(\d{1,15})$/.exec(part);
    const name = match?.[1] as QuotaName | undefined;
    if (!match || name === undefined || !QUOTA_NAMES.includes(name)) {
      throw new ConfigError(`${source} takes NAME=VALUE[,NAME=VALUE] with NAME one of ${QUOTA_NAMES.join(", ")} and VALUE a whole number (got "${part}")`);
    }
    limits[name] = Number(match[2]);
  }
  return limits;
}

/** A JWT claim's quotas: an object of names to numbers, or the `--quota` text; undefined when absent or unusable. */
export function quotasFromClaim(value: unknown): QuotaLimits | undefined {
  if (value === undefined) return undefined;
  try {
    if (typeof value === "string") return parseQuotas(value, "the quota claim");
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    const text = Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(",");
    return text === "" ? {} : parseQuotas(text, "the quota claim");
  } catch {
    return undefined;
  }
}

/** JWT subjects whose claim is remembered at once (the oldest is forgotten first). */
const MAX_CLAIMED = 10_000;

/**
 * Whose limits are what: the operator's `--quota` for everyone, replaced per principal by the
 * token file's `quota=` column (re-read on SIGHUP) or by the JWT claim of its latest token.
 */
export class QuotaPolicy {
  readonly defaults: QuotaLimits;
  #fromFile = new Map<string, QuotaLimits>();
  readonly #fromClaims = new Map<string, QuotaLimits>();

  constructor(defaults: QuotaLimits) {
    this.defaults = defaults;
  }

  /** Whether any limit can apply (the gate is skipped otherwise). */
  get active(): boolean {
    return Object.keys(this.defaults).length > 0 || this.#fromFile.size > 0 || this.#fromClaims.size > 0;
  }

  setFileOverrides(overrides: ReadonlyMap<string, QuotaLimits>): void {
    this.#fromFile = new Map(overrides);
  }

  noteClaim(principal: string, limits: QuotaLimits | undefined): void {
    this.#fromClaims.delete(principal);
    if (limits === undefined) return;
    this.#fromClaims.set(principal, limits);
    if (this.#fromClaims.size > MAX_CLAIMED) this.#fromClaims.delete(this.#fromClaims.keys().next().value!);
  }

  limitsFor(principal: string): QuotaLimits {
    return { ...this.defaults, ...this.#fromFile.get(principal), ...this.#fromClaims.get(principal) };
  }
}

