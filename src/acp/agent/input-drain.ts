/**
 * Requests still unanswered when the client closes its end (stdin EOF). The SDK closes the
 * connection at the end of its input and aborts the requests it is still handling, so a client
 * that writes its requests and closes stdin (`printf … | agentkit-acp serve`) lost every answer
 * that took more than a moment. The stdio stream holds the end of input back until each
 * request read before it is answered: running prompts are cancelled first (as a client's
 * `session/cancel` would), so they answer `cancelled`; the wait is bounded.
 *
 * Over ACP v2 a prompt is answered as soon as its turn starts, and the turn ends with an idle
 * `state_update`: a session whose last `state_update` said it runs is cancelled and waited for
 * the same way, so the client hears how its turn ended.
 */

/** Longest wait at the end of input for the answers still owed. */
export const END_OF_INPUT_ANSWER_MS = 3_000;
/** Lines over this are not parsed to track them (a huge prompt is not worth a second parse). */
const TRACKED_LINE_BYTES = 1024 * 1024;
/** A response line as the SDK writes it: `{"jsonrpc":"2.0","id":<id>,"result"|"error"…`. */
const RESPONSE_PREFIX = /^\{"jsonrpc":"2\.0","id":(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*"),"(?:result|error)"/;
const PREFIX_BYTES = 512;
const LETTER_I = 0x69;
const LETTER_M = 0x6d;
const LETTER_S = 0x73;
/** Updates longer than this are not state updates (they are a few dozen bytes plus the session id). */
const STATE_UPDATE_MAX_BYTES = 1024;
const STATE_UPDATE = Buffer.from('"sessionUpdate":"state_update"');
/** How the SDK writes an update: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"…","update":{"sessionUpdate":"<kind>"…`. */
const UPDATE_PREFIX = Buffer.from('{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"');
const KIND_AT = Buffer.from('","update":{"sessionUpdate":"');
const STATE_KIND = Buffer.from('state_update"');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

type Key = string;

export class UnansweredRequests {
  /** Request id → the session of a `session/prompt` (to cancel it), or null. */
  readonly #pending = new Map<Key, string | null>();
  /** Sessions whose v2 turn runs (a `state_update` said running, no idle yet). */
  readonly #running = new Set<string>();
  /** A v2 client asked to initialize: only then are outgoing updates looked at (v1 has no state updates). */
  #v2 = false;
  /** v2 update lines looked at (see `#mayBeStateUpdate`), and whether one had another layout than the SDK's. */
  #updatesSeen = 0;
  #otherLayout = false;
  #drained: (() => void) | undefined;
  readonly #decoder = new TextDecoder();

  /** A line from the client: a request is owed an answer. */
  observeInput(line: Uint8Array): void {
    if (line.length > TRACKED_LINE_BYTES) return;
    let message: unknown;
    try {
      message = JSON.parse(this.#decoder.decode(line));
    } catch {
      return;
    }
    if (message === null || typeof message !== "object" || Array.isArray(message)) return;
    const { id, method, params } = message as { id?: unknown; method?: unknown; params?: { sessionId?: unknown; protocolVersion?: unknown } };
    if (typeof method !== "string") return;
    if (method === "initialize" && typeof params?.protocolVersion === "number" && params.protocolVersion >= 2) this.#v2 = true;
    const key = keyOf(id);
    if (key === undefined) return;
    const sessionId = method === "session/prompt" && typeof params?.sessionId === "string" ? params.sessionId : null;
    this.#pending.set(key, sessionId);
  }

  /** A line to the client: a response settles what it answers. */
  observeOutput(chunk: Uint8Array): void {
    // `{"jsonrpc":"2.0","` is 18 bytes: an update goes on with `method`, a response with `id`.
    if (chunk[18] === LETTER_M) {
      if (this.#v2 && chunk.length <= STATE_UPDATE_MAX_BYTES) this.#observeStateUpdate(chunk);
      return;
    }
    if (this.#pending.size === 0 || chunk[18] !== LETTER_I) return;
    const match = RESPONSE_PREFIX.exec(this.#decoder.decode(chunk.subarray(0, PREFIX_BYTES)));
    if (!match?.[1]) return;
    const literal = match[1];
    const key = literal.startsWith('"') ? keyOf(JSON.parse(literal) as unknown) : keyOf(Number(literal));
    if (key === undefined || !this.#pending.delete(key)) return;
    this.#checkDrained();
  }

  #observeStateUpdate(chunk: Uint8Array): void {
    if (!this.#mayBeStateUpdate(chunk)) return;
    let update: { params?: { sessionId?: unknown; update?: { state?: unknown } } };
    try {
      update = JSON.parse(this.#decoder.decode(chunk)) as typeof update;
    } catch {
      return;
    }
    const sessionId = update.params?.sessionId;
    if (typeof sessionId !== "string") return;
    if (update.params?.update?.state === "idle") {
      if (this.#running.delete(sessionId)) this.#checkDrained();
    } else this.#running.add(sessionId);
  }

  /**
   * Every streamed chunk passes here, so the kind is read where the SDK writes it. One writer
   * (the SDK's JSON.stringify of the bridge's `{sessionId, update}`) gives every update line the
   * same layout: it is checked in full on the first line, on every 64th, and on each line whose
   * kind starts with `s`; the others cost a quote search and one byte. Once a line shows
   * another layout, every line is searched for `state_update` instead.
   */
  #mayBeStateUpdate(line: Uint8Array): boolean {
    if (this.#otherLayout) return containsStateUpdate(line);
    const end = line.indexOf(QUOTE, UPDATE_PREFIX.length);
    if (end > 0 && line[end - 1] !== BACKSLASH && line[end + KIND_AT.length] !== LETTER_S && (this.#updatesSeen++ & 63) !== 0) return false;
    const known = isStateUpdateAt(line);
    if (known !== undefined) return known;
    this.#otherLayout = true;
    return containsStateUpdate(line);
  }

  #checkDrained(): void {
    if (this.#pending.size === 0 && this.#running.size === 0) this.#drained?.();
  }

  /** `session/cancel` lines for the prompts still running (what the client would send to stop them). */
  cancelLines(): Uint8Array[] {
    const sessions = new Set([...this.#pending.values()].filter((s): s is string => s !== null).concat([...this.#running]));
    const encoder = new TextEncoder();
    return [...sessions].map((sessionId) => encoder.encode(`${JSON.stringify({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } })}\n`));
  }

  /** Resolves once every tracked request is answered and every v2 turn ended, or after `withinMs`. */
  drained(withinMs = END_OF_INPUT_ANSWER_MS): Promise<void> {
    if (this.#pending.size === 0 && this.#running.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, withinMs);
      timer.unref();
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.#drained = done;
    });
  }
}

function keyOf(id: unknown): Key | undefined {
  if (typeof id === "string") return `s:${id}`;
  if (typeof id === "number" && Number.isFinite(id)) return `n:${id}`;
  return undefined;
}

/** Whether an update line is a state_update, read at the places the SDK writes them; undefined for another layout. */
function isStateUpdateAt(line: Uint8Array): boolean | undefined {
  if (!bytesAt(line, UPDATE_PREFIX, 0)) return undefined;
  const end = line.indexOf(QUOTE, UPDATE_PREFIX.length);
  if (end === -1 || line[end - 1] === BACKSLASH || !bytesAt(line, KIND_AT, end)) return undefined;
  return bytesAt(line, STATE_KIND, end + KIND_AT.length);
}

function containsStateUpdate(line: Uint8Array): boolean {
  return Buffer.from(line.buffer, line.byteOffset, line.length).indexOf(STATE_UPDATE) !== -1;
}

function bytesAt(line: Uint8Array, expected: Uint8Array, at: number): boolean {
  if (at + expected.length > line.length) return false;
  for (let i = 0; i < expected.length; i++) if (line[at + i] !== expected[i]) return false;
  return true;
}
