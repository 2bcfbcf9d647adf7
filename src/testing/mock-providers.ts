import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import {
  anthropicChunks,
  errorBody,
  malformedChunks,
  openAIChunks,
  type MockReply,
} from "./mock-provider-formats.js";

export type { MockReply, MockToolCall, MockUsage } from "./mock-provider-formats.js";

/**
 * A scripted failure instead of a reply:
 * - `{ status, body?, headers? }` — an HTTP error in the API's own error format (`body`
 *   replaces the message or, when an object, the whole JSON body);
 * - `{ malformed: true }` — a 200 SSE stream that starts well and turns into garbage;
 * - `{ truncate: true }` — a 200 SSE stream whose socket is destroyed half-way.
 * A reply with only `{ slow: msPerChunk }` streams a long text slowly (for cancellation tests).
 */
export type MockFailure =
  | { status: number; body?: string | Record<string, unknown>; headers?: Record<string, string> }
  | { malformed: true }
  | { truncate: true };

/** What the server answers one request with. */
export type MockResponse = MockReply | MockFailure;

/** Answers a request from what it contains (e.g. reply to a tool result with text). */
export type MockResponder = (request: RecordedRequest) => MockResponse | Promise<MockResponse>;

/** One request the server received. */
export interface RecordedRequest {
  /** 0-based position among all requests this server received. */
  index: number;
  method: string;
  /** The URL path, e.g. `/v1/chat/completions`. */
  path: string;
  /** Header names lower-cased (`authorization`, `x-api-key`, …). */
  headers: Record<string, string>;
  /** The parsed JSON body (`{}` when the body was not JSON). */
  body: Record<string, unknown>;
  /** `body.messages`, for convenience (`[]` when absent). */
  messages: Array<Record<string, unknown>>;
}

/** How the server's response to one request ended. */
export type MockResponseEnd = "completed" | "client_disconnected" | "truncated";

/** Options of the mock provider servers: the queued answers, and the answer once they run out. */
export interface MockProviderOptions {
  /** Answers, one per request, in order. More can be added with `push`. */
  responses?: Array<MockResponse | MockResponder>;
  /** Answer once the queue is empty (default: HTTP 500 saying the script ran out). */
  whenEmpty?: MockResponse | MockResponder;
}

/**
 * A loopback HTTP server speaking a provider's wire format (`startMockOpenAI`, `startMockAnthropic`)
 * from scripted answers, recording every request: for tests without keys or network.
 */
