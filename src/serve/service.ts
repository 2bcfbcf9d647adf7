import type { Logger, LoopObserver } from "../core/index.js";
import { errorMessage } from "../core/index.js";
import { auditToolCalls } from "../acp/agent/audit-requests.js";
import { AuditTrail } from "../acp/agent/audit-trail.js";
import type { PrincipalMetrics } from "../acp/agent/principal-metrics.js";
import { QuotaGate, type QuotaPolicy } from "../acp/agent/quotas.js";
import { SERVE_DEFAULTS } from "./defaults.js";
import type { ServeState } from "./state.js";

const PRUNE_EVERY_MS = 3_600_000;

export interface ServiceHookOptions {
  /** Per-principal quotas (`--quota`, token file, JWT claim). */
  quotas?: QuotaPolicy | undefined;
  /** Record the audit trail in the store (on with `--listen`). */
  audit?: boolean | undefined;
  /** Audit records older than this are pruned (at start and hourly); 0 keeps them. */
  auditRetainMs?: number | undefined;
  /** Per-principal counters of /metrics. */
  principalMetrics?: PrincipalMetrics | undefined;
}

/** What `serve` adds for many principals: the quota gate, the audit trail, their per-session observer. */
export interface ServiceHooks {
  quotas: QuotaGate | undefined;
  audit: AuditTrail | undefined;
  /** Counts a session's tokens for its principal (quota, metrics) and records its tool calls. */
  observer(principal: string, sessionId: string): LoopObserver | undefined;
  /** Writes what is queued (audit records, token counts); stops pruning. */
  close(): Promise<void>;
}

export function serviceHooks(state: ServeState, options: ServiceHookOptions, logger: Logger): ServiceHooks {
  const metrics = options.principalMetrics;
  const quotas = options.quotas ? new QuotaGate(state.quotas, options.quotas, logger, (principal, limit) => metrics?.quotaRefused(principal, limit)) : undefined;
  const audit = options.audit ? new AuditTrail({ log: state.audit, instance: state.instance, logger }) : undefined;
  const retain = options.auditRetainMs ?? SERVE_DEFAULTS.auditRetainMs;
  let pruner: NodeJS.Timeout | undefined;
  if (audit && retain > 0) {
    const prune = (): void => {
      state.audit.prune(new Date(Date.now() - retain)).then(
        (gone) => gone > 0 && logger.info(`audit: pruned ${gone} record(s) older than the retention`),
        (error: unknown) => logger.warn("audit: pruning failed", { error: errorMessage(error) }),
      );
    };
    prune();
    pruner = setInterval(prune, PRUNE_EVERY_MS);
    pruner.unref();
  }
  return {
    quotas,
    audit,
    observer(principal, sessionId) {
      if (!quotas && !audit && !metrics) return undefined;
      const tools = audit ? auditToolCalls(audit, principal, sessionId) : undefined;
      return {
        handleEvent(observed) {
          const { event } = observed;
          if (event.type === "usage") {
            quotas?.addTokens(principal, event.usage.inputTokens + event.usage.outputTokens);
            metrics?.tokens(principal, event.usage.inputTokens, event.usage.outputTokens);
          }
          tools?.handleEvent(observed);
        },
      };
    },
    async close() {
      clearInterval(pruner);
      await audit?.close();
      await quotas?.close();
    },
  };
}
