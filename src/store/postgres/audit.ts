import type { AuditLog, AuditQuery, AuditRecord } from "../audit.js";
import { DEFAULT_AUDIT_QUERY_LIMIT } from "../audit.js";
import type { PostgresDatabase } from "./database.js";

/** `text` refuses NUL; a client-chosen session id may carry one. */
function clean(text: string): string {
  return text.replaceAll("\u0000", "\uFFFD");
}

/** The audit trail in `agentkit_audit`: a batch is one multi-row INSERT. */
export class PostgresAuditLog implements AuditLog {
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  async append(records: readonly AuditRecord[]): Promise<void> {
    if (records.length === 0) return;
    const values: unknown[] = [];
    const rows = records.map((r, i) => {
      values.push(r.at, clean(r.instance), clean(r.principal), r.sessionId === undefined ? null : clean(r.sessionId), clean(r.action), JSON.stringify(r.detail));
      const b = i * 6;
      return `($${b + 1}::timestamptz, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}, $${b + 6}::json)`;
    });
    await this.#db.query(`INSERT INTO ${this.#db.table("agentkit_audit")} (at, instance, principal, session_id, action, detail) VALUES ${rows.join(", ")}`, values, true);
  }

  async query(query: AuditQuery = {}): Promise<AuditRecord[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    if (query.principal !== undefined) where.push(`principal = $${values.push(query.principal)}`);
    if (query.since !== undefined) where.push(`at >= $${values.push(query.since.toISOString())}::timestamptz`);
    values.push(query.limit ?? DEFAULT_AUDIT_QUERY_LIMIT);
    const { rows } = await this.#db.query<{ at: Date; instance: string; principal: string; session_id: string | null; action: string; detail: Record<string, unknown> }>(
      `SELECT at, instance, principal, session_id, action, detail FROM ${this.#db.table("agentkit_audit")}
       ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY at, id LIMIT $${values.length}`,
      values,
    );
    return rows.map((r) => ({
      at: r.at.toISOString(),
      instance: r.instance,
      principal: r.principal,
      ...(r.session_id !== null ? { sessionId: r.session_id } : {}),
      action: r.action,
      detail: r.detail,
    }));
  }

  async prune(before: Date): Promise<number> {
    const { rowCount } = await this.#db.query(`DELETE FROM ${this.#db.table("agentkit_audit")} WHERE at < $1::timestamptz`, [before.toISOString()], true);
    return rowCount ?? 0;
  }
}
