import type { Attributes, Context, Span } from "../core/tracing.js";
import { SpanKind, extractTraceMeta, injectTraceMeta, recordSpanError, startSpan, withSpanActive } from "../core/tracing.js";

/**
 * Spans for ACP requests, both directions, and W3C trace context in `_meta` (`traceparent`,
 * `tracestate`, `baggage`: the keys ACP reserves). With tracing off every span is the API's no-op:
 * no attributes are built and `_meta` is left as it is.
 */

/** Whether a peer's `_meta.traceparent` parents our spans (`honor`) or is ignored (`ignore`: a new trace). */
export type InboundTraceContext = "honor" | "ignore";

function rpcAttributes(method: string, params: unknown): Attributes {
  const attributes: Attributes = { "rpc.system": "jsonrpc", "rpc.method": method, "rpc.jsonrpc.version": "2.0" };
  const sessionId = typeof params === "object" && params !== null ? (params as { sessionId?: unknown }).sessionId : undefined;
  if (typeof sessionId === "string") attributes["gen_ai.conversation.id"] = sessionId;
  return attributes;
}

function endRequestSpan(span: Span, error?: unknown): void {
  if (error !== undefined && span.isRecording()) {
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code === "number") span.setAttribute("rpc.jsonrpc.error_code", code);
    recordSpanError(span, error);
  }
  span.end();
}

/**
 * Sends one request in a CLIENT span named after the method, with the span's trace context added
 * to `params._meta`. `send` gets the params to put on the wire.
 */
export async function tracedRequest<P, R>(method: string, params: P, send: (params: P) => Promise<R>): Promise<R> {
  const span = startSpan(method, { kind: SpanKind.CLIENT });
  if (!span.isRecording()) {
    span.end();
    return send(params);
  }
  span.setAttributes(rpcAttributes(method, params));
  try {
    const result = await withSpanActive(span, () => send(withTraceMeta(params)));
    endRequestSpan(span);
    return result;
  } catch (error) {
    endRequestSpan(span, error);
    throw error;
  }
}

/** `params` with the active trace context in `_meta` (a copy; the caller's object is not changed). */
export function withTraceMeta<P>(params: P): P {
  if (typeof params !== "object" || params === null || Array.isArray(params)) return params;
  const current = (params as { _meta?: Record<string, unknown> | null })._meta;
  const meta = injectTraceMeta(current ?? undefined);
  return meta === current || meta === undefined ? params : { ...params, _meta: meta };
}

/** Runs a handler for an inbound request in a SERVER span, parented by the peer's `_meta` when honoured. */
export async function servedRequest<R>(method: string, params: unknown, inbound: InboundTraceContext, handle: () => R | Promise<R>): Promise<R> {
  const meta = typeof params === "object" && params !== null ? (params as { _meta?: unknown })._meta : undefined;
  const parent: Context | undefined = inbound === "honor" ? extractTraceMeta(meta) : extractTraceMeta(undefined);
  const span = startSpan(method, { kind: SpanKind.SERVER }, parent);
  if (span.isRecording()) span.setAttributes(rpcAttributes(method, params));
  try {
    const result = await withSpanActive(span, handle);
    endRequestSpan(span);
    return result;
  } catch (error) {
    endRequestSpan(span, error);
    throw error;
  }
}

type Handler = (context: { params?: unknown }) => unknown;

/**
 * Makes every request handler registered on `app` from now on run in a `servedRequest` span
 * (the SDK has no middleware hook; its builder's `onRequest` is the one place all handlers pass).
 */
export function traceIncomingRequests<A extends object>(app: A, inbound: InboundTraceContext): A {
  const target = app as unknown as { onRequest: (...args: unknown[]) => unknown };
  const register = target.onRequest.bind(app);
  target.onRequest = (...args: unknown[]) => {
    const method = String(args[0]);
    const handler = args[args.length - 1] as Handler;
    args[args.length - 1] = (context: { params?: unknown }) => servedRequest(method, context.params, inbound, () => handler(context));
    register(...args);
    return app;
  };
  return app;
}

/**
 * Puts the client's permission decision on the `session/request_permission` span — `span` as
 * captured (`activeSpan()`) when the handler started, before it awaited the answer.
 */
export function notePermissionDecision(span: Span | undefined, decision: string, source: string, optionKind?: string): void {
  if (!span?.isRecording()) return;
  span.setAttributes({ "agentkit.permission.decision": decision, "agentkit.permission.source": source, ...(optionKind ? { "agentkit.permission.option_kind": optionKind } : {}) });
}
