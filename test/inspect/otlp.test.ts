import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_SPANS_PER_TRACE } from "../../src/inspect/analyze.js";
import { agentTracingEnv, readTrace, startRecording, type LocalRecorder, type ServerEvent } from "../../src/inspect/index.js";
import { tempDir } from "../support/temp.js";

let recorder: LocalRecorder | undefined;
afterEach(async () => {
  await recorder?.close();
  recorder = undefined;
});

const key = "sk-ant-0123456789abcdefghijkl";

/** Spans as an agent's SDK makes them: a turn and a model call under it, one carrying captured content with a key. */
function makeSpans(count = 0): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ "service.name": "test-agent" }), spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer("t");
  const turn = tracer.startSpan("invoke_agent a", { attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "s1" } });
  const inTurn = trace.setSpan(ROOT_CONTEXT, turn);
  const chat = tracer.startSpan("chat m", { attributes: { "gen_ai.operation.name": "chat", "gen_ai.input.messages": `use ${key}`, "gen_ai.response.finish_reasons": ["stop"], "gen_ai.usage.input_tokens": 12 } }, inTurn);
  chat.addEvent("gen_ai.first_token");
  chat.end();
  for (let i = 0; i < count; i++) tracer.startSpan(`tool ${i}`, {}, inTurn).end();
  turn.end();
  return memory.getFinishedSpans();
}

function exportWith(exporter: JsonExporter | ProtobufExporter, spans: ReadableSpan[]): Promise<number> {
  return new Promise((resolve) => exporter.export(spans, (result) => resolve(result.code)));
}

async function state(r: LocalRecorder): Promise<Extract<ServerEvent, { type: "hello" }>> {
  const url = new URL(r.url);
  return (await (await fetch(new URL(`/api/state?t=${url.searchParams.get("t") ?? ""}`, url))).json()) as Extract<ServerEvent, { type: "hello" }>;
}

describe("the inspector's OTLP receiver", () => {
  it("takes both encodings as the SDK's exporters send them; spans flattened, redacted, shown and saved", async () => {
    const file = join(tempDir(), "t.jsonl");
    recorder = await startRecording({ host: "127.0.0.1", port: 0, redact: true, otlp: true, status: { mode: "tap", agent: "a", state: "running" }, trace: { path: file, header: { agentkitInspect: 1, startedAt: 1, mode: "tap", agent: "a", redacted: true } } });
    const url = `${recorder.otlpEndpoint!}/v1/traces`;
    expect(await exportWith(new JsonExporter({ url }), makeSpans())).toBe(0);
    expect(await exportWith(new ProtobufExporter({ url }), makeSpans())).toBe(0);
    const spans = (await state(recorder)).spans;
    expect(spans).toHaveLength(4);
    for (const pair of [spans.slice(0, 2), spans.slice(2)]) {
      const [chat, turn] = pair;
      expect(turn).toMatchObject({ name: "invoke_agent a", service: "test-agent", parentSpanId: "", kind: 1, attributes: { "gen_ai.conversation.id": "s1" } });
      expect(turn!.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(chat).toMatchObject({ name: "chat m", traceId: turn!.traceId, parentSpanId: turn!.spanId, attributes: { "gen_ai.input.messages": "use [redacted]", "gen_ai.response.finish_reasons": ["stop"], "gen_ai.usage.input_tokens": 12 } });
      expect(chat!.events.map((e) => e.name)).toEqual(["gen_ai.first_token"]);
      // Epoch milliseconds: the turn encloses its model call, both just now (the SDK's start times are whole ms of Date.now()).
      expect(Math.abs(turn!.start - Date.now())).toBeLessThan(60_000);
      expect(chat!.start).toBeGreaterThanOrEqual(turn!.start);
      expect(chat!.end).toBeLessThanOrEqual(turn!.end + 1);
    }
    const saved = readTrace(file).lines.filter((l) => "spans" in l);
    expect(saved).toHaveLength(2);
    expect(readFileSync(file, "utf8")).not.toContain(key);
  });

  it("answers only its secret path, bounds a request, and keeps at most MAX_SPANS_PER_TRACE spans of a trace (saying so once)", async () => {
    recorder = await startRecording({ host: "127.0.0.1", port: 0, redact: true, otlp: true, status: { mode: "tap", agent: "a", state: "running" } });
    const endpoint = new URL(recorder.otlpEndpoint!);
    const post = (path: string, body: string | Uint8Array, type = "application/json"): Promise<number> => fetch(new URL(path, endpoint), { method: "POST", headers: { "content-type": type }, body }).then((r) => r.status);
    expect(await post("/v1/traces", "{}")).toBe(404);
    expect(await post(`${endpoint.pathname}/v1/traces`, "not json")).toBe(400);
    expect(await post(`${endpoint.pathname}/v1/traces`, "{}", "text/plain")).toBe(400);
    expect(await post(`${endpoint.pathname}/v1/traces`, new Uint8Array(9 * 1024 * 1024))).toBe(413);
    expect(await exportWith(new JsonExporter({ url: `${endpoint.href}/v1/traces` }), makeSpans(MAX_SPANS_PER_TRACE + 50))).toBe(0);
    const s = await state(recorder);
    expect(s.spans).toHaveLength(MAX_SPANS_PER_TRACE);
    expect(s.notes.filter((n) => n.note.text.includes("not kept"))).toHaveLength(1);
  });

  it("the agent's environment points its traces here unless the user's says where they go", () => {
    expect(agentTracingEnv("http://127.0.0.1:1/x", {})).toEqual({ add: { OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://127.0.0.1:1/x/v1/traces", OTEL_BSP_SCHEDULE_DELAY: "200" } });
    expect(agentTracingEnv("http://127.0.0.1:1/x", { OTEL_BSP_SCHEDULE_DELAY: "50" }).add.OTEL_BSP_SCHEDULE_DELAY).toBeUndefined();
    expect(agentTracingEnv("http://127.0.0.1:1/x", { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toEqual({ add: {}, userSet: "OTEL_EXPORTER_OTLP_ENDPOINT" });
    expect(agentTracingEnv("http://127.0.0.1:1/x", { OTEL_TRACES_EXPORTER: "none" })).toEqual({ add: {}, userSet: "OTEL_TRACES_EXPORTER" });
  });
});
