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
  let answered: number | undefined;
  // The agent's answer to initialize, read off the wire: the SDK refuses a v1 answer before we see it.
  const peek = new TransformStream<V2.AnyMessage, V2.AnyMessage>({
    transform(message, controller) {
      const result = (message as { result?: { protocolVersion?: unknown } }).result;
      if (answered === undefined && typeof result?.protocolVersion === "number") answered = result.protocolVersion;
      controller.enqueue(message);
    },
  });
  const wire = { writable: stream.writable, readable: stream.readable.pipeThrough(peek) };

  let client: V1.AgentContext | undefined;
  let sent: Promise<void> = Promise.resolve();
  const forward = (sessionId: string, update: V1.SessionUpdate): void => {
    if (!client) return;
    sent = client.notify(V1.methods.client.session.update, { sessionId, update }).catch((error: unknown) => {
      logger.debug("an update from the v2 agent was not passed on", { sessionId, error: errorMessage(error) });
    });
  };
  const sessions = new Map<string, SessionTurns>();
  const sessionFor = (id: string): SessionTurns => {
    let session = sessions.get(id);
    if (!session) sessions.set(id, (session = new SessionTurns()));
    return session;
  };

  const back = V2.client({ name: "agentkit-acp (ACP v2)" })
    .onNotification(V2.methods.client.session.update, ({ params }) => {
      const session = sessionFor(params.sessionId);
      const update = params.update as V2.SessionUpdate & { state?: string; stopReason?: string | null; error?: { code: number; message: string; data?: unknown } | null };
      if (update.sessionUpdate === "state_update") {
        session.state(update.state, update.stopReason, update.error ?? undefined);
        return;
      }
      for (const u of session.updates.convert(update)) forward(params.sessionId, u);
    })
    .onRequest(V2.methods.client.session.requestPermission, async ({ params, signal }) => {
      if (!client) throw V2.RequestError.internalError(undefined, "the client is gone");
      const answer = await client.request(V1.methods.client.session.requestPermission, v1PermissionRequest(params), { cancellationSignal: signal, stopWaitingOnCancel: true });
      return answer as V2.RequestPermissionResponse;
    })
    .onNotification(V2.methods.client.auth.statusUpdate, async ({ params }) => {
      await client?.notify(V1.methods.client.auth.statusUpdate, params).catch((error: unknown) => {
        logger.debug("an auth/status_update from the v2 agent was not passed on", { error: errorMessage(error) });
      });
    })
    .onNotification(V2.methods.client.elicitation.complete, async ({ params }) => {
      await client?.notify(V1.methods.client.elicitation.complete, params).catch((error: unknown) => {
        logger.debug("an elicitation/complete from the v2 agent was not passed on", { error: errorMessage(error) });
      });
    })
    // MCP over ACP: the agent's requests to our in-process MCP servers (notifications go the other way).
    .onRequest(V2.methods.client.mcp.message, async ({ params, signal }) => {
      if (!client) throw V2.RequestError.internalError(undefined, "the client is gone");
      return (await client.request(V1.methods.client.mcp.message, params, { cancellationSignal: signal, stopWaitingOnCancel: true })) as V2.MessageMcpResponse;
    })
    .onRequest(V2.methods.client.elicitation.create, async ({ params, signal }) => {
      if (!client) throw V2.RequestError.internalError(undefined, "the client is gone");
      const answer = await client.request(V1.methods.client.elicitation.create, params as V1.CreateElicitationRequest, { cancellationSignal: signal, stopWaitingOnCancel: true });
      return answer as V2.CreateElicitationResponse;
    });

  // The handlers below run only once both connections exist.
  const agent = back.connect(wire);
  let front: V1.AgentConnection | undefined;
  void agent.closed.then(() => {
    for (const s of sessions.values()) s.fail(V1.RequestError.internalError(undefined, "the ACP v2 connection closed"));
    front?.close();
  });

  const app = V1.agent({ name: "agentkit-acp v2 bridge" })
    .onConnect((connection) => {
      front = connection;
      client = connection.client;
      void connection.closed.then(() => agent.close());
    })
    .onRequest(V1.methods.agent.initialize, async ({ params }) => {
      const elicitation = params.clientCapabilities?.elicitation;
      const init = await agent.agent.request(V2.methods.agent.initialize, {
        protocolVersion: V2.PROTOCOL_VERSION,
        info: params.clientInfo ?? { name: "agentkit-acp", version: "0.0.0" },
        capabilities: elicitation ? { elicitation: { ...(elicitation.form ? { form: {} } : {}), ...(elicitation.url ? { url: {} } : {}) } } : {},
      });
      // Our v1 client checks for v1; `answeredVersion()` tells it the wire speaks v2.
      return {
        protocolVersion: V1.PROTOCOL_VERSION,
        agentCapabilities: v1AgentCapabilities(init.capabilities),
        authMethods: v1AuthMethods(init.authMethods),
        agentInfo: init.info,
      };
    })
    .onRequest(V1.methods.agent.authenticate, async ({ params }) => {
      await agent.agent.request(V2.methods.agent.auth.login, { methodId: params.methodId });
      return {};
    })
    .onRequest(V1.methods.agent.logout, async () => {
      await agent.agent.request(V2.methods.agent.auth.logout, {});
      return {};
    })
    .onRequest(V1.methods.agent.auth.status, async () => agent.agent.request(V2.methods.agent.auth.status, {}))
    // providers/*: the same shapes in v1 and v2.
    .onRequest(V1.methods.agent.providers.list, async () => agent.agent.request(V2.methods.agent.providers.list, {}))
    .onRequest(V1.methods.agent.providers.set, async ({ params }) => {
      await agent.agent.request(V2.methods.agent.providers.set, params);
      return {};
    })
    .onRequest(V1.methods.agent.providers.disable, async ({ params }) => {
      await agent.agent.request(V2.methods.agent.providers.disable, params);
      return {};
    })
    .onRequest(V1.methods.agent.session.new, async ({ params, signal }) => {
      const opened = await agent.agent.request(
        V2.methods.agent.session.new,
        { cwd: params.cwd, mcpServers: v2McpServers(params.mcpServers), ...(params.additionalDirectories ? { additionalDirectories: params.additionalDirectories } : {}) },
        { cancellationSignal: signal },
      );
      sessionFor(opened.sessionId);
      await settle(sent);
      announceCommands(opened.sessionId, opened.availableCommands);
      const configOptions = v1ConfigOptions(opened.configOptions);
      return { sessionId: opened.sessionId, ...(configOptions ? { configOptions } : {}) };
    })
    .onRequest(V1.methods.agent.session.load, async ({ params, signal }) => restore(params, true, signal))
    .onRequest(V1.methods.agent.session.resume, async ({ params, signal }) => restore(params, false, signal))
    .onRequest(V1.methods.agent.session.list, async ({ params }) => {
      const listed = await agent.agent.request(V2.methods.agent.session.list, {
        ...(params.cwd ? { cwd: params.cwd } : {}),
        ...(params.cursor ? { cursor: params.cursor } : {}),
        ...(params.archived ? { archived: params.archived } : {}),
      });
      return { sessions: listed.sessions.map(v1SessionInfo), ...(listed.nextCursor ? { nextCursor: listed.nextCursor } : {}) };
    })
    .onRequest(V1.methods.agent.session.fork, async ({ params, signal }) => {
      const forked = await agent.agent.request(
        V2.methods.agent.session.fork,
        { sessionId: params.sessionId, cwd: params.cwd, mcpServers: v2McpServers(params.mcpServers ?? []), ...(params.additionalDirectories ? { additionalDirectories: params.additionalDirectories } : {}) },
        { cancellationSignal: signal },
      );
      sessionFor(forked.sessionId);
      await settle(sent);
      announceCommands(forked.sessionId, forked.availableCommands);
      const configOptions = v1ConfigOptions(forked.configOptions);
      return { sessionId: forked.sessionId, ...(configOptions ? { configOptions } : {}) };
    })
    .onRequest(V1.methods.agent.session.setTitle, async ({ params }) => agent.agent.request(V2.methods.agent.session.setTitle, { sessionId: params.sessionId, title: params.title }))
    .onRequest(V1.methods.agent.session.status, async ({ params }) => {
      // v1 has no place for v2's state snapshot: the status only.
      const { status } = await agent.agent.request(V2.methods.agent.session.status, { sessionId: params.sessionId });
      return { status };
    })
    .onRequest(V1.methods.agent.session.archive, async ({ params }) => {
      await agent.agent.request(V2.methods.agent.session.archive, { sessionId: params.sessionId });
      sessions.get(params.sessionId)?.fail(V1.RequestError.requestCancelled(undefined, "the session was archived"));
      sessions.delete(params.sessionId);
      return {};
    })
    .onRequest(V1.methods.agent.session.unarchive, async ({ params }) => {
      await agent.agent.request(V2.methods.agent.session.unarchive, { sessionId: params.sessionId });
      return {};
    })
    .onRequest(V1.methods.agent.session.close, async ({ params }) => {
      await agent.agent.request(V2.methods.agent.session.close, { sessionId: params.sessionId });
      sessions.get(params.sessionId)?.fail(V1.RequestError.requestCancelled(undefined, "the session was closed"));
      sessions.delete(params.sessionId);
      return {};
    })
    .onRequest(V1.methods.agent.session.delete, async ({ params }) => {
      await agent.agent.request(V2.methods.agent.session.delete, { sessionId: params.sessionId });
      sessions.delete(params.sessionId);
      return {};
    })
    .onRequest(V1.methods.agent.session.setConfigOption, async ({ params }) => {
      const value = "type" in params && params.type === "boolean" ? { type: "boolean" as const, value: params.value } : { type: "id" as const, value: String(params.value) };
      const answer = await agent.agent.request(V2.methods.agent.session.setConfigOption, { sessionId: params.sessionId, configId: params.configId, ...value } as V2.SetSessionConfigOptionRequest);
      return { configOptions: v1ConfigOptions(answer.configOptions) ?? [] };
    })
    .onRequest(V1.methods.agent.session.prompt, async ({ params, signal }) => {
      const session = sessionFor(params.sessionId);
      const ended = session.expectTurn();
      ended.catch(() => undefined); // awaited below; may fail before (the connection closed)
      // A $/cancel_request for the v1 prompt cancels the v2 session's turn.
      const onAbort = (): void => void agent.agent.notify(V2.methods.agent.session.cancel, { sessionId: params.sessionId }).catch(() => undefined);
      signal.addEventListener("abort", onAbort, { once: true });
      try {
        await agent.agent.request(V2.methods.agent.session.prompt, { sessionId: params.sessionId, prompt: params.prompt as V2.ContentBlock[] });
        session.acknowledged();
        const stop = await ended;
        await settle(sent);
        return { stopReason: stop };
      } catch (error) {
        session.abandon();
        throw error;
      } finally {
        signal.removeEventListener("abort", onAbort);
      }
    })
    .onNotification(V1.methods.agent.mcp.message, async ({ params }) => {
      await agent.agent.notify(V2.methods.agent.mcp.message, params);
    })
    .onNotification(V1.methods.agent.session.cancel, async ({ params }) => {
      await agent.agent.notify(V2.methods.agent.session.cancel, { sessionId: params.sessionId });
    });

  /** v2 can put the commands in the answer; v1 has only the update: sent right after the answer. */
  function announceCommands(sessionId: string, commands: V2.AvailableCommand[] | undefined): void {
    if (!commands?.length) return;
    setImmediate(() => forward(sessionId, { sessionUpdate: "available_commands_update", availableCommands: v1Commands(commands) }));
  }

  async function restore(params: V1.LoadSessionRequest | V1.ResumeSessionRequest, replay: boolean, signal: AbortSignal): Promise<V1.LoadSessionResponse> {
    sessionFor(params.sessionId);
    const restored = await agent.agent.request(
      V2.methods.agent.session.resume,
      {
        sessionId: params.sessionId,
        cwd: params.cwd,
        mcpServers: v2McpServers(params.mcpServers ?? []),
        ...(params.additionalDirectories ? { additionalDirectories: params.additionalDirectories } : {}),
        ...(replay ? { replayFrom: { type: "start" } } : {}),
      },
      { cancellationSignal: signal },
    );
    // v1: the replay is delivered before the answer.
    await settle(sent);
    announceCommands(params.sessionId, restored.availableCommands);
    const configOptions = v1ConfigOptions(restored.configOptions);
    return configOptions ? { configOptions } : {};
  }

  return { app, answeredVersion: () => answered };
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
