import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { decodeTraceRequest } from "./otlp-schema.js";
import type { SpanValue, TraceSpan } from "./types.js";

/** Bounds on one export request and on what a span keeps (captured content can be large). */
const MAX_BODY_BYTES = 8 * 1024 * 1024;
const MAX_TEXT = 2_000;
const MAX_ATTRIBUTES = 64;
const MAX_EVENTS = 32;
const MAX_ARRAY = 64;

type AnyValue = {
  stringValue?: string;
  intValue?: string | number | { low: number; high: number };
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
  kvlistValue?: unknown;
  bytesValue?: unknown;
};
type KeyValue = { key?: unknown; value?: AnyValue };
type OtlpSpan = Record<string, unknown>;
type OtlpRequest = { resourceSpans?: Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans?: Array<{ spans?: OtlpSpan[] }> }> };

type Clip = (text: string) => string;
const clipper =
  (max: number): Clip =>
  (text) =>
    text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;

/** 64-bit integers arrive as decimal strings, numbers, or protobufjs's {low, high}. */
function int64(v: unknown): number {
  if (typeof v === "number") return v;
  if (typeof v === "string" && /^-?\d+$/.test(v)) return Number(v);
  if (typeof v === "object" && v !== null && "low" in v && "high" in v) return Number((v as { high: number }).high) * 2 ** 32 + (Number((v as { low: number }).low) >>> 0);
  return 0;
}

/** Nanoseconds since the epoch → milliseconds (BigInt first: the nanoseconds exceed 2^53). */
function epochMs(v: unknown): number {
  if (typeof v === "string" && /^\d+$/.test(v)) return Number(BigInt(v) / 1000n) / 1000;
  return int64(v) / 1e6;
}

function plain(value: AnyValue | undefined, clip: Clip, depth = 0): SpanValue {
  if (!value || typeof value !== "object") return null;
  if (typeof value.stringValue === "string") return clip(value.stringValue);
  if (value.intValue !== undefined) return int64(value.intValue);
  if (typeof value.boolValue === "boolean") return value.boolValue;
  if (typeof value.doubleValue === "number") return value.doubleValue;
  if (value.arrayValue && depth < 4) return (value.arrayValue.values ?? []).slice(0, MAX_ARRAY).map((v) => plain(v, clip, depth + 1));
  if (value.kvlistValue !== undefined) return clip(JSON.stringify(value.kvlistValue) ?? "");
  if (value.bytesValue !== undefined) return "[bytes]";
  return null;
}

function attributes(list: unknown, clip: Clip): Record<string, SpanValue> {
  const out: Record<string, SpanValue> = {};
  if (!Array.isArray(list)) return out;
  for (const kv of (list as KeyValue[]).slice(0, MAX_ATTRIBUTES)) {
    if (typeof kv?.key === "string") out[clip(kv.key)] = plain(kv.value, clip);
  }
  return out;
}

/** OTLP/JSON carries ids as hex; protobufjs's decoder gives bytes as base64. */
function spanId(value: unknown, encoding: "hex" | "base64"): string {
  if (typeof value !== "string") return "";
  const hex = encoding === "hex" ? value.toLowerCase() : Buffer.from(value, "base64").toString("hex");
  return /^[0-9a-f]{0,32}$/.test(hex) ? hex : "";
}

function flatten(body: unknown, ids: "hex" | "base64", clip: Clip): TraceSpan[] {
  const out: TraceSpan[] = [];
  for (const resourceSpans of (body as OtlpRequest | null)?.resourceSpans ?? []) {
    const service = String(attributes(resourceSpans?.resource?.attributes, clip)["service.name"] ?? "");
    for (const scope of resourceSpans?.scopeSpans ?? []) {
      for (const span of scope?.spans ?? []) {
        const status = (span.status ?? {}) as { code?: unknown; message?: unknown };
        const events = Array.isArray(span.events) ? (span.events as Array<{ name?: unknown; timeUnixNano?: unknown }>) : [];
        out.push({
          traceId: spanId(span.traceId, ids),
          spanId: spanId(span.spanId, ids),
          parentSpanId: spanId(span.parentSpanId, ids),
          name: clip(String(span.name ?? "")),
          kind: int64(span.kind),
          service,
          start: epochMs(span.startTimeUnixNano),
          end: epochMs(span.endTimeUnixNano),
          status: int64(status.code),
          ...(typeof status.message === "string" && status.message ? { statusMessage: clip(status.message) } : {}),
          attributes: attributes(span.attributes, clip),
          events: events.slice(0, MAX_EVENTS).map((e) => ({ name: clip(String(e?.name ?? "")), time: epochMs(e?.timeUnixNano) })),
        });
      }
    }
  }
  return out;
}

