import { randomUUID } from "node:crypto";
import * as V1 from "@agentclientprotocol/sdk/unstable";
import * as V2 from "@agentclientprotocol/sdk/experimental/v2/unstable";
import type { Logger } from "../../core/index.js";
import { errorMessage } from "../../core/index.js";
import {
  V1ToV2Updates,
  v1McpServers,
  v2AgentCapabilities,
  v2AuthMethods,
  v2ConfigOptions,
  v2PermissionRequest,
  v2SessionInfo,
  v2State,
} from "../v2/convert.js";
import { forwardAgentMethodsToV1, forwardClientMethodsToV2, BridgeState, registerHandlers, type V1ClientHandlers, type V2AgentHandlers } from "../v2/bridge-methods.js";
import { QUEUED_CHUNK_METHOD, RuntimePipe, type RawSessionUpdate } from "../v2/runtime-pipe.js";
import { AGENT_METHODS, CLIENT_METHODS } from "../methods.js";
import type { AcpServedConnection } from "./protocol.js";
import type { SessionUpdateSink } from "./client-handle.js";
import type { TurnStateSink } from "./input-drain.js";
import { sessionNotFound } from "./integration.js";

/**
 * Serves an ACP v2 (draft) client with the one v1 runtime: a v2 agent app on the client's stream
 * whose handlers call the runtime through an in-process v1 client app, converting shapes both
 * ways (src/acp/v2/convert.ts). What v2 changes in behaviour is done here:
 * - `session/prompt` is acknowledged with a `messageId` once the turn has started (or answered
 *   with the runtime's error if it refused the prompt); the turn's end is an idle `state_update`
 *   with its stop reason (`error` with the JSON-RPC error when the runtime's prompt failed).
 * - A prompt sent while a turn runs is held and started after it, in order; `session/cancel`
 *   answers held prompts with -32800.
 * - `session/resume` with `replayFrom: start` is the runtime's `session/load` (replay first), and
 *   every resume sends an idle state snapshot before its answer.
 * - The client has no fs/terminal methods in v2, so the runtime uses its local tools.
 * - The methods of the same shape in both (the method table, acp/methods.ts) are forwarded as they
 *   are; v2 advertises the unstable ones only when the runtime does (convert.ts).
 * - The text chunks a turn streams, and a session's commands and title, skip the in-process
 *   client (RuntimePipe): each is converted once as it leaves the runtime, which hands its
 *   updates to the pipe directly (not through its SDK connection).
 * - `turnState` (the stdio stream's end-of-input wait) hears each session's turn state as it is sent.
 */
export function serveV2(stream: V2.Stream, serveV1: (runtime: V1.Stream, sessionUpdates: SessionUpdateSink) => AcpServedConnection, logger: Logger, turnState?: TurnStateSink): AcpServedConnection {
  const bridge = new AgentBridge(logger, turnState);
  const pipe = new RuntimePipe(bridge.sendPlain);
  const back = V1.client({ name: "agentkit-acp v2 bridge" }).onConnect((c) => {
    bridge.runtime = c.agent;
  });
  forwardClientMethodsToV2(back, () => bridge.client(), logger);
  registerHandlers(back, runtimeClientHandlers(bridge), CLIENT_METHODS, "v1");
  back.onNotification(QUEUED_CHUNK_METHOD, (params) => params as RawSessionUpdate, ({ params }) => pipe.dequeued(params));
  const front = V2.agent({ name: "agentkit-acp (ACP v2)" });
  forwardAgentMethodsToV1(front, () => bridge.agent());
  registerHandlers(front, { ...openingHandlers(bridge), ...sessionHandlers(bridge) }, AGENT_METHODS, "v2");

  // The handlers run only once both connections exist.
  const v2 = front.connect(stream);
  bridge.connection = v2;
  const runtimeClient = back.connect(pipe.client);
  const served = serveV1(pipe.runtime, pipe.sessionUpdate);
  void v2.closed.then(() => served.close());
  void runtimeClient.closed.then(() => {
    pipe.close();
    return served.close();
  });
  void served.closed.then(() => {
    runtimeClient.close();
    v2.close();
  });
  const closed = Promise.all([v2.closed, served.closed]).then(() => undefined);
  return {
    closed,
    close: async () => {
      await served.close();
      v2.close();
      await closed;
    },
  };
}

/** The bridge's state: both connections, the sessions' turn bookkeeping, the order of updates. */
class AgentBridge extends BridgeState<BridgeSession> {
  runtime: V1.ClientContext | undefined;
  connection: V2.AgentConnection | undefined;

  constructor(
    logger: Logger,
    readonly turnState: TurnStateSink | undefined,
  ) {
    super(() => new BridgeSession(), logger);
  }

