import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { leanMarkerKey, type LeanFormat } from "./lean-formats.js";

/**
 * A lean read of a provider's SSE answer, with the provider kept for the rest (one mechanism for
 * every wire format; a {@link LeanFormat} says which events are plain deltas).
 *
 * The provider's stream runs every event through four web-stream stages and a zod parse —
 * about twice the CPU of a plain fetch + SSE read per streamed delta. Here the provider still
 * builds and sends the request (headers, auth, options, warnings) and handles every non-2xx or
 * non-SSE answer, but the SSE body of a successful answer is read by us: an event that is a
 * plain text/reasoning delta (almost all of them) becomes its stream part directly; any other
 * event — tool calls, signatures, usage, finish, refusals, errors, malformed or unexpected data —
 * is handed to the provider's own stream transform, in order, so its semantics stay the
 * provider's. Plain reading starts once the provider has sent its response metadata (what it
 * does for the first event), and stops at the first error part (the adapter ends there). The
 * provider's transform reads nothing from the skipped deltas but its text/reasoning start/end
 * bookkeeping, which the adapter does not use.
 */

/** What the lean path counted (tests and the benchmark check the fast path is really taken). */
export interface LeanStats {
  plain: number;
  forwarded: number;
  /** Markers sent after forwarded events (the provider's answer to them was awaited). */
  markers: number;
}

interface Capture {
  /** The body the provider reads: only the events it must see, plus markers. */
  readonly feed: ReadableStream<Uint8Array>;
  /** The real SSE body, once the answer is a successful event stream. */
  body?: ReadableStream<Uint8Array>;
  /** Called when `body` is set. */
  captured: () => void;
}

type Part = LanguageModelV3StreamPart;
type Fetch = typeof globalThis.fetch;
type Opened = { stream: ReadableStream<Part> };

const encoder = new TextEncoder();
/**
 * Tags the provider's request with the call it belongs to (passed as a call header, removed
 * before sending): AsyncLocalStorage would do it too, but on Node 20 it turns on promise hooks
 * for the whole process, which cost more than the lean path saves.
 */
const captureHeader = "x-agentkit-lean-capture";
/** Keys the provider's JSON parser rejects (its secure parse): such events go to the provider. */
const suspectKey = /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"\s*:|"(?:c|\\u0063)(?:o|\\u006[Ff])(?:n|\\u006[Ee])(?:s|\\u0073)(?:t|\\u0074)(?:r|\\u0072)(?:u|\\u0075)(?:c|\\u0063)(?:t|\\u0074)(?:o|\\u006[Ff])(?:r|\\u0072)"\s*:/;

export class LeanStreams {
  readonly #captures = new Map<string, Capture>();
  #nextId = 0;
  readonly #fetch: Fetch;
  readonly #format: LeanFormat;
  readonly stats: LeanStats = { plain: 0, forwarded: 0, markers: 0 };

  constructor(format: LeanFormat, baseFetch: Fetch = globalThis.fetch) {
    this.#format = format;
    this.#fetch = baseFetch;
  }

  /** The `fetch` to give the provider: passes everything through unless a lean call is capturing. */
  readonly fetch: Fetch = async (input, init) => {
    let capture: Capture | undefined;
    const id = takeCaptureHeader(init);
    if (id !== undefined) {
      capture = this.#captures.get(id.id);
      init = { ...init, headers: id.headers };
    }
    const response = await this.#fetch(input, init);
    if (capture === undefined || !response.ok || response.body === null || !isEventStream(response)) return response;
    capture.body = response.body;
    capture.captured();
    return new Response(capture.feed, { status: response.status, statusText: response.statusText, headers: response.headers });
  };

