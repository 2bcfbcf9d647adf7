import { createServer, type IncomingMessage, type Server } from "node:http";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { afterEachTest } from "./after-each.js";

/** One received span, flattened: ids in hex, attributes as plain values. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  events: string[];
  status: number;
}

export interface OtlpReceiver {
  /** Base URL (OTEL_EXPORTER_OTLP_ENDPOINT); traces arrive at /v1/traces. */
  url: string;
  spans: ReceivedSpan[];
  /** Content types of the requests received ("application/json", "application/x-protobuf"). */
  contentTypes: Set<string>;
  /** Answers the requests held so far and every later one at once (see `hold`). */
  release(): void;
  close(): Promise<void>;
}

interface ProtoRoot {
  opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: { decode(bytes: Uint8Array): unknown; toObject(message: unknown, options: object): unknown } } } } } };
}

// The OTLP protobuf schema, as the OpenTelemetry transformer package generated it (protobufjs):
// no hand-written decoding. Loaded only when a protobuf request arrives.
let protoRoot: ProtoRoot | undefined;
function decodeProtobuf(bytes: Buffer): unknown {
  protoRoot ??= createRequire(import.meta.url)("otlp-proto-decoder/build/src/generated/root.js") as ProtoRoot;
  const type = protoRoot.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
  return type.toObject(type.decode(bytes), { bytes: String, longs: String, enums: Number, defaults: false });
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number; arrayValue?: { values?: AnyValue[] } };

function plain(value: AnyValue | undefined): unknown {
  if (!value) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(plain);
  return undefined;
}

function attributes(list: Array<{ key: string; value?: AnyValue }> | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, plain(a.value)]));
}

// OTLP/JSON carries ids in hex; the protobuf decoder gives bytes as base64.
function flatten(body: unknown, ids: "hex" | "base64"): ReceivedSpan[] {
  const id = (value: unknown): string => (typeof value !== "string" ? "" : ids === "hex" ? value : Buffer.from(value, "base64").toString("hex"));
  const out: ReceivedSpan[] = [];
  const request = body as { resourceSpans?: Array<{ resource?: { attributes?: [] }; scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }> }> };
  for (const resourceSpans of request.resourceSpans ?? []) {
    const service = String(attributes(resourceSpans.resource?.attributes)["service.name"] ?? "");
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        out.push({
          service,
          traceId: id(span.traceId),
          spanId: id(span.spanId),
          parentSpanId: id(span.parentSpanId),
          name: String(span.name ?? ""),
          kind: Number(span.kind ?? 0),
          attributes: attributes(span.attributes as Array<{ key: string; value?: AnyValue }>),
          events: ((span.events as Array<{ name: string }> | undefined) ?? []).map((e) => e.name),
          status: Number((span.status as { code?: number } | undefined)?.code ?? 0),
        });
      }
    }
  }
  return out;
}

async function body(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const open = new Set<Server>();
afterEachTest(async () => {
  await Promise.all([...open].map((server) => new Promise((resolve) => server.close(resolve))));
  open.clear();
});

/**
 * A real OTLP/HTTP traces receiver on loopback (port 0): http/json and http/protobuf. Closed after
 * the test. With `hold`, a collector that hangs: it reads each request (its spans are counted)
 * but answers none until `release()` — the exporter's requests time out meanwhile.
 */
export async function startOtlpReceiver(options: { hold?: boolean } = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes = new Set<string>();
  let held: Array<() => void> | undefined = options.hold ? [] : undefined;
  const server: Server = createServer((request, response) => {
    void body(request).then((bytes) => {
      const type = String(request.headers["content-type"] ?? "").split(";")[0]!.trim();
      if (request.method !== "POST" || request.url !== "/v1/traces") {
        response.writeHead(404).end();
        return;
      }
      contentTypes.add(type);
      try {
        spans.push(...(type === "application/json" ? flatten(JSON.parse(bytes.toString("utf8")), "hex") : flatten(decodeProtobuf(bytes), "base64")));
      } catch (error) {
        response.writeHead(400).end(String(error));
        return;
      }
      const answer = (): void => void response.writeHead(200, { "content-type": type }).end(type === "application/json" ? "{}" : undefined);
      if (held) held.push(answer);
      else answer();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const close = (): Promise<void> => {
    open.delete(server);
    return new Promise((resolve) => server.close(() => resolve()));
  };
  open.add(server);
  const release = (): void => {
    const waiting = held ?? [];
    held = undefined;
    for (const answer of waiting) answer();
  };
  return { url: `http://127.0.0.1:${port}`, spans, contentTypes, release, close };
}
