import type { Stream } from "@agentclientprotocol/sdk";
import { ndJsonStream } from "@agentclientprotocol/sdk/unstable";
import type { Logger } from "../../core/index.js";
import type { ByteSink } from "./batched-output.js";
import { UnansweredRequests, type TurnStateSink } from "./input-drain.js";
import { observedWritable, type WritableObserver } from "./observed-writable.js";
import { silentLogger } from "../../core/index.js";

/** Default bound on one incoming JSON-RPC line (the SDK's own default). */
export const DEFAULT_MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

/** Bytes of an oversized line kept to find its `id`. */
const ID_PREFIX_BYTES = 64 * 1024;
const NEWLINE = 0x0a;
/** Longest hold of lines behind an unanswered `initialize` (it is answered at once; this is a backstop). */
const INITIALIZE_HOLD_MS = 10_000;
/** What a write that did not wait returns (shared: no promise per message). */
const WRITTEN = Promise.resolve();

export interface GuardedStreamOptions {
  /** Longest accepted line in bytes (default 32 MiB); longer ones get an error reply instead of closing the connection. */
  maxMessageBytes?: number;
  logger?: Logger;
}

/**
 * The SDK's `ndJsonStream` behind a byte-level guard, for serving over a pipe:
 *
 * - A line over `maxMessageBytes` never reaches the SDK (which would close the connection with
 *   `MessageTooLargeError`): it is dropped as it streams in (only a prefix is kept), answered
 *   with a -32600 error when its `id` can be read from that prefix, and logged.
 * - Requests are dispatched in the order received, also across `initialize`: the SDK starts
 *   handlers concurrently and refuses every request until the `initialize` answer has gone out,
 *   so lines after an `initialize` request are held until its answer is written. A pipelining
 *   client (`initialize` + `session/new` written back to back) is then served, not refused.
 * - The end of input reaches the SDK (which then closes and aborts what it is still handling)
 *   only once the requests read before it are answered, running prompts cancelled first
 *   (`UnansweredRequests`, bounded). Over v2 that includes the turns still running: whoever
 *   serves the stream reports them to `turnState`.
 */
export function guardedNdJsonStream(output: ByteSink, input: ReadableStream<Uint8Array>, options: GuardedStreamOptions = {}): GuardedStream {
  const limit = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  if (!Number.isSafeInteger(limit) || limit <= 0) throw new RangeError("maxMessageBytes must be a positive integer");
  const logger = options.logger ?? silentLogger;
  const gate = new InitializeGate();
  const unanswered = new UnansweredRequests();
  // What the SDK's ndJsonStream writes its encoded lines to. It only ever calls
  // `getWriter()`, `writer.write()` and `writer.releaseLock()` — once per outgoing message — and a
  // real WritableStream builds a writer with ready/closed promises each time (~6 % of serve's CPU
  // while streaming). So the sink is handed over behind one reusable writer instead.
  const writer = {
    write: (chunk: Uint8Array): Promise<void> => {
      gate.observeOutput(chunk);
      unanswered.observeOutput(chunk);
      return output.write(chunk) ?? WRITTEN;
    },
    releaseLock: (): void => undefined,
  };
  const guardedOutput = { getWriter: () => writer } as unknown as WritableStream<Uint8Array>;
  const reply = (line: string): void => {
    try {
      Promise.resolve(output.write(new TextEncoder().encode(line))).catch(() => undefined);
    } catch {
      // the output failed; the connection is ending
    }
  };
  const splitter = new LineSplitter(limit, (dropped) => {
    const id = recoverId(dropped.prefix);
    logger.warn(`dropped an incoming message of ${dropped.bytes} bytes: over the ${limit}-byte limit (--max-message-bytes)`, id === undefined ? {} : { id });
    if (id === undefined && !dropped.notification) {
      reply(`${JSON.stringify(tooLarge(null, dropped.bytes, limit))}\n`);
    } else if (id !== undefined) {
      reply(`${JSON.stringify(tooLarge(id, dropped.bytes, limit))}\n`);
    }
  });
  const guardedInput = input.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      async transform(chunk, controller) {
        for (const line of splitter.push(chunk)) {
          await gate.beforeLine();
          gate.observeInput(line);
          unanswered.observeInput(line);
          controller.enqueue(line);
        }
      },
      async flush(controller) {
        const last = splitter.flush();
        if (last) {
          await gate.beforeLine();
          unanswered.observeInput(last);
          controller.enqueue(last);
        }
        // The client closed its end: answer what it asked before the SDK sees the end and closes.
        for (const cancel of unanswered.cancelLines()) controller.enqueue(cancel);
        await unanswered.drained();
      },
    }),
  );
  // Lines reaching the SDK are within the limit; its own check (plus the newline) never fires.
  const stream = ndJsonStream(guardedOutput, guardedInput, { maxMessageBytes: limit + 2 });
  // The connection takes and releases a writer of the message stream for every message it sends
  // (a writer with ready/closed promises, and two "released" TypeErrors with stacks: ~7 KB of
  // garbage per session/update). One held writer instead, as the HTTP/WebSocket tap does.
  return { readable: stream.readable, writable: observedWritable(stream.writable, unobserved), turnState: unanswered.turnState };
}

