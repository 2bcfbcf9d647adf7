import { createServer, type IncomingMessage, type Server } from "node:http";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { decodeTraces } from "../../src/inspect/otlp.js";
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

/** The inspector's decoding (both encodings), without its clipping of long strings. */
function flatten(type: string, bytes: Buffer): ReceivedSpan[] {
  return decodeTraces(type, bytes, { maxText: Infinity }).map((s) => ({
    service: s.service,
    traceId: s.traceId,
    spanId: s.spanId,
    parentSpanId: s.parentSpanId,
    name: s.name,
    kind: s.kind,
    attributes: s.attributes,
    events: s.events.map((e) => e.name),
    status: s.status,
  }));
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
        spans.push(...flatten(type, bytes));
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
