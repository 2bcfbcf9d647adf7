import type { StoreBackend } from "../backend.js";
import { parsePostgresUrl, redact } from "./url.js";

/** PostgreSQL behind the store registry; `pg` loads only when a store is opened. */
export const postgresBackend: StoreBackend = {
  name: "PostgreSQL",
  schemes: ["postgres", "postgresql"],
  example: "postgres://USER:PASSWORD@HOST:PORT/DATABASE",
  check: (url) => void parsePostgresUrl(url),
  async open({ url, logger, leaseTtlMs, onLeaseDeadline }) {
    const { openPostgresStore } = await import("./index.js");
    const leases = { ...(onLeaseDeadline ? { onDeadline: onLeaseDeadline } : {}), ...(leaseTtlMs !== undefined ? { ttlMs: leaseTtlMs } : {}) };
    const store = await openPostgresStore({ url, logger, leases });
    return {
      sessions: store.sessions,
      approvals: store.approvals,
      leases: store.leases,
      quotas: store.quotas,
      audit: store.audit,
      description: `sessions, approvals, session leases, quotas and the audit trail are kept in PostgreSQL at ${redact(url)} (lease holder ${store.leases.holder})`,
      ready: () => store.ready(),
      close: () => store.close(),
    };
  },
};
