import type * as V1 from "@agentclientprotocol/sdk/unstable";
import { isPlainUpdate } from "./convert.js";

/** What a plain update goes to the bridge's v1 client as while that client catches up (see RuntimePipe). */
export const QUEUED_CHUNK_METHOD = "_agentkit/v2_bridge_chunk";

/** The params of a `session/update` as the runtime sent them (not validated). */
export interface RawSessionUpdate {
  sessionId: string;
  update: unknown;
}

type Message = V1.AnyMessage;

/**
 * The in-process link between the v1 runtime and the agent-side bridge's v1 client (what the
 * SDK's `agentApp.connect(clientApp)` builds: a pair of object streams), with a shortcut for
 * the updates a turn streams by the thousand. The SDK's client validates every `session/update`
 * twice (its session router, then the handler's params) and dispatches it through its handler
 * chain; a plain update from our own runtime (a text chunk, the session's commands or title:
 * `isPlainUpdate`) needs none of it: `direct` converts and sends it as it leaves the runtime.
 * Everything else goes through the client as before.
 *
 * Order is kept: after a message that went through the client, plain updates follow it through
 * the client too (as `QUEUED_CHUNK_METHOD`, not validated), until the client has handled them;
 * only then are they sent directly again. The runtime's write of a queued update resolves once
 * it was handled, so the runtime's next message finds the queue empty and goes directly (else
 * a streaming turn would keep the queue busy and every later chunk would take the long way).
 */
export class RuntimePipe {
  /** What the runtime serves (its AgentApp connects to this). */
  readonly runtime: V1.Stream;
  /** What the bridge's v1 client connects to. */
  readonly client: V1.Stream;
  readonly #forward: WritableStreamDefaultWriter<Message>;
  /** Plain updates sent through the client and not yet handled there. */
  #queued = 0;
  /** A message went through the client after the last queued update. */
  #behind = false;
  /** The runtime's writes of the queued updates, resolved as the client handles them (in order). */
  #handled: Array<(written: Promise<void> | undefined) => void> = [];
  #closed = false;
  /** `sessionUpdate`s waiting for the one before them to be written, and the last of them. */
  #waiting = 0;
  #previous: Promise<void> = Promise.resolve();

  /**
   * `direct` sends a plain update on, resolving once it is written (the runtime's next
   * message waits for it, as over v1: its update queue's batching and output budget rely on
   * that pacing) and rejecting if it was not (the v2 connection failed or closed: the writer of
   * the update settles that, as it does a failed write over v1); undefined refuses anything else.
   */
  constructor(private readonly direct: (params: RawSessionUpdate) => Promise<void> | undefined) {
    const toRuntime = new TransformStream<Message, Message>();
    const toClient = new TransformStream<Message, Message>();
    this.#forward = toClient.writable.getWriter();
    // The SDK's connection only ever takes a writer per message, writes once and releases it.
    const writer = { write: (message: Message) => this.#write(message), releaseLock: () => undefined };
    this.runtime = { readable: toRuntime.readable, writable: { getWriter: () => writer } as unknown as WritableStream<Message> };
    this.client = { readable: toClient.readable, writable: toRuntime.writable };
  }

  /**
   * The runtime's `session/update`s, handed over without its SDK connection (whose write queue
   * costs a JSON-RPC send chain per update): they enter the pipe at once, in the runtime's
   * order, as if they had just come out of that connection. The runtime's other messages
   * (requests, answers) still take the connection: it orders those against its updates by
   * awaiting them (an answer or a permission question waits for the updates before it).
   */
  readonly sessionUpdate = (params: RawSessionUpdate): Promise<void> => {
    if (this.#closed) return Promise.reject(new Error("the ACP v2 bridge's client connection is closed"));
    if (this.#waiting === 0 && !this.#behind && this.#queued === 0) {
      const written = this.direct(params);
      if (written) return written;
    }
    // Else one at a time, each once the one before is written, as the SDK's write queue handed
    // them over: only the first plain update after a message through the client waits in line
    // there; the next finds the line empty (the runtime hands over a whole batch at once).
    this.#waiting += 1;
    const written = this.#previous.then(() => this.#write(undefined, params));
    const done = (): void => {
      this.#waiting -= 1;
    };
    this.#previous = written.then(done, done);
    return written;
  };

  /** The bridge's handler of `QUEUED_CHUNK_METHOD`: a queued update reached the client. */
  dequeued(params: RawSessionUpdate): void {
    this.#queued -= 1;
    this.#handled.shift()?.(this.direct(params));
  }

  /** The client's connection closed: the queued updates will not be handled; the writes waiting for them end. */
  close(): void {
    this.#closed = true;
    for (const done of this.#handled.splice(0)) done(undefined);
  }

  /** `message` undefined: the `session/update` of `params` (built only if it goes through the client). */
  #write(message: Message | undefined, params = message && sessionUpdateParams(message)): Promise<void> {
    const written = params && !this.#behind && this.#queued === 0 ? this.direct(params) : undefined;
    if (written) return written;
    if (params && (this.#behind || this.#queued > 0) && isPlainUpdate(params.update)) {
      this.#queued += 1;
      this.#behind = false;
      const handled = new Promise<void>((resolve) => this.#handled.push(resolve));
      return this.#forward.write({ jsonrpc: "2.0", method: QUEUED_CHUNK_METHOD, params }).then(() => handled);
    }
    this.#behind = true;
    return this.#forward.write(message ?? { jsonrpc: "2.0", method: "session/update", params });
  }
}

function sessionUpdateParams(message: Message): RawSessionUpdate | undefined {
  const { method, params, id } = message as { method?: unknown; params?: { sessionId?: unknown }; id?: unknown };
  if (method !== "session/update" || id !== undefined || typeof params?.sessionId !== "string") return undefined;
  return params as RawSessionUpdate;
}