export interface MockProviderServer {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:43121/v1` (what provider clients expect). */
  readonly baseUrl: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Appends answers to the queue. */
  push(...responses: Array<MockResponse | MockResponder>): void;
  /** Resolves once at least `count` requests have arrived (rejects after `timeoutMs`, default 10 s). */
  waitForRequests(count: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Resolves with how the response to request `index` ended (e.g. the client disconnected). */
  responseEnd(index: number): Promise<MockResponseEnd>;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

type Format = "openai" | "anthropic";

/**
 * A loopback OpenAI chat-completions server (`POST /v1/chat/completions`, SSE with
 * `reasoning_content`, streamed tool-call argument fragments, a usage chunk and `[DONE]`).
 *
 * ```ts
 * const mock = await startMockOpenAI({ responses: [
 *   { reasoning: "Need the file.", toolCalls: [{ name: "read_file", input: { path: "a.txt" } }] },
 *   (req) => ({ text: `saw ${req.messages.length} messages` }),
 * ] });
 * const adapter = createModelAdapter({ spec: "openai-compatible:mock", baseUrl: mock.baseUrl });
 * // … mock.requests[1].messages holds the assistant tool call and the tool result
 * await mock.close();
 * ```
 */
export function startMockOpenAI(options: MockProviderOptions = {}): Promise<MockProviderServer> {
  return startMockProvider("openai", options);
}

/**
 * A loopback Anthropic Messages server (`POST /v1/messages`, SSE with message_start,
 * thinking / text / tool_use content blocks (`thinking_delta`, `text_delta`,
 * `input_json_delta`), message_delta with stop_reason and usage, message_stop).
 * Same scripting as {@link startMockOpenAI}; use with `anthropic:<model>` and `baseUrl`.
 */
export function startMockAnthropic(options: MockProviderOptions = {}): Promise<MockProviderServer> {
  return startMockProvider("anthropic", options);
}

/** What one mock server's requests share. */
interface MockState {
  format: Format;
  options: MockProviderOptions;
  queue: Array<MockResponse | MockResponder>;
  requests: RecordedRequest[];
  /** How each request's response ended, by index. */
  ends: Map<number, Promise<MockResponseEnd>>;
  /** Woken at each request (`waitForRequests`). */
  waiters: Set<() => void>;
}

async function startMockProvider(format: Format, options: MockProviderOptions): Promise<MockProviderServer> {
  const state: MockState = { format, options, queue: [...(options.responses ?? [])], requests: [], ends: new Map(), waiters: new Set() };
  const server = createServer((req, res) => {
    void handle(state, req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests: state.requests,
    push: (...responses) => void state.queue.push(...responses),
    waitForRequests: (count, timeoutMs = 10_000) => waitForRequests(state, count, timeoutMs),
    responseEnd: async (index) => {
      const end = state.ends.get(index);
      if (end === undefined) throw new Error(`mock ${format} server: no request #${index} yet`);
      return end;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Records the request, then answers it with the next scripted response. */
async function handle(state: MockState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { format, options } = state;
  const body = parseJsonObject(await readBody(req));
  const index = state.requests.length;
  const recorded: RecordedRequest = {
    index,
    method: req.method ?? "GET",
    path: (req.url ?? "/").split("?")[0] ?? "/",
    headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : (v ?? "")])),
    body,
    messages: Array.isArray(body.messages) ? (body.messages as Array<Record<string, unknown>>) : [],
  };
  state.requests.push(recorded);
  let truncated = false;
  state.ends.set(index, new Promise((resolve) => res.on("close", () => resolve(truncated ? "truncated" : res.writableFinished ? "completed" : "client_disconnected"))));
  for (const wake of state.waiters) wake();

  if (recorded.method !== "POST" || recorded.path !== (format === "openai" ? "/v1/chat/completions" : "/v1/messages")) {
    sendJson(res, 404, errorBody(format, 404, `mock ${format} server: no route ${recorded.method} ${recorded.path}`));
    return;
  }
  const next = state.queue.shift() ?? options.whenEmpty;
  const response: MockResponse =
    next === undefined ? { status: 500, body: `mock ${format} server: no scripted response left for request #${index + 1}` } : typeof next === "function" ? await next(recorded) : next;
  if ("status" in response) {
    const payload = typeof response.body === "object" ? response.body : errorBody(format, response.status, response.body ?? `mock error ${response.status}`);
    sendJson(res, response.status, payload, response.headers);
    return;
  }
  if ("truncate" in response) truncated = true; // set before the socket is destroyed below
  await stream(format, res, response, body);
}

/** Streams a scripted reply as SSE: whole, malformed, cut in the middle, or slowly. */
async function stream(format: Format, res: ServerResponse, response: Exclude<MockResponse, { status: number }>, body: Record<string, unknown>): Promise<void> {
  const model = typeof body.model === "string" ? body.model : "mock-model";
  startSse(res);
  if ("malformed" in response) {
    for (const chunk of malformedChunks(format, model)) res.write(chunk);
    res.end();
    return;
  }
  const reply = "truncate" in response ? { text: "This answer is cut off in the middle of a sentence and never finishes." } : withSlowDefault(response);
  const includeUsage = format === "anthropic" || (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
  const chunks = format === "openai" ? openAIChunks(reply, model, includeUsage) : anthropicChunks(reply, model);
  if ("truncate" in response) {
    for (const chunk of chunks.slice(0, Math.max(2, Math.floor(chunks.length / 2)))) res.write(chunk);
    res.socket?.destroy();
    return;
  }
  const pause = reply.slow;
  for (const chunk of chunks) {
    if (res.destroyed) return;
    res.write(chunk);
    if (pause !== undefined) await delay(pause);
  }
  if (!res.destroyed) res.end();
}

function waitForRequests(state: MockState, count: number, timeoutMs: number): Promise<RecordedRequest[]> {
  const { requests, waiters } = state;
  return new Promise((resolve, reject) => {
    const check = (): boolean => {
      if (requests.length < count) return false;
      waiters.delete(check);
      clearTimeout(timer);
      resolve(requests);
      return true;
    };
    const timer = setTimeout(() => {
      waiters.delete(check);
      reject(new Error(`mock ${state.format} server: ${requests.length} of ${count} expected requests after ${timeoutMs} ms`));
    }, timeoutMs);
    if (!check()) waiters.add(check);
  });
}

/** `{ slow: ms }` alone streams a long text, so a client has time to cancel. */
function withSlowDefault(reply: MockReply): MockReply {
  if (reply.slow === undefined || reply.text !== undefined || reply.reasoning !== undefined || reply.toolCalls !== undefined) return reply;
  return { ...reply, text: Array.from({ length: 200 }, (_, i) => `word${i} `).join(""), chunkSize: 6 };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (chunk: Buffer) => parts.push(chunk));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

function parseJsonObject(raw: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function sendJson(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(payload));
}

function startSse(res: ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  res.flushHeaders();
}