  /**
   * Runs `start` (the provider's `doStream`, which must pass `includeRawChunks: true` and the
   * given call headers) and returns the stream parts to read, in batches (the parts of one
   * network read together: one async step per read, not per delta): lean when the answer is an
   * SSE body, the provider's own stream otherwise.
   */
  async open(start: (headers: Record<string, string>) => PromiseLike<Opened>): Promise<AsyncIterable<Part[]>> {
    let feeder!: ReadableStreamDefaultController<Uint8Array>;
    const feed = new ReadableStream<Uint8Array>({ start: (controller) => void (feeder = controller) });
    let captured!: () => void;
    const bodyArrived = new Promise<void>((resolve) => (captured = resolve));
    const capture: Capture = { feed, captured };
    const id = String(++this.#nextId);
    this.#captures.set(id, capture);
    let read: LeanRead | undefined;
    try {
      const opened = Promise.resolve(start({ [captureHeader]: id }));
      if (this.#format.readsAhead) {
        // The provider reads the first events before it returns: feed it until it does.
        const settled = opened.then(() => true, () => true);
        if (!(await Promise.race([settled, bodyArrived.then(() => false)]))) {
          read = new LeanRead(this.#format, capture.body!, feeder, this.stats);
          await read.feedUntil(settled);
        }
      }
      const { stream } = await opened;
      if (capture.body === undefined) return partBatches(stream);
      read ??= new LeanRead(this.#format, capture.body, feeder, this.stats);
      return read.parts(stream);
    } catch (error) {
      read?.cancel();
      throw error;
    } finally {
      this.#captures.delete(id);
    }
  }
}

/**
 * The call's capture id and the request's headers without it. The providers pass a plain
 * object (provider-utils' `withUserAgentSuffix`, keys in lower case): copied without a
 * `Headers` round trip; anything else goes through `Headers`.
 */
function takeCaptureHeader(init: RequestInit | undefined): { id: string; headers: NonNullable<RequestInit["headers"]> } | undefined {
  const given = init?.headers;
  if (given === undefined) return undefined;
  if (typeof given === "object" && !Array.isArray(given) && !(given instanceof Headers)) {
    const plain = given as Record<string, string>;
    const id = plain[captureHeader];
    if (id === undefined) return undefined;
    const headers: Record<string, string> = {};
    for (const key in plain) if (key !== captureHeader) headers[key] = plain[key]!;
    return { id, headers };
  }
  const headers = new Headers(given);
  const id = headers.get(captureHeader);
  if (id === null) return undefined;
  headers.delete(captureHeader);
  return { id, headers };
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

/** One lean read of one answer's SSE body. */
class LeanRead {
  readonly #format: LeanFormat;
  readonly #body: ReadableStreamDefaultReader<Uint8Array>;
  readonly #feed: ReadableStreamDefaultController<Uint8Array>;
  readonly #stats: LeanStats;
  readonly #sse = new SseData();
  readonly #decoder = new TextDecoder();
  #ended = false;
  /** Markers sent to the provider whose echo has not been read yet. */
  #pending = 0;
  /** The provider has sent its response metadata: plain deltas may be read by hand. */
  #plain = false;
  /** The provider sent an error part: the read ends there. */
  #failed = false;
  /** Events were forwarded after the last marker. */
  #unmarked = false;
  #provider: ReadableStreamDefaultReader<Part> | undefined;
  #reading: Promise<boolean> | undefined;

  constructor(format: LeanFormat, body: ReadableStream<Uint8Array>, feed: ReadableStreamDefaultController<Uint8Array>, stats: LeanStats) {
    this.#format = format;
    this.#body = body.getReader();
    this.#feed = feed;
    this.#stats = stats;
  }

  /** Hands events to the provider until `done` settles (after each one, its stages get a turn to read it). */
  async feedUntil(done: Promise<boolean>): Promise<void> {
    let over = false;
    void done.then(() => (over = true));
    while (!over) {
      const data = this.#sse.next();
      if (data === undefined) {
        // Waiting for the network, the provider may return meanwhile: its first deltas must not wait for more.
        const more = await Promise.race([this.#read(), done.then(() => "returned" as const)]);
        if (more === "returned") return;
        if (!more) {
          this.#endFeed();
          return;
        }
        continue;
      }
      if (data === "[DONE]") continue;
      this.#forward(data);
      await withinTurn(done);
    }
  }

  async *parts(stream: ReadableStream<Part>): AsyncGenerator<Part[]> {
    const provider = (this.#provider = stream.getReader());
    try {
      // The provider's first part (stream-start, with the request's warnings) comes before any data.
      const started = await provider.read();
      if (!started.done) yield [started.value];
      const early: Part[] = [];
      await this.#drain(early);
      if (early.length > 0) yield early;
      while (!this.#failed) {
        const parts: Part[] = [];
        // Plain deltas (nearly every event) are read synchronously: no async step per delta.
        let data: string | undefined;
        while (!this.#failed && (data = this.#sse.next()) !== undefined) {
          if (!this.#readPlain(data, parts)) await this.#handOver(data, parts);
        }
        if (parts.length > 0) yield parts;
        if (this.#failed) break;
        if (this.#unmarked) {
          // Events went to the provider last, unmarked: at the body's end (usually there already),
          // the provider's flush below gives their parts; otherwise they come now, with a marker.
          const more = await withinTurn(this.#read());
          if (more === false) break;
          const theirs: Part[] = [];
          await this.#mark(theirs);
          if (theirs.length > 0) yield theirs;
          if (more === true) continue;
        }
        if (this.#failed || !(await this.#read())) break;
      }
      if (this.#failed) return;
      // The provider's flush: pending tool calls, the finish reason and usage (or its error).
      this.#endFeed();
      const rest: Part[] = [];
      for (;;) {
        const next = await provider.read();
        if (next.done) break;
        if (next.value.type !== "raw") rest.push(next.value);
      }
      if (rest.length > 0) yield rest;
    } finally {
      this.cancel();
    }
  }

  cancel(): void {
    void this.#body.cancel().catch(() => undefined);
    void this.#provider?.cancel().catch(() => undefined);
  }

  /** True when `data` was a plain delta (its part added to `parts`) or `[DONE]` (the provider skips it too). */
  #readPlain(data: string, parts: Part[]): boolean {
    if (data === "[DONE]") return true;
    if (!this.#plain || suspectKey.test(data)) return false;
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      return false; // the provider reports it
    }
    if (!this.#format.plain(chunk, parts)) return false;
    this.#stats.plain += 1;
    return true;
  }

  /**
   * Any other event goes to the provider, in order, with those after it that go there too: their
   * parts are added to `parts`, after one marker for them all. When nothing is left to read yet,
   * they go without a marker (`#unmarked`; at the body's end the provider's flush ends them).
   */
  async #handOver(data: string, parts: Part[]): Promise<void> {
    let events = this.#encode(data);
    /** The parts of the plain event that ended the run, or [] when one waits for the provider's answer. */
    let after: Part[] | undefined;
    for (let next = this.#sse.next(); next !== undefined; next = this.#sse.next()) {
      if (next === "[DONE]") continue; // the provider skips it too
      if (!this.#plain) {
        // Plain reading may start once the provider has answered these.
        this.#sse.putBack(next);
        after = [];
        break;
      }
      const own: Part[] = [];
      if (this.#readPlain(next, own)) {
        after = own;
        break;
      }
      events += this.#encode(next);
    }
    this.#feed.enqueue(encoder.encode(events));
    if (after === undefined) {
      this.#unmarked = true;
      return;
    }
    await this.#mark(parts);
    if (!this.#failed) for (const part of after) parts.push(part);
  }

  /** Sends a marker after the events forwarded so far and adds their parts to `parts`. */
  async #mark(parts: Part[]): Promise<void> {
    this.#unmarked = false;
    this.#stats.markers += 1;
    this.#pending += 1;
    this.#feed.enqueue(encoder.encode(encodeData(this.#format.marker)));
    await this.#drain(parts);
  }

  /** Hands one event to the provider, followed by a marker. */
  #forward(data: string): void {
    this.#stats.markers += 1;
    this.#pending += 1;
    this.#feed.enqueue(encoder.encode(this.#encode(data) + encodeData(this.#format.marker)));
  }

  #encode(data: string): string {
    this.#stats.forwarded += 1;
    return encodeData(data);
  }

  /** Adds what the provider made of the forwarded events (up to the last marker's echo) to `parts`. */
  async #drain(parts: Part[]): Promise<void> {
    const provider = this.#provider!;
    while (this.#pending > 0) {
      const next = await provider.read();
      if (next.done) {
        this.#pending = 0;
        return;
      }
      const part = next.value;
      if (part.type === "raw") {
        if (isMarker(part.rawValue)) this.#pending -= 1;
        continue;
      }
      parts.push(part);
      if (part.type === "response-metadata") this.#plain = true;
      else if (part.type === "error") {
        this.#failed = true;
        return;
      }
    }
  }

  /** Reads the next network read's events; false at the body's end. One read at a time (feedUntil may leave one going). */
  #read(): Promise<boolean> {
    return (this.#reading ??= this.#readOnce());
  }

  async #readOnce(): Promise<boolean> {
    try {
      if (this.#ended) return false;
      const next = await this.#body.read();
      if (next.done) {
        this.#ended = true;
        return false;
      }
      this.#sse.append(this.#decoder.decode(next.value, { stream: true }));
      return true;
    } finally {
      this.#reading = undefined;
    }
  }

  #endFeed(): void {
    try {
      this.#feed.close();
    } catch {
      // closed already
    }
  }
}

/**
 * `settles`'s outcome if it settles within this turn of the event loop, else undefined (it goes
 * on). A plain immediate, cleared when `settles` wins (the usual case): a raced timer promise
 * would still run its immediate.
 */
function withinTurn<T>(settles: Promise<T>): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    const turn = setImmediate(() => resolve(undefined));
    settles.then(
      (value) => {
        clearImmediate(turn);
        resolve(value);
      },
      (error: unknown) => {
        clearImmediate(turn);
        reject(error as Error);
      },
    );
  });
}

/** SSE `data:` lines of one event as the provider's parser reads them (one line per `data:` field). */
function encodeData(data: string): string {
  return `data: ${data.split("\n").join("\ndata: ")}\n\n`;
}

function isMarker(value: unknown): boolean {
  return typeof value === "object" && value !== null && (value as Record<string, unknown>)[leanMarkerKey] === true;
}

/**
 * The `data` of each complete SSE event, as eventsource-parser (the provider's parser) reads
 * it: LF, CRLF or CR line ends, a leading BOM dropped, `data:` with one optional space, several
 * `data:` lines joined by LF, comments and other fields ignored, an event without a blank line
 * at the end of the body dropped.
 *
 * Read one event at a time (`next`), not a network read's hundreds at once: a loop over all of
 * them gets optimised while it runs (OSR) — on Node 24 a TurboFan compile of ~10 ms CPU on every
 * first prompt — where a call per event tiers up like any small function.
 */
export class SseData {
  #buffer = "";
  /** Where the next line starts in `#buffer`. */
  #start = 0;
  /** The next CR at or after `#start` (-1: none), searched again only once passed (a search per line would rescan the buffer). */
  #cr = -1;
  #data: string[] = [];
  #first = true;
  /** An event put back (`putBack`): `next` returns it first. */
  #back: string | undefined;

  /** Adds text read from the body. */
  append(text: string): void {
    let buffer = this.#start > 0 ? this.#buffer.slice(this.#start) + text : this.#buffer + text;
    if (this.#first && buffer.length > 0) {
      this.#first = false;
      if (buffer.charCodeAt(0) === 0xfeff) buffer = buffer.slice(1);
    }
    this.#buffer = buffer;
    this.#start = 0;
    this.#cr = buffer.indexOf("\r");
  }

  /** The next complete event's data, or undefined until more text is appended. */
  next(): string | undefined {
    const back = this.#back;
    if (back !== undefined) {
      this.#back = undefined;
      return back;
    }
    const buffer = this.#buffer;
    for (;;) {
      const start = this.#start;
      const lf = buffer.indexOf("\n", start);
      let cr = this.#cr;
      if (cr !== -1 && cr < start) cr = this.#cr = buffer.indexOf("\r", start);
      let end: number;
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        // A CR at the very end may be the first half of a CRLF: wait for more.
        if (cr === buffer.length - 1) return undefined;
        end = cr;
        this.#start = buffer.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1;
      } else if (lf !== -1) {
        end = lf;
        this.#start = lf + 1;
      } else return undefined;
      if (start === end) {
        const data = this.#data;
        if (data.length === 0) continue;
        this.#data = [];
        return data.length === 1 ? data[0]! : data.join("\n");
      }
      if (buffer.startsWith("data", start)) {
        if (end === start + 4) this.#data.push("");
        else if (buffer.charCodeAt(start + 4) === 58 /* : */) this.#data.push(buffer.slice(buffer.charCodeAt(start + 5) === 32 ? start + 6 : start + 5, end));
      }
    }
  }

  /** Makes `data` (the event `next` just returned) the next one again. */
  putBack(data: string): void {
    this.#back = data;
  }

  /** Appends `text` and returns every event it completes. */
  push(text: string): string[] {
    this.append(text);
    const events: string[] = [];
    for (let data = this.next(); data !== undefined; data = this.next()) events.push(data);
    return events;
  }
}
