import { context, propagation, trace } from "@opentelemetry/api";

import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Context } from "@opentelemetry/api";
import { SyncContextManager, activeContext, bindMethods, createStderrLogger, inContext, extractTraceMeta, injectTraceMeta, startSpan, withSpanActive } from "../../src/core/index.js";
import { parseResourceAttributes, tracingEnvConfig } from "../../src/core/tracing-setup.js";
import { redactSecrets } from "../../src/core/redact.js";

/** An in-memory provider for one test; the globals are reset afterwards (workers share modules). */
function inMemoryTracing(): InMemorySpanExporter {
  const exporter = new InMemorySpanExporter();
  context.setGlobalContextManager(new SyncContextManager());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  return exporter;
}

afterEach(() => {
  trace.disable();
  context.disable();
  propagation.disable();
});

describe("tracing helpers", () => {
  it("off (no provider): spans do not record, _meta is left alone, log lines carry no ids", () => {
    const span = startSpan("x");
    expect(span.isRecording()).toBe(false);
    const meta = { other: 1 };
    expect(withSpanActive(span, () => injectTraceMeta(meta))).toBe(meta);
    const write = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    withSpanActive(span, () => createStderrLogger("info").info("hello", { a: 1 }));
    expect(String(write.mock.calls[0]?.[0])).toBe('[agentkit-acp] info: hello {"a":1}\n');
    write.mockRestore();
  });

  it("on: _meta gets traceparent, it round-trips, a malformed one gives no parent, log lines carry trace_id and span_id", () => {
    const exporter = inMemoryTracing();
    const span = startSpan("parent");
    const meta = withSpanActive(span, () => injectTraceMeta({ other: 1 })) as Record<string, unknown>;
    const { traceId, spanId } = span.spanContext();
    expect(meta).toEqual({ other: 1, traceparent: `00-${traceId}-${spanId}-01` });
    expect(trace.getSpanContext(extractTraceMeta(meta))).toMatchObject({ traceId, spanId, isRemote: true });
    expect(trace.getSpanContext(extractTraceMeta({ traceparent: "00-zz-yy-01" }))).toBeUndefined();
    expect(trace.getSpanContext(extractTraceMeta("nonsense"))).toBeUndefined();
    const write = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    withSpanActive(span, () => createStderrLogger("info").warn("inside"));
    expect(JSON.parse(String(write.mock.calls[0]?.[0]).replace(/^[^{]*/, ""))).toEqual({ trace_id: traceId, span_id: spanId });
    write.mockRestore();
    span.end();
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(["parent"]);
  });

  it("reads the standard environment: off by default, OTLP endpoint and protocol, clear errors for what is not offered", () => {
    expect(tracingEnvConfig({})).toBeUndefined();
    expect(tracingEnvConfig({ OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://h:4318" })).toBeUndefined();
    expect(tracingEnvConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://h:4318/" })).toEqual({ url: "http://h:4318/v1/traces", protocol: "http/protobuf" });
    expect(tracingEnvConfig({ OTEL_TRACES_EXPORTER: "otlp" })).toEqual({ url: "http://localhost:4318/v1/traces", protocol: "http/protobuf" });
    expect(tracingEnvConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://t/x", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" })).toEqual({ url: "http://t/x", protocol: "http/json" });
    expect(() => tracingEnvConfig({ OTEL_TRACES_EXPORTER: "zipkin" })).toThrow(/not supported: use "otlp" or "none"/);
    expect(() => tracingEnvConfig({ OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toThrow(/http\/protobuf/);
    expect(parseResourceAttributes("deployment.environment=prod, team=a%20b,broken,=x")).toEqual({ "deployment.environment": "prod", team: "a b" });
  });

  it("redacts secret-shaped text (captured content) and leaves ordinary text alone", () => {
    const cases: Array<[string, string]> = [
      ["key sk-ant-api03-AbCdEfGhIjKlMnOpQrSt done", "key [redacted] done"],
      ["Authorization: Bearer abc.def-ghi_jkl", "Authorization: Bearer [redacted]"],
      ["aws AKIAIOSFODNN7EXAMPLE", "aws [redacted]"],
      ["gh ghp_0123456789abcdefghijABCDEFGHIJ", "gh [redacted]"],
      ["jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.sig", "jwt [redacted]"],
      ['{"api_key":"s3cr3t-value","n":1}', '{"api_key":"[redacted]","n":1}'],
      ["password=hunter22 next", "password=[redacted] next"],
      ["-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----", "[redacted]"],
      ["a token of 3 tasks, ask-me-later", "a token of 3 tasks, ask-me-later"],
    ];
    for (const [input, expected] of cases) expect(redactSecrets(input)).toBe(expected);
  });

  it("the context manager has no async hooks: a context is active for a callback's synchronous extent; captured, it is carried across awaits", async () => {
    inMemoryTracing();
    const span = startSpan("turn");
    const parentOf = (child: ReturnType<typeof startSpan>) => (child as unknown as { parentSpanContext?: { spanId: string } }).parentSpanContext?.spanId;
    let captured: Context | undefined;
    await withSpanActive(span, async () => {
      captured = activeContext();
      expect(parentOf(startSpan("sync"))).toBe(span.spanContext().spanId);
      await Promise.resolve();
      // After an await the synchronous extent is over: only a captured context carries on.
      expect(parentOf(startSpan("lost"))).toBeUndefined();
      expect(parentOf(inContext(captured, () => startSpan("carried")))).toBe(span.spanContext().spanId);
    });
    // Methods bound to a context start their spans in it, whenever they are called.
    const ops = bindMethods({ read: () => startSpan("read") }, captured!);
    expect(parentOf(ops.read())).toBe(span.spanContext().spanId);
    expect(bindMethods(ops, activeContext())).toBe(ops);
  });
});
