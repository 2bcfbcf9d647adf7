import { AgentKitError } from "../../core/index.js";
import { redactStoreUrl as redact } from "../store-url.js";

export { redact };

// Kept apart from the driver: `serve` checks a --store URL without loading pg.

/**
 * Why the PostgreSQL store failed to start or answer (`PostgresStoreError.code`): a bad URL, the server unreachable
 * or refusing, or a schema newer than this build.
 */
export type PostgresStoreErrorCode = "invalid_store_url" | "store_unavailable" | "store_schema_too_new";

/** Start-up and availability failures of the PostgreSQL store, each saying what to fix. */
export class PostgresStoreError extends AgentKitError {
  override readonly code: PostgresStoreErrorCode;
  constructor(code: PostgresStoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = "PostgresStoreError";
    this.code = code;
  }
}

/** Checks a store URL before connecting; the message says what a good one looks like. */
export function parsePostgresUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new PostgresStoreError("invalid_store_url", `store URL ${JSON.stringify(redact(url))} is not a URL; use postgres://USER:PASSWORD@HOST:PORT/DATABASE`);
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
    throw new PostgresStoreError("invalid_store_url", `store URL must start with postgres:// or postgresql://, got ${JSON.stringify(parsed.protocol)}; use postgres://USER:PASSWORD@HOST:PORT/DATABASE`);
  }
  if (parsed.hostname === "" && !parsed.searchParams.has("host")) {
    throw new PostgresStoreError("invalid_store_url", `store URL ${JSON.stringify(redact(url))} names no host; use postgres://USER:PASSWORD@HOST:PORT/DATABASE`);
  }
  return parsed;
}
