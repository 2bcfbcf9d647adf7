import type * as V1 from "@agentclientprotocol/sdk/unstable";
import type * as V2 from "@agentclientprotocol/sdk/experimental/v2/unstable";
import type { Logger } from "../../core/index.js";
import { errorMessage } from "../../core/index.js";
import { AGENT_METHODS, CLIENT_METHODS, type AgentHandler, type AgentMethodEntry, type ClientMethodEntry } from "../methods.js";

/**
 * What both v2 bridges take from the method table (acp/methods.ts): the `same`-shape methods are
 * forwarded here, in both directions; for each `converted` one a bridge must give a handler (the
 * handler records below are complete maps: a missing handler fails the type check).
 */

type Converted<E> = Extract<E, { v2: { shape: "converted" } }>;

type V2AgentHandler<M> = M extends V2.AgentRequestMethod ? V2.AgentRequestHandlersByMethod[M] : M extends V2.AgentNotificationMethod ? V2.AgentNotificationHandlersByMethod[M] : never;
type V1ClientHandler<M> = M extends V1.ClientRequestMethod ? V1.ClientRequestHandlersByMethod[M] : M extends V1.ClientNotificationMethod ? V1.ClientNotificationHandlersByMethod[M] : never;
type V2ClientHandler<M> = M extends V2.ClientRequestMethod ? V2.ClientRequestHandlersByMethod[M] : M extends V2.ClientNotificationMethod ? V2.ClientNotificationHandlersByMethod[M] : never;

/** The agent-side bridge's v2 front: a handler per converted agent method, keyed by its v2 name (load and resume share session/resume). */
export type V2AgentHandlers = { [M in Converted<AgentMethodEntry>["v2"]["method"]]: V2AgentHandler<M> };
/** The agent-side bridge's v1 back (the runtime's client): a handler per converted client method. */
export type V1ClientHandlers = { [M in Converted<ClientMethodEntry>["method"]]: V1ClientHandler<M> };
/** The client-side bridge's v1 front (our client's agent): a handler per converted agent method. */
export type V1AgentHandlers = { [M in Converted<AgentMethodEntry>["method"]]: AgentHandler<M> };
/** The client-side bridge's v2 back (the agent's client): a handler per converted client method, keyed by its v2 name. */
export type V2ClientHandlers = { [M in Converted<ClientMethodEntry>["v2"]["method"]]: V2ClientHandler<M> };

/** The SDK app builders and contexts as the forwards use them: by method name (both versions, both sides). */
interface App {
  onRequest(method: string, handler: (context: never) => unknown): unknown;
  onNotification(method: string, handler: (context: never) => unknown): unknown;
}
interface Peer {
  request(method: string, params: unknown, options?: { cancellationSignal?: AbortSignal; stopWaitingOnCancel?: boolean }): Promise<unknown>;
  notify(method: string, params: unknown): Promise<void>;
}

/** Registers a bridge's handlers (a complete map, so its type says which methods it converts). */
export function registerHandlers(app: object, handlers: V2AgentHandlers | V1ClientHandlers | V1AgentHandlers | V2ClientHandlers, kinds: readonly (AgentMethodEntry | ClientMethodEntry)[], version: "v1" | "v2"): void {
  const target = app as App;
  for (const [method, handler] of Object.entries(handlers) as Array<[string, (context: never) => unknown]>) {
    const entry = kinds.find((e) => (version === "v1" ? e.method : e.v2?.method) === method);
    if (entry?.kind === "notification") target.onNotification(method, handler);
    else target.onRequest(method, handler);
  }
}

/** How a forward reaches its peer: requests carry the caller's cancellation; a client-bound notification that fails is logged, not thrown. */
interface Forward {
  /** The side the handlers are registered on speaks v2 (agent bridge) or v1 (client bridge). */
  from: "v1" | "v2";
  peer: () => Peer;
  /** For requests to a client: stop waiting when cancelled (a human may never answer). */
  stopWaitingOnCancel?: boolean;
  /** For notifications to a client: log a failure at debug level instead of throwing. */
  logger?: Logger;
}

function forward(app: object, entries: readonly (AgentMethodEntry | ClientMethodEntry)[], how: Forward): void {
  const target = app as App;
  for (const entry of entries) {
    if (entry.v2?.shape !== "same") continue;
    const [from, to] = how.from === "v2" ? [entry.v2.method, entry.method] : [entry.method, entry.v2.method];
    if (entry.kind === "request") {
      target.onRequest(from, ({ params, signal }: { params: unknown; signal: AbortSignal }) => how.peer().request(to, params, { cancellationSignal: signal, ...(how.stopWaitingOnCancel ? { stopWaitingOnCancel: true } : {}) }));
    } else if (how.logger) {
      const logger = how.logger;
      target.onNotification(from, async ({ params }: { params: unknown }) => {
        await Promise.resolve()
          .then(() => how.peer().notify(to, params))
          .catch((error: unknown) => logger.debug(`a ${to} was not passed on`, { error: errorMessage(error) }));
      });
    } else {
      target.onNotification(from, async ({ params }: { params: unknown }) => how.peer().notify(to, params));
    }
  }
}

/** Agent-side bridge: the same-shape agent methods, v2 front → the v1 runtime. */
export function forwardAgentMethodsToV1(front: V2.AgentApp, runtime: () => V1.ClientContext): void {
  forward(front, AGENT_METHODS, { from: "v2", peer: runtime as () => Peer });
}

/** Agent-side bridge: the same-shape client methods, the runtime's v1 client → the v2 client. */
export function forwardClientMethodsToV2(back: V1.ClientApp, client: () => V2.AgentContext, logger: Logger): void {
  forward(back, CLIENT_METHODS, { from: "v1", peer: client as () => Peer, stopWaitingOnCancel: true, logger });
}

/** Client-side bridge: the same-shape agent methods, our v1 client → the v2 agent. */
export function forwardAgentMethodsToV2(front: V1.AgentApp, agent: () => V2.ClientContext): void {
  forward(front, AGENT_METHODS, { from: "v1", peer: agent as () => Peer });
}

/** Client-side bridge: the same-shape client methods, the v2 agent → our v1 client. */
export function forwardClientMethodsToV1(back: V2.ClientApp, client: () => V1.AgentContext, logger: Logger): void {
  forward(back, CLIENT_METHODS, { from: "v2", peer: client as () => Peer, stopWaitingOnCancel: true, logger });
}


/** A bridge's bookkeeping per session, made on first use. */
export class BridgeSessions<T> extends Map<string, T> {
  constructor(readonly make: () => T) {
    super();
  }

  for(id: string): T {
    let session = this.get(id);
    if (!session) this.set(id, (session = this.make()));
    return session;
  }
}

/** What both bridges keep: each session's bookkeeping, the last update written, the logger. */
export class BridgeState<S> {
  readonly sessions: BridgeSessions<S>;
  /**
   * The SDK writes notifications asynchronously and answers directly: an answer that must follow
   * the updates before it (resume after its replay, a prompt's end) waits for the last one (they are written in order).
   */
  sent: Promise<void> = Promise.resolve();

  constructor(
    session: () => S,
    readonly logger: Logger,
  ) {
    this.sessions = new BridgeSessions(session);
  }
}