/** The guarded stream, and where its v2 server reports each session's turn state (see `UnansweredRequests`). */
export interface GuardedStream extends Stream {
  turnState: TurnStateSink;
}

const unobserved: WritableObserver<unknown> = { written: () => undefined, ended: () => undefined };

function tooLarge(id: string | number | null, bytes: number, limit: number): object {
  return {
    jsonrpc: "2.0",
    id,
    error: { code: -32600, message: `the message is ${bytes} bytes, over this agent's limit of ${limit} bytes`, data: { bytes, maxMessageBytes: limit } },
  };
}

interface DroppedLine {
  bytes: number;
  prefix: Uint8Array;
  /** The prefix shows a `method` and no `id` was found: nobody waits for an answer. */
  notification: boolean;
}

/** Splits bytes into lines (each emitted with its newline); a line over the limit is dropped as it streams. */
class LineSplitter {
  readonly #limit: number;
  readonly #onDrop: (line: DroppedLine) => void;
  #parts: Uint8Array[] = [];
  #length = 0;
  /** Set while discarding an oversized line: its length so far and the kept prefix. */
  #dropping: { bytes: number; prefix: Uint8Array } | undefined;

  constructor(limit: number, onDrop: (line: DroppedLine) => void) {
    this.#limit = limit;
    this.#onDrop = onDrop;
  }

