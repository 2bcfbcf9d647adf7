import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";

/**
 * A lean read of OpenAI-compatible chat-completions SSE, with the provider kept for the rest.
 *
 * The provider's stream runs every chunk through four web-stream stages and a zod parse —
 * about twice the CPU of a plain fetch + SSE read per streamed delta. Here the provider still
 * builds and sends the request (headers, auth, options, warnings) and handles every non-2xx or
 * non-SSE answer, but the SSE body of a successful answer is read by us: a chunk that is a
 * plain text/reasoning delta (almost all of them) becomes its stream part directly; any other
 * chunk — tool calls, usage, finish, refusals, errors, malformed or unexpected data — is handed
 * to the provider's own stream transform, in order, so its semantics stay the provider's. The
 * provider's transform reads nothing from the skipped deltas but its text/reasoning start/end
 * bookkeeping, which we do not use for these providers.
 */

/** What the lean path counted (tests and the benchmark check the fast path is really taken). */
export interface LeanStats {
  plain: number;
  forwarded: number;
}

interface Capture {
  /** The body the provider reads: only the chunks it must see, plus markers. */
  readonly feed: ReadableStream<Uint8Array>;
  /** The real SSE body, once the answer is a successful event stream. */
  body?: ReadableStream<Uint8Array>;
}

type Part = LanguageModelV3StreamPart;
type Fetch = typeof globalThis.fetch;

/** A chunk the provider accepts and ignores (empty `choices`), tagged so its raw echo can be recognised. */
const markerKey = "agentkit_lean_marker";
const markerEvent = `data: {"choices":[],"${markerKey}":true}\n\n`;
const encoder = new TextEncoder();
/**
 * Tags the provider's request with the call it belongs to (passed as a call header, removed
 * before sending): AsyncLocalStorage would do it too, but on Node 20 it turns on promise hooks
 * for the whole process, which cost more than the lean path saves.
 */
const captureHeader = "x-agentkit-lean-capture";

export class LeanChatStreams {
  readonly #captures = new Map<string, Capture>();
  #nextId = 0;
  readonly #fetch: Fetch;
  readonly stats: LeanStats = { plain: 0, forwarded: 0 };

  constructor(baseFetch: Fetch = globalThis.fetch) {
    this.#fetch = baseFetch;
  }

  /** The `fetch` to give the provider: passes everything through unless a lean call is capturing. */
  readonly fetch: Fetch = async (input, init) => {
    let capture: Capture | undefined;
    const headers = new Headers(init?.headers);
    const id = headers.get(captureHeader);
    if (id !== null) {
      capture = this.#captures.get(id);
      headers.delete(captureHeader);
      init = { ...init, headers };
    }
    const response = await this.#fetch(input, init);
    if (capture === undefined || !response.ok || response.body === null || !isEventStream(response)) return response;
    capture.body = response.body;
    return new Response(capture.feed, { status: response.status, statusText: response.statusText, headers: response.headers });
  };

  /**
   * Runs `start` (the provider's `doStream`, which must pass `includeRawChunks: true` and the
   * given call headers) and returns the stream parts to read, in batches (the parts of one
   * network read together: one async step per read, not per delta): lean when the answer is an
   * SSE body, the provider's own stream otherwise.
   */
  async open(start: (headers: Record<string, string>) => PromiseLike<{ stream: ReadableStream<Part> }>): Promise<AsyncIterable<Part[]>> {
    let feeder!: ReadableStreamDefaultController<Uint8Array>;
    const feed = new ReadableStream<Uint8Array>({ start: (controller) => void (feeder = controller) });
    const capture: Capture = { feed };
    const id = String(++this.#nextId);
    this.#captures.set(id, capture);
    let stream: ReadableStream<Part>;
    try {
      ({ stream } = await start({ [captureHeader]: id }));
    } finally {
      this.#captures.delete(id);
    }
    if (capture.body === undefined) return partBatches(stream);
    return leanParts(stream, capture.body, feeder, this.stats);
  }
}

function isEventStream(response: Response): boolean {
  return (response.headers.get("content-type") ?? "").toLowerCase().startsWith("text/event-stream");
}

/** A stream's parts, one per batch. */
export async function* partBatches(stream: ReadableStream<Part>): AsyncGenerator<Part[]> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) return;
      yield [next.value];
    }
  } finally {
    reader.releaseLock();
  }
}

async function* leanParts(provider: ReadableStream<Part>, body: ReadableStream<Uint8Array>, feed: ReadableStreamDefaultController<Uint8Array>, stats: LeanStats): AsyncGenerator<Part[]> {
  const fromProvider = provider.getReader();
  const sse = new SseData();
  const decoder = new TextDecoder();
  let first = true;
  /** Hands one event to the provider and adds what it made of it (up to the marker's raw echo) to `parts`. */
  async function forward(data: string, parts: Part[]): Promise<void> {
    stats.forwarded += 1;
    feed.enqueue(encoder.encode(`${encodeData(data)}${markerEvent}`));
    for (;;) {
      const next = await fromProvider.read();
      if (next.done) return;
      const part = next.value;
      if (part.type === "raw") {
        if (isMarker(part.rawValue)) return;
        continue;
      }
      parts.push(part);
    }
  }
  try {
    // The provider's first part (stream-start, with the request's warnings) comes before any data.
    const started = await fromProvider.read();
    if (!started.done) yield [started.value];
    for await (const bytes of body) {
      const parts: Part[] = [];
      for (const data of sse.push(decoder.decode(bytes, { stream: true }))) {
        if (data === "[DONE]") continue;
        let chunk: unknown;
        try {
          chunk = JSON.parse(data);
        } catch {
          chunk = undefined; // the provider reports it
        }
        if (chunk !== undefined && isPlainDeltaChunk(chunk)) {
          stats.plain += 1;
          if (first) {
            // As the provider does for its first chunk (it also tells the adapter data has begun).
            first = false;
            parts.push(responseMetadata(chunk as PlainChunk));
          }
          const delta = (chunk as PlainChunk).choices[0]?.delta;
          const reasoning = delta?.reasoning_content ?? delta?.reasoning;
          if (reasoning) parts.push({ type: "reasoning-delta", id: "reasoning-0", delta: reasoning });
          if (delta?.content) parts.push({ type: "text-delta", id: "txt-0", delta: delta.content });
        } else {
          first = false;
          await forward(data, parts);
        }
      }
      if (parts.length > 0) yield parts;
    }
    // The provider's flush: pending tool calls, the finish reason and usage (or its error).
    feed.close();
    const rest: Part[] = [];
    for (;;) {
      const next = await fromProvider.read();
      if (next.done) break;
      if (next.value.type !== "raw") rest.push(next.value);
    }
    if (rest.length > 0) yield rest;
  } finally {
    void fromProvider.cancel().catch(() => undefined);
  }
}

