/**
 * Requests still unanswered when the client closes its end (stdin EOF). The SDK closes the
 * connection at the end of its input and aborts the requests it is still handling, so a client
 * that writes its requests and closes stdin (`printf … | agentkit-acp serve`) lost every answer
 * that took more than a moment. The stdio stream holds the end of input back until each
 * request read before it is answered: running prompts are cancelled first (as a client's
 * `session/cancel` would), so they answer `cancelled`; the wait is bounded.
 *
 * Over ACP v2 a prompt is answered as soon as its turn starts, and the turn ends with an idle
 * `state_update`: the v2 bridge reports each session's turn state (`turnState`), and a session
 * whose turn runs is cancelled and waited for the same way, so the client hears how its turn ended.
 */

/** Longest wait at the end of input for the answers still owed. */
export const END_OF_INPUT_ANSWER_MS = 3_000;
/** Lines over this are not parsed to track them (a huge prompt is not worth a second parse). */
const TRACKED_LINE_BYTES = 1024 * 1024;
/** A response line as the SDK writes it: `{"jsonrpc":"2.0","id":<id>,"result"|"error"…`. */
const RESPONSE_PREFIX = /^\{"jsonrpc":"2\.0","id":(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*"),"(?:result|error)"/;
const PREFIX_BYTES = 512;
const LETTER_I = 0x69;

/**
 * What the v2 bridge reports of a session's turn: running (or waiting on the human) from when
 * it says so, idle once that is written. Reported directly rather than read back from the
 * output, which would cost a look at each of a turn's thousands of update lines.
 */
export type TurnStateSink = (sessionId: string, running: boolean) => void;

type Key = string;

export class UnansweredRequests {
  /** Request id → the session of a `session/prompt` (to cancel it), or null. */
  readonly #pending = new Map<Key, string | null>();
  /** Sessions whose v2 turn runs (see `turnState`). */
  readonly #running = new Set<string>();
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
    const { id, method, params } = message as { id?: unknown; method?: unknown; params?: { sessionId?: unknown } };
    if (typeof method !== "string") return;
    const key = keyOf(id);
    if (key === undefined) return;
    const sessionId = method === "session/prompt" && typeof params?.sessionId === "string" ? params.sessionId : null;
    this.#pending.set(key, sessionId);
  }

  /** A line to the client: a response settles what it answers. */
  observeOutput(chunk: Uint8Array): void {
    // `{"jsonrpc":"2.0","` is 18 bytes: a response goes on with `id` (an update with `method`).
    if (this.#pending.size === 0 || chunk[18] !== LETTER_I) return;
    const match = RESPONSE_PREFIX.exec(this.#decoder.decode(chunk.subarray(0, PREFIX_BYTES)));
    if (!match?.[1]) return;
    const literal = match[1];
    const key = literal.startsWith('"') ? keyOf(JSON.parse(literal) as unknown) : keyOf(Number(literal));
    if (key === undefined || !this.#pending.delete(key)) return;
    this.#checkDrained();
  }

  /** A v2 session's turn runs (a `running` or `requires_action` state), or it ended (`idle`). */
  readonly turnState: TurnStateSink = (sessionId, running) => {
    if (running) this.#running.add(sessionId);
    else if (this.#running.delete(sessionId)) this.#checkDrained();
  };

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
