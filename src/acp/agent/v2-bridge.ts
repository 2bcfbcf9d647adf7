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
import type { AcpServedConnection } from "./runtime.js";
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
 * - The unstable methods (fork, set_title, status, archive, providers, auth/status, mcp/message)
 *   are forwarded as they are; v2 advertises them only when the runtime does (convert.ts).
 */
export function serveV2(stream: V2.Stream, serveV1: (client: V1.ClientApp) => AcpServedConnection, logger: Logger): AcpServedConnection {
  let runtime: V1.ClientContext | undefined;
  const sessions = new Map<string, BridgeSession>();
  const sessionFor = (id: string): BridgeSession => {
    let session = sessions.get(id);
    if (!session) sessions.set(id, (session = new BridgeSession()));
    return session;
  };
  const front = V2.agent({ name: "agentkit-acp (ACP v2)" });
  // The SDK writes notifications asynchronously and answers directly: an answer that must follow
  // the updates before it (resume after its replay) waits for the last one (they are written in order).
  let sent: Promise<void> = Promise.resolve();
  const notify = (sessionId: string, update: V2.SessionUpdate): void => {
    sent = connection.client.notify(V2.methods.client.session.update, { sessionId, update }).catch((error: unknown) => {
      logger.debug("a v2 session/update was not sent", { sessionId, error: errorMessage(error) });
    });
  };

  const back = V1.client({ name: "agentkit-acp v2 bridge" })
    .onConnect((c) => {
      runtime = c.agent;
    })
    .onNotification(V1.methods.client.session.update, ({ params }) => {
      const session = sessionFor(params.sessionId);
      const update = session.updates.convert(params.update);
      if (!update) return;
      // The first update of a turn shows it started: acknowledge the prompt and say running first.
      session.turn?.started();
      notify(params.sessionId, update);
    })
    .onRequest(V1.methods.client.session.requestPermission, async ({ params, signal }) => {
      const answer = await blockedOnUser(params.sessionId, signal, () =>
        connection.client.request(V2.methods.client.session.requestPermission, v2PermissionRequest(params), { cancellationSignal: signal, stopWaitingOnCancel: true }),
      );
      return answer as V1.RequestPermissionResponse;
    })
    .onNotification(V1.methods.client.auth.statusUpdate, ({ params }) => {
      void connection.client.notify(V2.methods.client.auth.statusUpdate, params).catch((error: unknown) => {
        logger.debug("a v2 auth/status_update was not sent", { error: errorMessage(error) });
      });
    })
    .onNotification(V1.methods.client.elicitation.complete, ({ params }) => {
      void connection.client.notify(V2.methods.client.elicitation.complete, params).catch((error: unknown) => {
        logger.debug("a v2 elicitation/complete was not sent", { error: errorMessage(error) });
      });
    })
    // MCP over ACP: the runtime's requests to the client's \`acp\` MCP servers, and their notifications.
    .onRequest(V1.methods.client.mcp.message, async ({ params, signal }) =>
      (await connection.client.request(V2.methods.client.mcp.message, params, { cancellationSignal: signal, stopWaitingOnCancel: true })) as V1.MessageMcpResponse,
    )
    .onRequest(V1.methods.client.elicitation.create, async ({ params, signal }) => {
      const sessionId = "sessionId" in params && typeof params.sessionId === "string" ? params.sessionId : undefined;
      const answer = await blockedOnUser(sessionId, signal, () =>
        connection.client.request(V2.methods.client.elicitation.create, params as V2.CreateElicitationRequest, { cancellationSignal: signal, stopWaitingOnCancel: true }),
      );
      return answer as V1.CreateElicitationResponse;
    });

  /**
   * A turn waiting for the human cannot go on (its tool calls run one at a time): v2 says
   * `requires_action` while the question is open, and `running` again once it is answered
   * (a cancelled question is followed by the turn's idle instead).
   */
  async function blockedOnUser<T>(sessionId: string | undefined, signal: AbortSignal, ask: () => Promise<T>): Promise<T> {
    const turn = sessionId === undefined ? undefined : sessions.get(sessionId)?.turn;
    if (!turn || sessionId === undefined) return ask();
    turn.started();
    notify(sessionId, v2State("requires_action"));
    try {
      return await ask();
    } finally {
      if (!signal.aborted && sessions.get(sessionId)?.turn === turn) notify(sessionId, v2State("running"));
    }
  }

  const agent = (): V1.ClientContext => {
    if (!runtime) throw V1.RequestError.internalError(undefined, "the runtime connection is not open");
    return runtime;
  };

  front
    .onRequest(V2.methods.agent.initialize, async ({ params }) => {
      const elicitation = params.capabilities?.elicitation;
      const init = await agent().request(V1.methods.agent.initialize, {
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
    })
    .onRequest(V2.methods.agent.auth.login, async ({ params }) => {
      await agent().request(V1.methods.agent.authenticate, { methodId: params.methodId });
      return {};
    })
    .onRequest(V2.methods.agent.auth.logout, async () => {
      await agent().request(V1.methods.agent.logout, {});
      return {};
    })
    .onRequest(V2.methods.agent.auth.status, async () => agent().request(V1.methods.agent.auth.status, {}))
    // providers/*: the same shapes in v1 and v2.
    .onRequest(V2.methods.agent.providers.list, async () => agent().request(V1.methods.agent.providers.list, {}))
    .onRequest(V2.methods.agent.providers.set, async ({ params }) => {
      await agent().request(V1.methods.agent.providers.set, params);
      return {};
    })
    .onRequest(V2.methods.agent.providers.disable, async ({ params }) => {
      await agent().request(V1.methods.agent.providers.disable, params);
      return {};
    })
    .onRequest(V2.methods.agent.session.new, async ({ params, signal }) => {
      const opened = await agent().request(
        V1.methods.agent.session.new,
        { cwd: params.cwd, mcpServers: v1McpServers(params.mcpServers), ...(params.additionalDirectories ? { additionalDirectories: params.additionalDirectories } : {}) },
        { cancellationSignal: signal },
      );
      sessionFor(opened.sessionId);
      const configOptions = v2ConfigOptions(opened.configOptions);
      return { sessionId: opened.sessionId, ...(configOptions ? { configOptions } : {}) };
    })
    .onRequest(V2.methods.agent.session.resume, async ({ params, signal }) => {
      const base = { sessionId: params.sessionId, cwd: params.cwd, mcpServers: v1McpServers(params.mcpServers), ...(params.additionalDirectories ? { additionalDirectories: params.additionalDirectories } : {}) };
      const replay = params.replayFrom?.type === "start";
      const session = sessionFor(params.sessionId);
      let restored: { configOptions?: V1.SessionConfigOption[] | null };
      if (replay) restored = await agent().request(V1.methods.agent.session.load, base, { cancellationSignal: signal });
      else restored = await agent().request(V1.methods.agent.session.resume, base, { cancellationSignal: signal });
      // v2: after replay and before the answer, a snapshot of the session's state.
      notify(params.sessionId, v2State(session.turn ? "running" : "idle"));
      await sent;
      const configOptions = v2ConfigOptions(restored.configOptions);
      return configOptions ? { configOptions } : {};
    })
    .onRequest(V2.methods.agent.session.list, async ({ params }) => {
      const listed = await agent().request(V1.methods.agent.session.list, {
        ...(params.cwd ? { cwd: params.cwd } : {}),
        ...(params.cursor ? { cursor: params.cursor } : {}),
        ...(params.archived ? { archived: params.archived } : {}),
      });
      return { sessions: listed.sessions.map(v2SessionInfo), ...(listed.nextCursor ? { nextCursor: listed.nextCursor } : {}) };
    })
    .onRequest(V2.methods.agent.session.fork, async ({ params, signal }) => {
      const forked = await agent().request(
        V1.methods.agent.session.fork,
        { sessionId: params.sessionId, cwd: params.cwd, mcpServers: v1McpServers(params.mcpServers), ...(params.additionalDirectories ? { additionalDirectories: params.additionalDirectories } : {}) },
        { cancellationSignal: signal },
      );
      sessionFor(forked.sessionId);
      const configOptions = v2ConfigOptions(forked.configOptions);
      return { sessionId: forked.sessionId, ...(configOptions ? { configOptions } : {}) };
    })
    .onRequest(V2.methods.agent.session.setTitle, async ({ params }) => agent().request(V1.methods.agent.session.setTitle, { sessionId: params.sessionId, title: params.title }))
    .onRequest(V2.methods.agent.session.status, async ({ params }) => {
      const { status } = await agent().request(V1.methods.agent.session.status, { sessionId: params.sessionId });
      // v2 adds the open session's state snapshot (the bridge knows whether a turn runs).
      const session = sessions.get(params.sessionId);
      return { status, ...(status === "open" && session ? { state: { state: session.turn ? "running" : "idle" } as V2.StateUpdate } : {}) };
    })
    .onRequest(V2.methods.agent.session.archive, async ({ params }) => {
      // Archiving an open session closes it (the runtime does): held prompts are answered first.
      sessions.get(params.sessionId)?.dropHeld();
      await agent().request(V1.methods.agent.session.archive, { sessionId: params.sessionId });
      sessions.delete(params.sessionId);
      return {};
    })
    .onRequest(V2.methods.agent.session.unarchive, async ({ params }) => {
      await agent().request(V1.methods.agent.session.unarchive, { sessionId: params.sessionId });
      return {};
    })
    .onRequest(V2.methods.agent.session.close, async ({ params }) => {
      sessions.get(params.sessionId)?.dropHeld();
      await agent().request(V1.methods.agent.session.close, { sessionId: params.sessionId });
      sessions.delete(params.sessionId);
      return {};
    })
    .onRequest(V2.methods.agent.session.delete, async ({ params }) => {
      await agent().request(V1.methods.agent.session.delete, { sessionId: params.sessionId });
      sessions.delete(params.sessionId);
      return {};
    })
    .onRequest(V2.methods.agent.session.setConfigOption, async ({ params }) => {
      const value = params.type === "boolean" ? { type: "boolean" as const, value: params.value as boolean } : { value: String(params.value) };
      const answer = await agent().request(V1.methods.agent.session.setConfigOption, { sessionId: params.sessionId, configId: params.configId, ...value });
      return { configOptions: v2ConfigOptions(answer.configOptions) ?? [] };
    })
    .onRequest(V2.methods.agent.session.prompt, async ({ params }) => {
      const session = sessions.get(params.sessionId);
      if (!session) throw sessionNotFound(params.sessionId);
      if (session.busy) await session.waitTurn();
      return session.startTurn(params.sessionId, () => agent().request(V1.methods.agent.session.prompt, { sessionId: params.sessionId, prompt: params.prompt as V1.ContentBlock[] }), notify);
    })
    .onNotification(V2.methods.agent.mcp.message, async ({ params }) => {
      await agent().notify(V1.methods.agent.mcp.message, params);
    })
    .onNotification(V2.methods.agent.session.cancel, async ({ params }) => {
      sessions.get(params.sessionId)?.dropHeld();
      await agent().notify(V1.methods.agent.session.cancel, { sessionId: params.sessionId });
    });

  // The handlers above run only once both connections exist.
  const connection = front.connect(stream);
  const served = serveV1(back);
  const v2 = connection;
  void v2.closed.then(() => served.close());
  void served.closed.then(() => v2.close());
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