/**
 * The spans of one OTLP/HTTP traces export request, in either encoding the exporters send:
 * `application/json` (OTLP/JSON) or `application/x-protobuf`. Throws on anything else. Strings
 * longer than `maxText` (default 2000) are clipped.
 */
export function decodeTraces(contentType: string, body: Uint8Array, options: { maxText?: number } = {}): TraceSpan[] {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  const clip = clipper(options.maxText ?? MAX_TEXT);
  if (type === "application/json") return flatten(JSON.parse(Buffer.from(body).toString("utf8")), "hex", clip);
  if (type === "application/x-protobuf") return flatten(decodeTraceRequest(body), "base64", clip);
  throw new Error(`unsupported content type "${contentType}": send application/json or application/x-protobuf`);
}

/** A span read back from a trace file (written by us, but a file can be edited): its shape checked. */
export function savedSpan(value: unknown): TraceSpan | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const s = value as Partial<TraceSpan>;
  const strings = [s.traceId, s.spanId, s.parentSpanId, s.name, s.service].every((x) => typeof x === "string");
  const numbers = [s.kind, s.start, s.end, s.status].every((x) => typeof x === "number");
  if (!strings || !numbers || typeof s.attributes !== "object" || s.attributes === null || !Array.isArray(s.events)) return undefined;
  return { ...(s as TraceSpan), events: s.events.filter((e) => typeof e?.name === "string" && typeof e.time === "number") };
}

export interface OtlpReceiver {
  /** Base URL to export to (traces go to `${endpoint}/v1/traces`); its path is a random secret. */
  readonly endpoint: string;
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function receive(request: IncomingMessage, response: ServerResponse, onSpans: (spans: TraceSpan[]) => void): Promise<void> {
  const type = String(request.headers["content-type"] ?? "");
  let body = await readBody(request);
  if (!body) return void response.writeHead(413).end();
  try {
    if (String(request.headers["content-encoding"] ?? "").toLowerCase() === "gzip") body = gunzipSync(body, { maxOutputLength: MAX_BODY_BYTES });
    onSpans(decodeTraces(type, body));
  } catch (error) {
    response.writeHead(400, { "content-type": "text/plain" }).end(`${error instanceof Error ? error.message : String(error)}\n`);
    return;
  }
  // An empty ExportTraceServiceResponse: `{}` in JSON, zero bytes in protobuf.
  const json = type.startsWith("application/json");
  response.writeHead(200, { "content-type": json ? "application/json" : "application/x-protobuf" }).end(json ? "{}" : undefined);
}

/**
 * An OTLP/HTTP traces receiver on loopback for the agent the inspector starts. Only
 * `POST /<secret>/v1/traces` is answered (another local process cannot guess where to send), a
 * request body is bounded (8 MiB, also once gunzipped), and spans are flattened and clipped.
 */
export async function startOtlpReceiver(onSpans: (spans: TraceSpan[]) => void, host = "127.0.0.1"): Promise<OtlpReceiver> {
  const secret = randomBytes(18).toString("base64url");
  const path = `/${secret}/v1/traces`;
  const server = createServer((request, response) => {
    if (request.method !== "POST" || request.url !== path) {
      request.resume();
      return void response.writeHead(404).end();
    }
    receive(request, response, onSpans).catch(() => response.destroy());
  });
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${host.includes(":") ? `[${host}]` : host}:${port}/${secret}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** The variables that say where an agent's traces go; a user who set one keeps it. */
const USER_TRACING_VARIABLES = ["OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED"];

/**
 * What to add to the environment of the agent the inspector starts so its traces come to the
 * receiver — only traces (the signal's own endpoint: an agent's metrics or logs do not come here),
 * exported every 200 ms so the page follows a turn. When the user already said where traces go
 * (or that they go nowhere), nothing is added and `userSet` names the variable.
 */
export function agentTracingEnv(endpoint: string, env: NodeJS.ProcessEnv): { add: Record<string, string>; userSet?: string } {
  const userSet = USER_TRACING_VARIABLES.find((name) => env[name]?.trim());
  if (userSet) return { add: {}, userSet };
  return {
    add: {
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${endpoint}/v1/traces`,
      ...(env.OTEL_BSP_SCHEDULE_DELAY?.trim() ? {} : { OTEL_BSP_SCHEDULE_DELAY: "200" }),
    },
  };
}