  agent(): V1.ClientContext {
    if (!this.runtime) throw V1.RequestError.internalError(undefined, "the runtime connection is not open");
    return this.runtime;
  }

  client(): V2.AgentContext {
    if (!this.connection) throw V1.RequestError.internalError(undefined, "the v2 connection is not open");
    return this.connection.client;
  }

  /**
   * RuntimePipe's shortcut: a plain update from the runtime (`isPlainUpdate`), converted once and
   * sent (undefined for anything else). Returns the SDK's send, which resolves once written and
   * rejects if it was not: the caller settles it (the runtime's update queue awaits every send,
   * and stops sending that session's updates when one fails, as over v1), so a turn's thousands
   * of updates need no settle of their own here.
   */
  readonly sendPlain = (params: RawSessionUpdate): Promise<void> | undefined => {
    const session = this.sessions.for(params.sessionId);
    const update = session.updates.convertPlain(params.update);
    if (!update) return undefined;
    try {
      // As in the general handler: the first update of a turn shows it started.
      session.turn?.started();
      return this.client().notify(V2.methods.client.session.update, { sessionId: params.sessionId, update });
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  };

  readonly notify = (sessionId: string, update: V2.SessionUpdate): void => {
    let sent = this.client().notify(V2.methods.client.session.update, { sessionId, update });
    if (this.turnState && update.sessionUpdate === "state_update") sent = reportTurnState(this.turnState, sessionId, (update as V2.StateUpdate).state !== "idle", sent);
    this.sent = sent.catch((error: unknown) => {
      this.logger.debug("a v2 session/update was not sent", { sessionId, error: errorMessage(error) });
    });
  };

  /**
   * A turn waiting for the human cannot go on (its tool calls run one at a time): v2 says
   * `requires_action` while the question is open, and `running` again once it is answered
   * (a cancelled question is followed by the turn's idle instead).
   */
  async blockedOnUser<T>(sessionId: string | undefined, signal: AbortSignal, ask: () => Promise<T>): Promise<T> {
    const turn = sessionId === undefined ? undefined : this.sessions.get(sessionId)?.turn;
    if (!turn || sessionId === undefined) return ask();
    turn.started();
    this.notify(sessionId, v2State("requires_action"));
    try {
      return await ask();
    } finally {
      if (!signal.aborted && this.sessions.get(sessionId)?.turn === turn) this.notify(sessionId, v2State("running"));
    }
  }
}

/** What the runtime asks its (v2) client that v2 shapes differently. */
function runtimeClientHandlers(bridge: AgentBridge): V1ClientHandlers {
  const ask = { stopWaitingOnCancel: true } as const;
  return {
    [V1.methods.client.session.update]: ({ params }) => {
      const session = bridge.sessions.for(params.sessionId);
      const update = session.updates.convert(params.update);
      if (!update) return;
      // The first update of a turn shows it started: acknowledge the prompt and say running first.
      session.turn?.started();
      bridge.notify(params.sessionId, update);
    },
    [V1.methods.client.session.requestPermission]: async ({ params, signal }) => {
      const answer = await bridge.blockedOnUser(params.sessionId, signal, () =>
        bridge.client().request(V2.methods.client.session.requestPermission, v2PermissionRequest(params), { cancellationSignal: signal, ...ask }),
      );
      return answer as V1.RequestPermissionResponse;
    },
    [V1.methods.client.elicitation.create]: async ({ params, signal }) => {
      const sessionId = "sessionId" in params && typeof params.sessionId === "string" ? params.sessionId : undefined;
      const answer = await bridge.blockedOnUser(sessionId, signal, () =>
        bridge.client().request(V2.methods.client.elicitation.create, params as V2.CreateElicitationRequest, { cancellationSignal: signal, ...ask }),
      );
      return answer as V1.CreateElicitationResponse;
    },
  };
}

type Handlers = V2AgentHandlers;

/** initialize and the methods that open sessions (new, resume, fork) or list them. */
function openingHandlers(bridge: AgentBridge): Pick<Handlers, "initialize" | "session/new" | "session/resume" | "session/fork" | "session/list"> {
  return {
    [V2.methods.agent.initialize]: async ({ params }) => {
      const elicitation = params.capabilities?.elicitation;
      const init = await bridge.agent().request(V1.methods.agent.initialize, {
        protocolVersion: V1.PROTOCOL_VERSION,
        clientCapabilities: {
          fs: { readTextFile: false, writeTextFile: false },
          terminal: false,
          ...(elicitation ? { elicitation: { ...(elicitation.form ? { form: {} } : {}), ...(elicitation.url ? { url: {} } : {}) } } : {}),
        },
        clientInfo: params.info,
      });
      return {
        protocolVersion: V2.PROTOCOL_VERSION,
        info: init.agentInfo ?? { name: "agentkit-acp", version: "0.0.0" },
        capabilities: v2AgentCapabilities(init.agentCapabilities),
        authMethods: v2AuthMethods(init.authMethods),
      };
    },
    [V2.methods.agent.session.new]: async ({ params, signal }) => {
      const opened = await bridge.agent().request(V1.methods.agent.session.new, { ...v1Place(params), mcpServers: v1McpServers(params.mcpServers) }, { cancellationSignal: signal });
      bridge.sessions.for(opened.sessionId);
      const configOptions = v2ConfigOptions(opened.configOptions);
      return { sessionId: opened.sessionId, ...(configOptions ? { configOptions } : {}) };
    },
    // `replayFrom: start` is the runtime's session/load (replay first); every resume sends an idle snapshot before its answer.
    [V2.methods.agent.session.resume]: async ({ params, signal }) => {
      const base = { sessionId: params.sessionId, ...v1Place(params), mcpServers: v1McpServers(params.mcpServers) };
      const method = params.replayFrom?.type === "start" ? V1.methods.agent.session.load : V1.methods.agent.session.resume;
      const session = bridge.sessions.for(params.sessionId);
      const restored: { configOptions?: V1.SessionConfigOption[] | null } = (await bridge.agent().request(method, base, { cancellationSignal: signal })) ?? {};
      // v2: after replay and before the answer, a snapshot of the session's state.
      bridge.notify(params.sessionId, v2State(session.turn ? "running" : "idle"));
      await bridge.sent;
      const configOptions = v2ConfigOptions(restored.configOptions);
      return configOptions ? { configOptions } : {};
    },
    [V2.methods.agent.session.fork]: async ({ params, signal }) => {
      const forked = await bridge.agent().request(V1.methods.agent.session.fork, { sessionId: params.sessionId, ...v1Place(params), mcpServers: v1McpServers(params.mcpServers) }, { cancellationSignal: signal });
      bridge.sessions.for(forked.sessionId);
      const configOptions = v2ConfigOptions(forked.configOptions);
      return { sessionId: forked.sessionId, ...(configOptions ? { configOptions } : {}) };
    },
    [V2.methods.agent.session.list]: async ({ params }) => {
      const listed = await bridge.agent().request(V1.methods.agent.session.list, {
        ...(params.cwd ? { cwd: params.cwd } : {}),
        ...(params.cursor ? { cursor: params.cursor } : {}),
        ...(params.archived ? { archived: params.archived } : {}),
      });
      return { sessions: listed.sessions.map(v2SessionInfo), ...(listed.nextCursor ? { nextCursor: listed.nextCursor } : {}) };
    },
  };
}

/** The methods on an open session: its turns, status, config, and the ends of it (archive, close, delete, cancel). */
function sessionHandlers(bridge: AgentBridge): Omit<Handlers, "initialize" | "session/new" | "session/resume" | "session/fork" | "session/list"> {
  const agent = (): V1.ClientContext => bridge.agent();
  /** Held prompts are answered first (closing or archiving ends the session in the runtime). */
  const ending = async (sessionId: string, end: () => Promise<unknown>): Promise<Record<string, never>> => {
    bridge.sessions.get(sessionId)?.dropHeld();
    await end();
    bridge.sessions.delete(sessionId);
    return {};
  };
  return {
    [V2.methods.agent.session.status]: async ({ params }) => {
      const { status } = await agent().request(V1.methods.agent.session.status, { sessionId: params.sessionId });
      // v2 adds the open session's state snapshot (the bridge knows whether a turn runs).
      const session = bridge.sessions.get(params.sessionId);
      return { status, ...(status === "open" && session ? { state: { state: session.turn ? "running" : "idle" } as V2.StateUpdate } : {}) };
    },
    [V2.methods.agent.session.archive]: ({ params }) => ending(params.sessionId, () => agent().request(V1.methods.agent.session.archive, { sessionId: params.sessionId })),
    [V2.methods.agent.session.close]: ({ params }) => ending(params.sessionId, () => agent().request(V1.methods.agent.session.close, { sessionId: params.sessionId })),
    [V2.methods.agent.session.delete]: async ({ params }) => {
      await agent().request(V1.methods.agent.session.delete, { sessionId: params.sessionId });
      bridge.sessions.delete(params.sessionId);
      return {};
    },
    [V2.methods.agent.session.setConfigOption]: async ({ params }) => {
      const value = params.type === "boolean" ? { type: "boolean" as const, value: params.value as boolean } : { value: String(params.value) };
      const answer = await agent().request(V1.methods.agent.session.setConfigOption, { sessionId: params.sessionId, configId: params.configId, ...value });
      return { configOptions: v2ConfigOptions(answer.configOptions) ?? [] };
    },
    [V2.methods.agent.session.prompt]: async ({ params }) => {
      const session = bridge.sessions.get(params.sessionId);
      if (!session) throw sessionNotFound(params.sessionId);
      if (session.busy) await session.waitTurn();
      return session.startTurn(params.sessionId, () => agent().request(V1.methods.agent.session.prompt, { sessionId: params.sessionId, prompt: params.prompt as V1.ContentBlock[] }), bridge.notify);
    },
    [V2.methods.agent.session.cancel]: async ({ params }) => {
      bridge.sessions.get(params.sessionId)?.dropHeld();
      await agent().notify(V1.methods.agent.session.cancel, { sessionId: params.sessionId });
    },
  };
}

/** A session's directories in v1 (v2 has the same fields). */
function v1Place(params: { cwd: string; additionalDirectories?: string[] | null }): { cwd: string; additionalDirectories?: string[] } {
  return { cwd: params.cwd, ...(params.additionalDirectories ? { additionalDirectories: params.additionalDirectories } : {}) };
}

/** One session's turn bookkeeping on the v2 side. */
class BridgeSession {
  readonly updates = new V1ToV2Updates();
  turn: Turn | undefined;
  #held: Array<{ go: () => void; fail: (error: Error) => void }> = [];

