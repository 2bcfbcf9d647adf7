import * as V1 from "@agentclientprotocol/sdk/unstable";
import * as V2 from "@agentclientprotocol/sdk/experimental/v2/unstable";
import type { Logger } from "../../core/logger.js";
import { errorMessage } from "../../core/index.js";
import {
  V2ToV1Updates,
  v1AgentCapabilities,
  v1AuthMethods,
  v1Commands,
  v1ConfigOptions,
  v1PermissionRequest,
  v1SessionInfo,
  v1StopReason,
  v2McpServers,
} from "../v2/convert.js";
import { forwardAgentMethodsToV2, forwardClientMethodsToV1, BridgeState, registerHandlers, type V1AgentHandlers, type V2ClientHandlers } from "../v2/bridge-methods.js";
import { AGENT_METHODS, CLIENT_METHODS } from "../methods.js";

/** One v2 connection seen by our v1 client as a v1 agent (see `clientV2Bridge`). */
export interface ClientV2Bridge {
  /** Connect the client's v1 app to this (`clientApp.connect(bridge.app)`). */
  readonly app: V1.AgentApp;
  /** The `protocolVersion` the agent answered to our v2 initialize, once it answered. */
  answeredVersion(): number | undefined;
}

/**
 * Lets our one v1 client (AcpClient, AcpSession, prompt) drive an ACP v2 (draft) agent: an
 * in-process v1 agent app whose handlers call the agent with the SDK's v2 client over `stream`,
 * converting shapes both ways (src/acp/v2/convert.ts). What v2 changes in behaviour is done here:
 * - v1 `session/prompt` answers when the turn ends: the v2 prompt's acknowledgement, then the
 *   idle `state_update` (its stop reason; `error` becomes the JSON-RPC error v1 expects).
 * - v1 `session/load` is v2 `session/resume` with `replayFrom: start`; v1 resume is resume.
 * - v2 agents run their own tools, so the client's fs/terminal hosts are not offered.
 */
export function clientV2Bridge(stream: V2.Stream, logger: Logger): ClientV2Bridge {
  const bridge = new ClientBridge(logger);
  // The agent's answer to initialize, read off the wire: the SDK refuses a v1 answer before we see it.
  const peek = new TransformStream<V2.AnyMessage, V2.AnyMessage>({
    transform(message, controller) {
      const result = (message as { result?: { protocolVersion?: unknown } }).result;
      if (bridge.answered === undefined && typeof result?.protocolVersion === "number") bridge.answered = result.protocolVersion;
      controller.enqueue(message);
    },
  });
  const wire = { writable: stream.writable, readable: stream.readable.pipeThrough(peek) };

  const back = V2.client({ name: "agentkit-acp (ACP v2)" });
  forwardClientMethodsToV1(back, () => bridge.client(), logger);
  registerHandlers(back, agentRequestHandlers(bridge), CLIENT_METHODS, "v2");
  // The handlers below run only once both connections exist.
  const agent = back.connect(wire);
  bridge.agent = agent.agent;
  void agent.closed.then(() => {
    for (const s of bridge.sessions.values()) s.fail(V1.RequestError.internalError(undefined, "the ACP v2 connection closed"));
    bridge.front?.close();
  });

  const app = V1.agent({ name: "agentkit-acp v2 bridge" }).onConnect((connection) => {
    bridge.front = connection;
    void connection.closed.then(() => agent.close());
  });
  forwardAgentMethodsToV2(app, () => agent.agent);
  registerHandlers(app, { ...openingHandlers(bridge), ...sessionHandlers(bridge) }, AGENT_METHODS, "v1");
  return { app, answeredVersion: () => bridge.answered };
}

/** The bridge's state: both connections, the sessions' turn ends, the order of updates. */
class ClientBridge extends BridgeState<SessionTurns> {
  /** The `protocolVersion` the agent answered, read off the wire. */
  answered: number | undefined;
  agent!: V2.ClientContext;
  front: V1.AgentConnection | undefined;

  constructor(logger: Logger) {
    super(() => new SessionTurns(), logger);
  }

  client(): V1.AgentContext {
    if (!this.front) throw V2.RequestError.internalError(undefined, "the client is gone");
    return this.front.client;
  }

  forward(sessionId: string, update: V1.SessionUpdate): void {
    if (!this.front) return;
    this.sent = this.front.client.notify(V1.methods.client.session.update, { sessionId, update }).catch((error: unknown) => {
      this.logger.debug("an update from the v2 agent was not passed on", { sessionId, error: errorMessage(error) });
    });
  }

  /** v2 can put the commands in the answer; v1 has only the update: sent right after the answer. */
  announceCommands(sessionId: string, commands: V2.AvailableCommand[] | undefined): void {
    if (!commands?.length) return;
    setImmediate(() => this.forward(sessionId, { sessionUpdate: "available_commands_update", availableCommands: v1Commands(commands) }));
  }
}

