import { createHash, timingSafeEqual } from "node:crypto";
import { ConfigError } from "../../core/index.js";
import { DEFAULT_PRINCIPAL } from "./principal.js";
import { parseQuotas, type QuotaLimits } from "./quota-limits.js";

/** One bearer token and the principal it stands for. */
export interface BearerToken {
  principal: string;
  token: string;
  /** The line's `quota=NAME=VALUE,…` column: this principal's limits over `--quota`. */
  quota?: QuotaLimits;
}

/** Principal names: what a log line, a metrics label or a store row can carry safely. */
const PRINCIPAL_NAME = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$/;

export function isPrincipalName(name: string): boolean {
  return PRINCIPAL_NAME.test(name);
}

/**
 * A token file: one `NAME TOKEN [quota=NAME=VALUE,…]` entry per line (`#` starts a comment
 * line; blank lines are skipped). A file whose only entry is a bare token keeps the single-token meaning (principal
 * `default`). A principal may have several tokens (rotation overlap); a token names one
 * principal. Throws a `ConfigError` naming the line (never quoting a token).
 */
export function parseTokenFile(text: string, source: string): BearerToken[] {
  const lines = text.split(/\r?\n/).map((line, i) => ({ n: i + 1, fields: line.trim().split(/\s+/).filter((f) => f !== "") }));
  const entries = lines.filter((l) => l.fields.length > 0 && !l.fields[0]!.startsWith("#"));
  if (entries.length === 0) throw new ConfigError(`${source} is empty (no token in it); put "NAME TOKEN" pairs, one per line, or one bare token in it`);
  if (entries.length === 1 && entries[0]!.fields.length === 1) return [{ principal: DEFAULT_PRINCIPAL, token: entries[0]!.fields[0]! }];
  const tokens: BearerToken[] = [];
  const seen = new Set<string>();
  for (const { n, fields } of entries) {
    const quotaField = fields.length === 3 && fields[2]!.startsWith("quota=") ? fields[2]!.slice("quota=".length) : undefined;
    if (fields.length !== 2 && quotaField === undefined) {
      throw new ConfigError(`${source} line ${n}: expected "NAME TOKEN" (two fields), found ${fields.length} (a third may only be quota=NAME=VALUE,…)`);
    }
    const [principal, token] = fields as [string, string];
    if (!isPrincipalName(principal)) throw new ConfigError(`${source} line ${n}: principal name must be 1-128 of A-Z a-z 0-9 . _ @ + - (starting with a letter or digit)`);
    if (token.length < 16) throw new ConfigError(`${source} line ${n}: the token of ${principal} is shorter than 16 characters`);
    if (seen.has(token)) throw new ConfigError(`${source} line ${n}: this token is already on an earlier line; each token names one principal`);
    seen.add(token);
    const quota = quotaField === undefined ? undefined : parseQuotas(quotaField, `${source} line ${n}: quota=`);
    tokens.push({ principal, token, ...(quota ? { quota } : {}) });
  }
  return tokens;
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/**
 * The static bearer tokens of a service. `principalOf` compares the SHA-256 digest of what was
 * sent with every entry's, in constant time and without stopping at a match, so timing tells
 * neither a token nor which entry matched. `replace` swaps the table at once (SIGHUP rotation).
 */
export class BearerTokens {
  #entries: ReadonlyArray<{ principal: string; digest: Buffer }>;

  constructor(tokens: readonly BearerToken[]) {
    this.#entries = BearerTokens.#table(tokens);
  }

  static #table(tokens: readonly BearerToken[]): ReadonlyArray<{ principal: string; digest: Buffer }> {
    if (tokens.some((t) => t.token.length === 0)) throw new ConfigError("a bearer token must not be empty");
    return tokens.map((t) => ({ principal: t.principal, digest: digest(t.token) }));
  }

  get size(): number {
    return this.#entries.length;
  }

  /** The principal names (for start-up logs; never the tokens). */
  principals(): string[] {
    return [...new Set(this.#entries.map((e) => e.principal))];
  }

  replace(tokens: readonly BearerToken[]): void {
    this.#entries = BearerTokens.#table(tokens);
  }

  principalOf(token: string): string | undefined {
    const given = digest(token);
    let found: string | undefined;
    for (const entry of this.#entries) {
      // Every entry is compared; the first match is kept without branching out of the loop.
      const same = timingSafeEqual(given, entry.digest);
      found = same && found === undefined ? entry.principal : found;
    }
    return found;
  }
}
