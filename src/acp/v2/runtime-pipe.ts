import type * as V1 from "@agentclientprotocol/sdk/unstable";
import { isPlainTextChunk } from "./convert.js";

/** What a plain text chunk goes to the bridge's v1 client as while that client catches up (see RuntimePipe). */
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
 * chain; a plain text chunk from our own runtime needs none of it: `direct` converts and sends
 * it as it leaves the runtime. Everything else goes through the client as before.
 *
 * Order is kept: after a message that went through the client, plain chunks follow it through
 * the client too (as `QUEUED_CHUNK_METHOD`, not validated), until the client has handled them;
 * only then are they sent directly again. The runtime's write of a queued chunk resolves once
 * it was handled, so the runtime's next message finds the queue empty and goes directly (else
 * a streaming turn would keep the queue busy and every later chunk would take the long way).
 */
export class RuntimePipe {
  /** What the runtime serves (its AgentApp connects to this). */
  readonly runtime: V1.Stream;
  /** What the bridge's v1 client connects to. */
  readonly client: V1.Stream;
  readonly #forward: WritableStreamDefaultWriter<Message>;
  /** Plain chunks sent through the client and not yet handled there. */
  #queued = 0;
  /** A message went through the client after the last queued chunk. */
  #behind = false;
  /** The runtime's writes of the queued chunks, resolved as the client handles them (in order). */
  #handled: Array<(written: Promise<void> | undefined) => void> = [];

  /**
   * `direct` sends a plain text chunk on, resolving once it is written (the runtime's next
   * message waits for it, as over v1: its update queue's batching and output budget rely on
   * that pacing); undefined refuses anything else.
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

  /** The bridge's handler of `QUEUED_CHUNK_METHOD`: a queued chunk reached the client. */
  dequeued(params: RawSessionUpdate): void {
    this.#queued -= 1;
    this.#handled.shift()?.(this.direct(params));
  }

  /** The client's connection closed: the queued chunks will not be handled; the writes waiting for them end. */
  close(): void {
    for (const done of this.#handled.splice(0)) done(undefined);
  }

  #write(message: Message): Promise<void> {
    const params = sessionUpdateParams(message);
    const written = params && !this.#behind && this.#queued === 0 ? this.direct(params) : undefined;
    if (written) return written;
    if (params && (this.#behind || this.#queued > 0) && isPlainTextChunk(params.update)) {
      this.#queued += 1;
      this.#behind = false;
      const handled = new Promise<void>((resolve) => this.#handled.push(resolve));
      return this.#forward.write({ jsonrpc: "2.0", method: QUEUED_CHUNK_METHOD, params }).then(() => handled);
    }
    this.#behind = true;
    return this.#forward.write(message);
  }
}

function sessionUpdateParams(message: Message): RawSessionUpdate | undefined {
  const { method, params, id } = message as { method?: unknown; params?: { sessionId?: unknown }; id?: unknown };
  if (method !== "session/update" || id !== undefined || typeof params?.sessionId !== "string") return undefined;
  return params as RawSessionUpdate;
}
