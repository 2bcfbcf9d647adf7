import type { ApprovalMemoryEntry, ApprovalMemoryRecord, ApprovalMemoryStore } from "../approval-store.js";
import { checkApprovalKey, cleanApprovalEntry, normalizeWorkspaceRoot, validApprovalEntry } from "../approval-store.js";
import type { PostgresDatabase } from "./database.js";

/**
 * Remembered approval answers in PostgreSQL, one row per (workspace root, key), shared by every
 * instance on the database. Same rules as the file store: roots compared after realpath, entries
 * validated on the way in and out, lists sorted by key.
 */
export class PostgresApprovalMemoryStore implements ApprovalMemoryStore {
  readonly #db: PostgresDatabase;
  readonly #table: string;

  constructor(db: PostgresDatabase) {
    this.#db = db;
    this.#table = db.table("agentkit_approvals");
  }

  async get(root: string, key: string): Promise<ApprovalMemoryEntry | undefined> {
    checkApprovalKey(key);
    const { rows } = await this.#db.query<{ entry: unknown }>(`SELECT entry FROM ${this.#table} WHERE root = $1 AND key = $2`, [await normalizeWorkspaceRoot(root), key]);
    return rows[0] ? cleanApprovalEntry(rows[0].entry) : undefined;
  }

  async set(root: string, key: string, entry: ApprovalMemoryEntry): Promise<void> {
    checkApprovalKey(key);
    const clean = validApprovalEntry(entry);
    await this.#db.query(
      `INSERT INTO ${this.#table} (root, key, entry) VALUES ($1, $2, $3) ON CONFLICT (root, key) DO UPDATE SET entry = EXCLUDED.entry`,
      [await normalizeWorkspaceRoot(root), key, JSON.stringify(clean)],
      true,
    );
  }

  async delete(root: string, key: string): Promise<boolean> {
    checkApprovalKey(key);
    const result = await this.#db.query(`DELETE FROM ${this.#table} WHERE root = $1 AND key = $2`, [await normalizeWorkspaceRoot(root), key], true);
    return (result.rowCount ?? 0) > 0;
  }

  async clear(root?: string): Promise<void> {
    if (root === undefined) await this.#db.query(`DELETE FROM ${this.#table}`, [], true);
    else await this.#db.query(`DELETE FROM ${this.#table} WHERE root = $1`, [await normalizeWorkspaceRoot(root)], true);
  }

  async list(root: string): Promise<ApprovalMemoryRecord[]> {
    const { rows } = await this.#db.query<{ key: string; entry: unknown }>(`SELECT key, entry FROM ${this.#table} WHERE root = $1`, [await normalizeWorkspaceRoot(root)]);
    const records: ApprovalMemoryRecord[] = [];
    for (const row of rows) {
      const entry = cleanApprovalEntry(row.entry);
      if (entry) records.push({ key: row.key, entry });
    }
    return records.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }
}
