import type { Attributes, Context, Span, SpanOptions, TextMapGetter, TextMapSetter } from "@opentelemetry/api";
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace } from "@opentelemetry/api";
import { redactSecrets } from "./redact.js";

/**
 * Spans behind `@opentelemetry/api` only: with no provider registered (the default) every span is
 * the API's no-op and nothing else loads. `startTracing` (tracing-setup.ts) loads the SDK on demand.
 * Attributes follow the OpenTelemetry GenAI semantic conventions v1.37.0 (docs/tracing.md).
 */
export { SpanKind, SpanStatusCode };
export type { Attributes, Context, Span };

const SCOPE = "agentkit-acp";
let captureContent = false;

function tracer() {
  return trace.getTracer(SCOPE);
}

/** Set by startTracing from OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT (opt-in, off by default). */
export function setContentCapture(on: boolean): void {
  captureContent = on;
}

/** Whether prompt text, model output and tool arguments may go on spans (redacted). */
export function contentCaptured(span: Span): boolean {
  return captureContent && span.isRecording();
}

/**
 * Captured content as a span attribute value: strings as they are, anything else as JSON, with
 * secret-shaped parts (API keys, bearer tokens, …) redacted — the same function the inspector uses.
 */
export function capturedText(value: unknown): string {
  let text: string;
  try {
    text = typeof value === "string" ? value : (JSON.stringify(value) ?? "");
  } catch {
    text = "[unserializable]";
  }
  return redactSecrets(text);
}

/** Starts a span as a child of the active (or given) context; the caller ends it. */
export function startSpan(name: string, options?: SpanOptions, parent?: Context): Span {
  return tracer().startSpan(name, options, parent ?? context.active());
}

/** Runs `fn` with `span` active, so spans started inside (across awaits) are its children. */
export function withSpanActive<T>(span: Span, fn: () => T): T {
  return context.with(trace.setSpan(context.active(), span), fn);
}

/** Marks the span failed with the error's type (`error.type`) and message. */
export function recordSpanError(span: Span, error: unknown, type?: string): void {
  if (!span.isRecording()) return;
  const errorType = type ?? errorTypeOf(error);
  span.setAttribute("error.type", errorType);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

export function errorTypeOf(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" || typeof code === "number") return String(code);
    return error.name || "Error";
  }
  return "_OTHER";
}

/**
 * Runs `fn` inside a new active span, ending it when `fn` settles; a throw marks it failed.
 * `attributes` is a function so that nothing is built when the span does not record.
 */
export async function inSpan<T>(
  name: string,
  kind: SpanKind,
  attributes: (() => Attributes) | undefined,
  fn: (span: Span) => Promise<T> | T,
  parent?: Context,
): Promise<T> {
  const span = startSpan(name, { kind }, parent);
  if (attributes && span.isRecording()) span.setAttributes(attributes());
  try {
    return await withSpanActive(span, () => fn(span));
  } catch (error) {
    recordSpanError(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** The active span's ids, for log lines; undefined outside a recording span. */
export function activeTraceIds(): { trace_id: string; span_id: string } | undefined {
  const span = trace.getActiveSpan();
  if (!span || !span.isRecording()) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** The trace id of the active span, if any (also for non-recording, propagated contexts). */
export function activeTraceId(): string | undefined {
  const span = trace.getActiveSpan();
  return span && trace.isSpanContextValid(span.spanContext()) ? span.spanContext().traceId : undefined;
}

const TRACE_KEYS = ["traceparent", "tracestate", "baggage"] as const;

const metaSetter: TextMapSetter<Record<string, unknown>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};
const metaGetter: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    return typeof value === "string" ? value : undefined;
  },
};

/**
 * `_meta` with the active context's W3C trace context (`traceparent`, `tracestate`, `baggage`, the
 * keys ACP and MCP reserve) added; the same object when there is nothing to carry.
 */
export function injectTraceMeta<M extends Record<string, unknown>>(meta: M | undefined | null): M | Record<string, unknown> | undefined {
  const active = context.active();
  if (!trace.getSpan(active)) return meta ?? undefined;
  const carrier: Record<string, unknown> = {};
  propagation.inject(active, carrier, metaSetter);
  if (Object.keys(carrier).length === 0) return meta ?? undefined;
  return { ...(meta ?? {}), ...carrier };
}

/**
 * The remote parent carried in a request's `_meta` (ROOT_CONTEXT when none, or when it is
 * malformed: the propagator ignores what does not parse, and the request goes on).
 */
export function extractTraceMeta(meta: unknown): Context {
  if (typeof meta !== "object" || meta === null || !TRACE_KEYS.some((k) => k in meta)) return ROOT_CONTEXT;
  try {
    return propagation.extract(ROOT_CONTEXT, meta as Record<string, unknown>, metaGetter);
  } catch {
    return ROOT_CONTEXT;
  }
}

/** The active span (the API's no-op one when tracing is off), if any. */
export function activeSpan(): Span | undefined {
  return trace.getActiveSpan();
}