  *push(chunk: Uint8Array): Generator<Uint8Array> {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      this.#append(chunk.subarray(start, end));
      if (newline === -1) return;
      start = newline + 1;
      const line = this.#finish();
      if (line) yield line;
    }
  }

  flush(): Uint8Array | undefined {
    return this.#finish(false);
  }

  #append(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (this.#dropping) {
      this.#dropping.bytes += bytes.length;
      return;
    }
    if (this.#length + bytes.length > this.#limit) {
      const prefix = concat([...this.#parts, bytes.subarray(0, Math.max(0, ID_PREFIX_BYTES - this.#length))], false).subarray(0, ID_PREFIX_BYTES);
      this.#dropping = { bytes: this.#length + bytes.length, prefix: prefix.slice() };
      this.#parts = [];
      this.#length = 0;
      return;
    }
    this.#parts.push(bytes.slice());
    this.#length += bytes.length;
  }

  #finish(newline = true): Uint8Array | undefined {
    if (this.#dropping) {
      const { bytes, prefix } = this.#dropping;
      this.#dropping = undefined;
      const text = new TextDecoder().decode(prefix);
      this.#onDrop({ bytes, prefix, notification: /"method"\s*:/.test(text) && !/"id"\s*:/.test(text) });
      return undefined;
    }
    if (this.#length === 0) return undefined;
    const line = concat(this.#parts, newline);
    this.#parts = [];
    this.#length = 0;
    return line;
  }
}

function concat(parts: Uint8Array[], newline: boolean): Uint8Array {
  const length = parts.reduce((n, p) => n + p.length, 0) + (newline ? 1 : 0);
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  if (newline) out[at] = NEWLINE;
  return out;
}

/**
 * The top-level `id` of a JSON object from its first bytes: a small scanner that skips strings
 * and nested values, so an `"id"` inside `params` is never mistaken for it.
 */
export function recoverId(prefix: Uint8Array): string | number | undefined {
  const text = new TextDecoder().decode(prefix);
  let depth = 0;
  let i = 0;
  let expectKey = false;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      const end = stringEnd(text, i);
      if (end === -1) return undefined;
      if (depth === 1 && expectKey) {
        const key = text.slice(i + 1, end);
        let j = end + 1;
        while (/\s/.test(text[j] ?? "")) j++;
        if (text[j] !== ":") return undefined;
        j++;
        while (/\s/.test(text[j] ?? "")) j++;
        if (key === "id") return readIdValue(text, j);
        expectKey = false;
        i = j;
        continue;
      }
      i = end + 1;
      continue;
    }
    if (c === "{" || c === "[") {
      depth++;
      expectKey = depth === 1 && c === "{";
    } else if (c === "}" || c === "]") {
      depth--;
    } else if (c === "," && depth === 1) {
      expectKey = true;
    }
    i++;
  }
  return undefined;
}

function stringEnd(text: string, quote: number): number {
  for (let i = quote + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i;
  }
  return -1;
}

function readIdValue(text: string, at: number): string | number | undefined {
  if (text[at] === '"') {
    const end = stringEnd(text, at);
    if (end === -1) return undefined;
    try {
      return JSON.parse(text.slice(at, end + 1)) as string;
    } catch {
      return undefined;
    }
  }
  const number = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(at, at + 40));
  return number ? Number(number[0]) : undefined;
}

/**
 * Holds incoming lines after an `initialize` request until its answer is written (see
 * `guardedNdJsonStream`). Inactive once an `initialize` succeeded.
 */
class InitializeGate {
  #initialized = false;
  /** The `initialize` request waiting for its answer, and the release of lines held behind it. */
  #pending: { id: unknown; answered: Promise<void>; release: () => void } | undefined;

  async beforeLine(): Promise<void> {
    if (this.#pending) await this.#pending.answered;
  }

  observeInput(line: Uint8Array): void {
    // Before initialization lines are small; a huge one is not an initialize worth parsing.
    if (this.#initialized || line.length > 1024 * 1024) return;
    const message = parse(line);
    // Exactly what the SDK dispatches as a request (else it answers with id null, or not at all).
    if (message?.jsonrpc !== "2.0" || message.method !== "initialize") return;
    const id = message.id;
    if (typeof id !== "string" && !(typeof id === "number" && Number.isFinite(id))) return;
    let release!: () => void;
    const answered = new Promise<void>((resolve) => (release = resolve));
    const pending = { id, answered, release };
    this.#pending = pending;
    // Bounded: should the answer never be seen, the held lines go on after a while.
    setTimeout(() => {
      if (this.#pending !== pending) return;
      this.#pending = undefined;
      release();
    }, INITIALIZE_HOLD_MS).unref();
  }

  observeOutput(chunk: Uint8Array): void {
    const pending = this.#pending;
    if (!pending || chunk.length > 1024 * 1024) return;
    const message = parse(chunk);
    if (!message || message.method !== undefined || message.id !== pending.id) return;
    if ("result" in message) this.#initialized = true;
    this.#pending = undefined;
    pending.release();
  }
}

function parse(bytes: Uint8Array): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(bytes));
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