/** What the v2 agent asks our client that v1 shapes differently. */
function agentRequestHandlers(bridge: ClientBridge): V2ClientHandlers {
  const ask = { stopWaitingOnCancel: true } as const;
  return {
    [V2.methods.client.session.update]: ({ params }) => {
      const session = bridge.sessions.for(params.sessionId);
      const update = params.update as V2.SessionUpdate & { state?: string; stopReason?: string | null; error?: { code: number; message: string; data?: unknown } | null };
      if (update.sessionUpdate === "state_update") {
        session.state(update.state, update.stopReason, update.error ?? undefined);
        return;
      }
      for (const u of session.updates.convert(update)) bridge.forward(params.sessionId, u);
    },
    [V2.methods.client.session.requestPermission]: async ({ params, signal }) => {
      const answer = await bridge.client().request(V1.methods.client.session.requestPermission, v1PermissionRequest(params), { cancellationSignal: signal, ...ask });
      return answer as V2.RequestPermissionResponse;
    },
    [V2.methods.client.elicitation.create]: async ({ params, signal }) => {
      const answer = await bridge.client().request(V1.methods.client.elicitation.create, params as V1.CreateElicitationRequest, { cancellationSignal: signal, ...ask });
      return answer as V2.CreateElicitationResponse;
    },
  };
}

type Handlers = V1AgentHandlers;
type Opening = "initialize" | "session/new" | "session/load" | "session/resume" | "session/fork" | "session/list";

/** initialize and the methods that open sessions (new, load, resume, fork) or list them. */
function openingHandlers(bridge: ClientBridge): Pick<Handlers, Opening> {
  const agent = (): V2.ClientContext => bridge.agent;
  /** A session the agent just opened: its updates are passed on before the answer, its commands right after. */
  const opened = async (answer: { sessionId: string; availableCommands?: V2.AvailableCommand[]; configOptions?: V2.SessionConfigOption[] | null }): Promise<V1.NewSessionResponse> => {
    bridge.sessions.for(answer.sessionId);
    await settle(bridge.sent);
    bridge.announceCommands(answer.sessionId, answer.availableCommands);
    const configOptions = v1ConfigOptions(answer.configOptions);
    return { sessionId: answer.sessionId, ...(configOptions ? { configOptions } : {}) };
  };
  /** v1 load is v2 resume with `replayFrom: start`; v1 resume is resume. The replay is delivered before the answer. */
  const restore = async (params: V1.LoadSessionRequest | V1.ResumeSessionRequest, replay: boolean, signal: AbortSignal): Promise<V1.LoadSessionResponse> => {
    const { configOptions } = await opened({
      sessionId: params.sessionId,
      ...(await agent().request(V2.methods.agent.session.resume, { sessionId: params.sessionId, ...v2Place(params), ...(replay ? { replayFrom: { type: "start" } } : {}) }, { cancellationSignal: signal })),
    });
    return configOptions ? { configOptions } : {};
  };
  return {
    [V1.methods.agent.initialize]: async ({ params }) => {
      const elicitation = params.clientCapabilities?.elicitation;
      const init = await agent().request(V2.methods.agent.initialize, {
        protocolVersion: V2.PROTOCOL_VERSION,
        info: params.clientInfo ?? { name: "agentkit-acp", version: "0.0.0" },
        capabilities: elicitation ? { elicitation: { ...(elicitation.form ? { form: {} } : {}), ...(elicitation.url ? { url: {} } : {}) } } : {},
      });
      // Our v1 client checks for v1; `answeredVersion()` tells it the wire speaks v2.
      return { protocolVersion: V1.PROTOCOL_VERSION, agentCapabilities: v1AgentCapabilities(init.capabilities), authMethods: v1AuthMethods(init.authMethods), agentInfo: init.info };
    },
    [V1.methods.agent.session.new]: async ({ params, signal }) => opened(await agent().request(V2.methods.agent.session.new, v2Place(params), { cancellationSignal: signal })),
    [V1.methods.agent.session.load]: ({ params, signal }) => restore(params, true, signal),
    [V1.methods.agent.session.resume]: ({ params, signal }) => restore(params, false, signal),
    [V1.methods.agent.session.fork]: async ({ params, signal }) => opened(await agent().request(V2.methods.agent.session.fork, { sessionId: params.sessionId, ...v2Place(params) }, { cancellationSignal: signal })),
    [V1.methods.agent.session.list]: async ({ params }) => {
      const listed = await agent().request(V2.methods.agent.session.list, {
        ...(params.cwd ? { cwd: params.cwd } : {}),
        ...(params.cursor ? { cursor: params.cursor } : {}),
        ...(params.archived ? { archived: params.archived } : {}),
      });
      return { sessions: listed.sessions.map(v1SessionInfo), ...(listed.nextCursor ? { nextCursor: listed.nextCursor } : {}) };
    },
  };
}

