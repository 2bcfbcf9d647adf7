import type { LoopObserver, ObservedEvent } from "../../core/index.js";
import type { AcpAuditSink } from "./audit-trail.js";

/** Requests recorded when they succeed (what a principal did); every failed request is recorded as `refused`. */
const RECORDED = new Set([
  "session/new",
  "session/load",
  "session/resume",
  "session/fork",
  "session/delete",
  "session/close",
  "session/prompt",
  "session/set_mode",
  "session/set_config_option",
  "session/set_model",
  "session/archive",
  "session/unarchive",
  "providers/set",
  "providers/disable",
  "logout",
]);

type Params = Record<string, unknown> | undefined;

/** Small, non-secret facts of a request (never prompt text or headers). */
function details(method: string, params: Params, result: unknown): Record<string, unknown> {
  const r = (result ?? {}) as Record<string, unknown>;
  switch (method) {
    case "session/new":
    case "session/load":
    case "session/resume":
    case "session/fork":
      return { cwd: params?.cwd, mcpServers: Array.isArray(params?.mcpServers) ? params.mcpServers.length : undefined };
    case "session/prompt":
      return { stopReason: r.stopReason, blocks: Array.isArray(params?.prompt) ? params.prompt.length : undefined };
    case "session/set_mode":
      return { modeId: params?.modeId };
    case "session/set_config_option":
      return { configId: params?.configId, value: typeof params?.value === "string" ? params.value : undefined };
    case "session/set_model":
      return { modelId: params?.modelId };
    case "providers/set":
      return { providerId: params?.providerId, baseUrl: params?.baseUrl };
    default:
      return {};
  }
}

function refusal(method: string, error: unknown): Record<string, unknown> {
  const e = error as { code?: unknown; message?: unknown; data?: { reason?: unknown; limit?: unknown } };
  return {
    method,
    code: typeof e.code === "number" ? e.code : undefined,
    reason: typeof e.data?.reason === "string" ? e.data.reason : undefined,
    limit: typeof e.data?.limit === "string" ? e.data.limit : undefined,
    message: typeof e.message === "string" ? e.message : String(error),
  };
}

/**
 * Records the requests of one connection: who opened, loaded, deleted, prompted what (after it
 * succeeded), and every request refused (workspace, client MCP, ceiling, quota, unknown or
 * foreign session …) with its code, `data.reason` and message. Patches `onRequest` like
 * `traceIncomingRequests`, so every handler registered afterwards is covered.
 */
export function auditIncomingRequests<A extends object>(app: A, audit: AcpAuditSink, principal: string): A {
  const target = app as unknown as { onRequest: (...args: unknown[]) => unknown };
  const register = target.onRequest.bind(app);
  target.onRequest = (...args: unknown[]) => {
    const method = String(args[0]);
    const handler = args[args.length - 1] as (context: { params?: unknown }) => unknown;
    args[args.length - 1] = async (context: { params?: unknown }) => {
      const params = context.params as Params;
      const given = typeof params?.sessionId === "string" ? params.sessionId : undefined;
      try {
        const result = await handler(context);
        if (RECORDED.has(method)) {
          const opened = (result as { sessionId?: unknown } | undefined)?.sessionId;
          const sessionId = method === "session/fork" && typeof opened === "string" ? opened : (given ?? (typeof opened === "string" ? opened : undefined));
          audit.record({ principal, ...(sessionId !== undefined ? { sessionId } : {}), action: method, detail: { ...details(method, params, result), ...(method === "session/fork" ? { from: given } : {}) } });
        }
        return result;
      } catch (error) {
        audit.record({ principal, ...(given !== undefined ? { sessionId: given } : {}), action: "refused", detail: refusal(method, error) });
        throw error;
      }
    };
    register(...args);
    return app;
  };
  return app;
}

/**
 * Records each tool call of a session with its permission outcome: the client's or remembered
 * answer (`approve`, `deny`), else the mode's policy (`policy_allow`, `policy_deny`).
 */
export function auditToolCalls(audit: AcpAuditSink, principal: string, sessionId: string): LoopObserver {
  const answered = new Map<string, string>();
  return {
    handleEvent({ event }: ObservedEvent): void {
      if (event.type === "approval_resolved") {
        answered.set(event.callId, event.decision.type === "approve_with_patched_input" ? "approve" : event.decision.type);
      } else if (event.type === "tool_result") {
        const asked = answered.get(event.callId);
        answered.delete(event.callId);
        const permission = asked ?? (event.result.isError && event.result.text.startsWith("Not permitted:") ? "policy_deny" : "policy_allow");
        audit.record({ principal, sessionId, action: "tool_call", detail: { tool: event.toolName, callId: event.callId, permission, error: event.result.isError || undefined } });
      }
    },
  };
}