  /** A held prompt was let go and is about to start: nobody may start before it. */
  #handedOver = false;

  /** A turn runs, is about to start, or prompts wait. */
  get busy(): boolean {
    return this.turn !== undefined || this.#handedOver || this.#held.length > 0;
  }

  /** Resolves when this prompt's turn may start (arrival order); rejects with -32800 if cancelled meanwhile. */
  waitTurn(): Promise<void> {
    return new Promise((go, fail) => this.#held.push({ go, fail }));
  }

  dropHeld(): void {
    const held = this.#held;
    this.#held = [];
    for (const h of held) h.fail(V1.RequestError.requestCancelled(undefined, "the session was cancelled before this prompt started"));
  }

  /** Runs the v1 prompt; resolves with the v2 answer once it started (or rejects if refused at once). */
  startTurn(sessionId: string, prompt: () => Promise<V1.PromptResponse>, notify: (sessionId: string, update: V2.SessionUpdate) => void): Promise<V2.PromptResponse> {
    const turn = new Turn(sessionId, notify);
    this.turn = turn;
    this.#handedOver = false;
    prompt().then(
      (answer) => turn.ended(v2State("idle", answer.stopReason)),
      (error: unknown) => {
        const e = error instanceof V1.RequestError ? error : V1.RequestError.internalError(undefined, errorMessage(error));
        turn.ended(v2State("idle", "error", { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data } : {}) }), e);
      },
    ).finally(() => {
      if (this.turn === turn) this.turn = undefined;
      const next = this.#held.shift();
      if (next) {
        this.#handedOver = true;
        next.go();
      }
    });
    return turn.acknowledged;
  }
}