/** The methods on an open session: its turns, status, config, and the ends of it (archive, close, delete, cancel). */
function sessionHandlers(bridge: ClientBridge): Omit<Handlers, Opening> {
  const agent = (): V2.ClientContext => bridge.agent;
  /** The session ends on the agent: a prompt still waiting for its turn's end fails with `why`. */
  const ending = async (sessionId: string, end: () => Promise<unknown>, why?: string): Promise<Record<string, never>> => {
    await end();
    if (why !== undefined) bridge.sessions.get(sessionId)?.fail(V1.RequestError.requestCancelled(undefined, why));
    bridge.sessions.delete(sessionId);
    return {};
  };
  return {
    [V1.methods.agent.session.status]: async ({ params }) => {
      // v1 has no place for v2's state snapshot: the status only.
      const { status } = await agent().request(V2.methods.agent.session.status, { sessionId: params.sessionId });
      return { status };
    },
    [V1.methods.agent.session.archive]: ({ params }) => ending(params.sessionId, () => agent().request(V2.methods.agent.session.archive, { sessionId: params.sessionId }), "the session was archived"),
    [V1.methods.agent.session.close]: ({ params }) => ending(params.sessionId, () => agent().request(V2.methods.agent.session.close, { sessionId: params.sessionId }), "the session was closed"),
    [V1.methods.agent.session.delete]: ({ params }) => ending(params.sessionId, () => agent().request(V2.methods.agent.session.delete, { sessionId: params.sessionId })),
    [V1.methods.agent.session.setConfigOption]: async ({ params }) => {
      const value = "type" in params && params.type === "boolean" ? { type: "boolean" as const, value: params.value } : { type: "id" as const, value: String(params.value) };
      const answer = await agent().request(V2.methods.agent.session.setConfigOption, { sessionId: params.sessionId, configId: params.configId, ...value } as V2.SetSessionConfigOptionRequest);
      return { configOptions: v1ConfigOptions(answer.configOptions) ?? [] };
    },
    [V1.methods.agent.session.prompt]: async ({ params, signal }) => {
      const session = bridge.sessions.for(params.sessionId);
      const ended = session.expectTurn();
      ended.catch(() => undefined); // awaited below; may fail before (the connection closed)
      // A $/cancel_request for the v1 prompt cancels the v2 session's turn.
      const onAbort = (): void => void agent().notify(V2.methods.agent.session.cancel, { sessionId: params.sessionId }).catch(() => undefined);
      signal.addEventListener("abort", onAbort, { once: true });
      try {
        await agent().request(V2.methods.agent.session.prompt, { sessionId: params.sessionId, prompt: params.prompt as V2.ContentBlock[] });
        session.acknowledged();
        const stop = await ended;
        await settle(bridge.sent);
        return { stopReason: stop };
      } catch (error) {
        session.abandon();
        throw error;
      } finally {
        signal.removeEventListener("abort", onAbort);
      }
    },
    [V1.methods.agent.session.cancel]: async ({ params }) => {
      await agent().notify(V2.methods.agent.session.cancel, { sessionId: params.sessionId });
    },
  };
}

/** A session's directories and MCP servers in v2. */
function v2Place(params: { cwd: string; additionalDirectories?: string[] | null; mcpServers?: V1.McpServer[] | null }): { cwd: string; mcpServers: V2.McpServer[]; additionalDirectories?: string[] } {
  return { cwd: params.cwd, mcpServers: v2McpServers(params.mcpServers ?? []), ...(params.additionalDirectories ? { additionalDirectories: params.additionalDirectories } : {}) };
}

/**
 * Waits for updates that reached the wire before an answer: the SDK runs notification handlers
 * a few microtasks after reading them, and an answer resolves at once. One macrotask drains them.
 */
async function settle(sent: Promise<void>): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  await sent;
}

/** One session's turn end, from v2 state updates (a v1 prompt answers when its turn ended). */
class SessionTurns {
  readonly updates = new V2ToV1Updates();
  #waiter: { resolve: (stop: V1.StopReason) => void; reject: (error: Error) => void; sawRunning: boolean; acked: boolean } | undefined;

  expectTurn(): Promise<V1.StopReason> {
    return new Promise((resolve, reject) => (this.#waiter = { resolve, reject, sawRunning: false, acked: false }));
  }

  acknowledged(): void {
    if (this.#waiter) this.#waiter.acked = true;
  }

  abandon(): void {
    this.#waiter = undefined;
  }

  /**
   * An idle snapshot ends the awaited turn once the turn was seen running or the prompt was
   * acknowledged (an idle from before the prompt is not its end).
   */
  state(state: string | undefined, stopReason: string | null | undefined, error: { code: number; message: string; data?: unknown } | undefined): void {
    const waiter = this.#waiter;
    if (!waiter) return;
    if (state === "running" || state === "requires_action") waiter.sawRunning = true;
    if (state !== "idle" || !(waiter.sawRunning || waiter.acked)) return;
    this.#waiter = undefined;
    if (stopReason === "error") waiter.reject(new V1.RequestError(error?.code ?? -32603, error?.message ?? "the agent's turn failed", error?.data));
    else waiter.resolve(v1StopReason(stopReason));
  }

  fail(error: Error): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.reject(error);
  }
}