/** SSE `data:` lines of one event as the provider's parser reads them (one line per `data:` field). */
function encodeData(data: string): string {
  return `data: ${data.split("\n").join("\ndata: ")}\n\n`;
}

function isMarker(value: unknown): boolean {
  return typeof value === "object" && value !== null && (value as Record<string, unknown>)[markerKey] === true;
}

function responseMetadata(chunk: PlainChunk): Part {
  return {
    type: "response-metadata",
    id: chunk.id ?? undefined,
    modelId: chunk.model ?? undefined,
    timestamp: chunk.created != null ? new Date(chunk.created * 1000) : undefined,
  };
}

interface PlainChunk {
  id?: string | null;
  model?: string | null;
  created?: number | null;
  choices: Array<{ delta?: { content?: string | null; reasoning_content?: string | null; reasoning?: string | null } | null }>;
}

type Loose = Record<string, unknown>;

const isObject = (value: unknown): value is Loose => typeof value === "object" && value !== null && !Array.isArray(value);
const nullish = (value: unknown): value is null | undefined => value === null || value === undefined;
const optionalString = (value: unknown): boolean => nullish(value) || typeof value === "string";

/**
 * True when the chunk is a content/reasoning-only delta that the provider's chunk schema accepts
 * and its transform would turn into nothing but text/reasoning deltas: no finish reason, usage,
 * tool calls, refusal or error, string content, at most one choice. Conservative: anything not
 * certain goes to the provider.
 */
export function isPlainDeltaChunk(value: unknown): boolean {
  if (!isObject(value) || "error" in value) return false;
  if (!optionalString(value.id) || !optionalString(value.model) || !(nullish(value.created) || typeof value.created === "number")) return false;
  if (!nullish(value.usage)) return false;
  const choices = value.choices;
  if (!Array.isArray(choices) || choices.length !== 1) return false;
  const choice: unknown = choices[0];
  if (!isObject(choice) || !nullish(choice.finish_reason)) return false;
  const delta = choice.delta;
  if (nullish(delta)) return true;
  if (!isObject(delta)) return false;
  const { role, content, refusal, reasoning_content: reasoningContent, reasoning, tool_calls: toolCalls } = delta;
  return (
    (nullish(role) || role === "assistant" || role === "") &&
    optionalString(content) &&
    nullish(refusal) &&
    optionalString(reasoningContent) &&
    optionalString(reasoning) &&
    nullish(toolCalls)
  );
}

/**
 * The `data` of each complete SSE event, as eventsource-parser (the provider's parser) reads
 * it: LF, CRLF or CR line ends, a leading BOM dropped, `data:` with one optional space, several
 * `data:` lines joined by LF, comments and other fields ignored, an event without a blank line
 * at the end of the body dropped.
 */
export class SseData {
  #buffer = "";
  #data: string[] = [];
  #first = true;

  push(text: string): string[] {
    let buffer = this.#buffer + text;
    if (this.#first && buffer.length > 0) {
      this.#first = false;
      if (buffer.charCodeAt(0) === 0xfeff) buffer = buffer.slice(1);
    }
    const events: string[] = [];
    let start = 0;
    // The next CR, searched again only once passed (a search per line would rescan the buffer).
    let cr = buffer.indexOf("\r");
    for (;;) {
      const lf = buffer.indexOf("\n", start);
      if (cr !== -1 && cr < start) cr = buffer.indexOf("\r", start);
      let end: number;
      let next: number;
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        // A CR at the very end may be the first half of a CRLF: wait for more.
        if (cr === buffer.length - 1) break;
        end = cr;
        next = buffer.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1;
      } else if (lf !== -1) {
        end = lf;
        next = lf + 1;
      } else break;
      this.#line(buffer, start, end, events);
      start = next;
    }
    this.#buffer = buffer.slice(start);
    return events;
  }

  #line(buffer: string, start: number, end: number, events: string[]): void {
    if (start === end) {
      if (this.#data.length > 0) events.push(this.#data.length === 1 ? this.#data[0]! : this.#data.join("\n"));
      this.#data = [];
      return;
    }
    if (buffer.startsWith("data", start)) {
      if (end === start + 4) this.#data.push("");
      else if (buffer.charCodeAt(start + 4) === 58 /* : */) this.#data.push(buffer.slice(buffer.charCodeAt(start + 5) === 32 ? start + 6 : start + 5, end));
    }
  }
}