class Turn {
  readonly messageId = randomUUID();
  readonly acknowledged: Promise<V2.PromptResponse>;
  #ack!: (answer: V2.PromptResponse) => void;
  #refuse!: (error: Error) => void;
  #started = false;

  constructor(
    readonly sessionId: string,
    readonly notify: (sessionId: string, update: V2.SessionUpdate) => void,
  ) {
    this.acknowledged = new Promise((resolve, reject) => {
      this.#ack = resolve;
      this.#refuse = reject;
    });
  }

  started(): void {
    if (this.#started) return;
    this.#started = true;
    this.notify(this.sessionId, v2State("running"));
    this.#ack({ messageId: this.messageId });
  }

  /** A prompt refused before anything happened is answered with the error (no state change). */
  ended(idle: V2.SessionUpdate, refusal?: Error): void {
    if (!this.#started && refusal) {
      this.#started = true;
      this.#refuse(refusal);
      return;
    }
    this.started();
    this.notify(this.sessionId, idle);
  }
}

/**
 * A turn runs from before its state is sent (the prompt's answer comes after it) and ends once
 * its idle is written (the end of input may close the connection after that); a state that could
 * not be sent ends it (nobody will hear the rest).
 */
function reportTurnState(report: TurnStateSink, sessionId: string, running: boolean, sent: Promise<void>): Promise<void> {
  if (running) report(sessionId, true);
  return sent.then(
    () => {
      if (!running) report(sessionId, false);
    },
    (error: unknown) => {
      report(sessionId, false);
      throw error;
    },
  );
}
