import type { Attributes, Context, ContextManager, Span, SpanOptions, TextMapGetter, TextMapSetter } from "@opentelemetry/api";
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

/**
 * The context manager tracing installs: no async hooks. On Node 20 an AsyncLocalStorage-based
 * manager turns on promise hooks for the whole process, and a streaming turn makes ~35 promises
 * per text delta: +50 % CPU with tracing on, even with nothing sampled (docs/benchmarks.md).
 * Here `with` makes a context active for the synchronous extent of its callback only; code that
 * starts spans after an `await` carries its context explicitly (`activeContext()` captured
 * first, `inContext(captured, …)`), which the turn, the loop, tool calls and client requests do.
 * Outside any `with`, the ambient context is active: the CLI command's root span.
 */
export class SyncContextManager implements ContextManager {
  #current: Context | undefined;
  #ambient: Context = ROOT_CONTEXT;

  active(): Context {
    return this.#current ?? this.#ambient;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const previous = this.#current;
    this.#current = ctx;
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.#current = previous;
    }
  }

  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== "function") return target;
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the bound function keeps its own `this`
    const manager = this;
    const fn = target as unknown as (...args: unknown[]) => unknown;
    return function (this: unknown, ...args: unknown[]) {
      return manager.with(ctx, () => fn.apply(this, args));
    } as unknown as T;
  }

  /** The context active outside any `with` (a CLI command's root span), until reset. */
  setAmbient(ctx: Context): void {
    this.#ambient = ctx;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.#current = undefined;
    this.#ambient = ROOT_CONTEXT;
    return this;
  }
}

/** The active context, to carry across an `await` (see SyncContextManager). */
export function activeContext(): Context {
  return context.active();
}

/** `parent` (default: the active context) with `span` as its span: the context of the span's children. */
export function contextWith(span: Span, parent: Context = context.active()): Context {
  return trace.setSpan(parent, span);
}

/** The active context when it has a span, else `fallback` (a context captured earlier). */
export function activeContextOr(fallback: Context): Context {
  const active = context.active();
  return trace.getSpan(active) ? active : fallback;
}

/** Runs `fn` with `ctx` active (its synchronous extent; see SyncContextManager). */
export function inContext<T>(ctx: Context, fn: () => T): T {
  return context.with(ctx, fn);
}

/**
 * `target` whose methods run with `ctx` active, so requests they start after the caller's
 * awaits (a tool's file reads and writes) are children of the span active when it was bound.
 * Returns `target` itself when there is no span to carry.
 */
export function bindMethods<T extends object>(target: T, ctx: Context): T {
  if (!trace.getSpan(ctx)) return target;
  return new Proxy(target, {
    get(object, key) {
      const value: unknown = Reflect.get(object, key, object);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => context.with(ctx, () => (value as (...a: unknown[]) => unknown).apply(object, args));
    },
  });
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
