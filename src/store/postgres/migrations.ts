import type pg from "pg";
import { PostgresStoreError } from "./url.js";

/**
 * The schema, as numbered steps. A step is never edited once released: changes are new steps.
 * Session ids are stored as their UTF-16BE bytes (`bytea`): any string fits (even NUL, which
 * `text` refuses) and byte order equals JavaScript string order, so SQL pages in exactly the
 * order the other stores list. Items and headers are `json` (kept as written; `jsonb` refuses
 * `\u0000`, which tool output may carry).
 */
const MIGRATIONS: ReadonlyArray<(schema: string) => string> = [
  (s) => `
    CREATE TABLE "${s}".agentkit_sessions (
      id bytea PRIMARY KEY,
      cwd text NOT NULL,
      updated_at timestamptz NOT NULL,
      item_count integer NOT NULL DEFAULT 0,
      header json NOT NULL
    );
    CREATE INDEX agentkit_sessions_recent ON "${s}".agentkit_sessions (updated_at DESC, id);
    CREATE INDEX agentkit_sessions_cwd ON "${s}".agentkit_sessions (cwd, updated_at DESC, id);
    CREATE TABLE "${s}".agentkit_items (
      session_id bytea NOT NULL REFERENCES "${s}".agentkit_sessions (id) ON DELETE CASCADE,
      seq integer NOT NULL,
      at timestamptz NOT NULL,
      item json NOT NULL,
      PRIMARY KEY (session_id, seq)
    );
    CREATE TABLE "${s}".agentkit_approvals (
      root text NOT NULL,
      key text NOT NULL,
      entry json NOT NULL,
      PRIMARY KEY (root, key)
    );
    CREATE TABLE "${s}".agentkit_leases (
      session_id bytea PRIMARY KEY,
      holder text NOT NULL,
      token text NOT NULL,
      acquired_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL
    );
    CREATE INDEX agentkit_leases_token ON "${s}".agentkit_leases (token);`,
  // session/archive: the flag is also in the header, but list filters on a column (a header
  // holding \u0000 cannot be read with ->>, and the flag wants no JSON parse per row).
  (s) => `ALTER TABLE "${s}".agentkit_sessions ADD COLUMN archived boolean NOT NULL DEFAULT false;`,
  // Ownership: the principal that created a session (also in the header); sessions stored
  // before owners existed belong to the single-token principal "default". (Remembered approvals
  // need no column: their keys name the principal, and the old keys are "default"'s.)
  (s) => `
    ALTER TABLE "${s}".agentkit_sessions ADD COLUMN owner text NOT NULL DEFAULT 'default';
    CREATE INDEX agentkit_sessions_owner ON "${s}".agentkit_sessions (owner, updated_at DESC, id);`,
  // Quotas (serve --quota): slots held with an expiry the holder renews (open sessions, running
  // turns), the last minute's prompts, tokens per UTC day; and the audit trail.
  (s) => `
    CREATE TABLE "${s}".agentkit_quota_slots (
      kind text NOT NULL,
      id text NOT NULL,
      principal text NOT NULL,
      holder text NOT NULL,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (kind, id)
    );
    CREATE INDEX agentkit_quota_slots_principal ON "${s}".agentkit_quota_slots (principal, kind);
    CREATE INDEX agentkit_quota_slots_holder ON "${s}".agentkit_quota_slots (holder);
    CREATE TABLE "${s}".agentkit_quota_prompts (principal text NOT NULL, at timestamptz NOT NULL);
    CREATE INDEX agentkit_quota_prompts_principal ON "${s}".agentkit_quota_prompts (principal, at);
    CREATE TABLE "${s}".agentkit_quota_tokens (
      principal text NOT NULL,
      day date NOT NULL,
      tokens bigint NOT NULL,
      PRIMARY KEY (principal, day)
    );
    CREATE TABLE "${s}".agentkit_audit (
      id bigserial PRIMARY KEY,
      at timestamptz NOT NULL,
      instance text NOT NULL,
      principal text NOT NULL,
      session_id text,
      action text NOT NULL,
      detail json NOT NULL
    );
    CREATE INDEX agentkit_audit_at ON "${s}".agentkit_audit (at, id);
    CREATE INDEX agentkit_audit_principal ON "${s}".agentkit_audit (principal, at, id);`,
];

/** The newest schema version this build knows. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the schema to SCHEMA_VERSION in one transaction under a transaction-level advisory lock
 * keyed by the schema name: instances starting at once wait for each other, and the second finds
 * nothing to do. DDL is transactional in PostgreSQL, so a failed step leaves nothing behind.
 * `target` (tests) stops at an older version, to check the steps after it on old data.
 */
export async function migrate(client: pg.PoolClient | pg.Client, schema: string, target = SCHEMA_VERSION): Promise<void> {
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`agentkit-acp schema ${schema}`]);
    if (schema !== "public") await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await client.query(`CREATE TABLE IF NOT EXISTS "${schema}".agentkit_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ version: number | null }>(`SELECT max(version) AS version FROM "${schema}".agentkit_schema`);
    const current = rows[0]?.version ?? 0;
    if (current > SCHEMA_VERSION) {
      throw new PostgresStoreError(
        "store_schema_too_new",
        `the store's schema is version ${current}, newer than this agentkit-acp knows (${SCHEMA_VERSION}); upgrade agentkit-acp or use another database/schema`,
      );
    }
    for (let version = current + 1; version <= target; version++) {
      await client.query(MIGRATIONS[version - 1]!(schema));
      await client.query(`INSERT INTO "${schema}".agentkit_schema (version) VALUES ($1)`, [version]);
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}
