import type { AgentContext as StableAgentContext, McpServer as StableMcpServer } from "@agentclientprotocol/sdk";
import type { AgentApp, AgentContext, InitializeResponse, NewSessionRequest, NewSessionResponse, PromptCapabilities } from "@agentclientprotocol/sdk/unstable";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { toRequestError } from "../errors.js";
import { traceIncomingRequests, type InboundTraceContext } from "../tracing.js";
import type { Logger } from "../../core/index.js";
import { CancellationController, errorMessage, newId, raceAbort } from "../../core/index.js";
import type { LoopDriver } from "../../loop/index.js";
import { AcpClientHandle } from "./client-handle.js";
import type { AcpAgentFactory, AcpAgentFactoryContext } from "./factory.js";
import { startSessionAgent } from "./factory.js";
import type { AcpIntegration } from "./integration.js";
import { sessionNotFound } from "./integration.js";
import type { AcceptedContent } from "./input.js";
import type { LifecycleHost, LifecycleSessionView, SessionRestore } from "./lifecycle.js";
import type { LifecycleSettings } from "./lifecycle-settings.js";
import { ConnectionLifecycle } from "./lifecycle.js";
import type { AcpAuthentication } from "./auth.js";
import { credentialRefusal, elicitCredential } from "./credential-elicitation.js";
import type { AcpProviders } from "./providers.js";
import { mcpServerConfigs, refuseNonPublicMcpUrls, type AcpMcpTransports } from "./mcp-servers.js";
import type { McpAcpChannel } from "../../tools/index.js";
import { checkWorkspaceDirectory } from "./path-params.js";
import { SessionWarnings } from "./session-warnings.js";
import type { AcpSessionHandle } from "./session.js";
import type { QuotaGate } from "./quotas.js";
import type { AcpAuditSink } from "./audit-trail.js";
import { auditIncomingRequests } from "./audit-requests.js";

export interface RuntimeSettings {
  integration: AcpIntegration;
  factory: AcpAgentFactory;
  maxSessions: number;
  promptCapabilities: Required<Pick<PromptCapabilities, "image" | "audio" | "embeddedContext">>;
  logger: Logger;
  closeTimeoutMs: number;
  /** Bound on each fs/terminal request to the client. */
  clientRequestTimeoutMs: number;
  /** Whether the client's `_meta` trace context parents our request spans. */
  inboundTraceContext: InboundTraceContext;
  /** Advertised MCP transports besides stdio (session/new refuses others with -32602). */
  mcpTransports: AcpMcpTransports;
  authentication: AcpAuthentication;
  /** Store, modes, model choices, slash commands (see lifecycle.ts). */
  lifecycle: LifecycleSettings;
  /** The unstable providers/* methods (advertised when set and the feature is on). */
  providers: AcpProviders | undefined;
  /** ACP versions served on streams (runtime.ts). */
  protocol: "v1" | "v2" | "auto";
  /** Ask for a missing credential on a loopback key page (URL elicitation); `false`: answer -32000. */
  keyPage: { lifetimeMs: number } | false;
  /** Real path of the directory holding one workspace per principal (cwd and roots must be inside theirs). */
  workspaceRoot: string | undefined;
  /** Per-principal quotas across instances (`serve --quota`); undefined: none. */
  quotas: QuotaGate | undefined;
  /** Who did what (`serve`'s audit trail); undefined: nothing recorded. */
  audit: AcpAuditSink | undefined;
}

/** The only protocol version this agent speaks; answered whatever the client asks (ACP negotiation). */
export const SUPPORTED_PROTOCOL_VERSION = 1;

interface RuntimeSession {
  handle: AcpSessionHandle;
  driver: LoopDriver;
  close: (() => void | Promise<void>) | undefined;
  running: Promise<unknown> | undefined;
  /** Set once session/close (or shutdown) began: the session takes no new prompts. */
  closing: boolean;
  warnings: SessionWarnings;
  /** Gives back the session's `sessions` quota slot. */
  releaseQuota: () => Promise<void>;
}

/** One client connection's state and handlers: its client handle and the sessions it opened. */
export class AcpConnectionState implements LifecycleHost {
  readonly #settings: RuntimeSettings;
  /** Who this connection acts for (see `AcpServeOptions.principal`). */
  readonly principal: string;
  readonly #lifecycle: ConnectionLifecycle;
  readonly #totalSessions: () => number;
  readonly #refusal: () => string | undefined;
  readonly #sessions = new Map<string, RuntimeSession>();
  /** This connection's way of running prompts (one per connection). */
  readonly #port: ReturnType<AcpIntegration["inputPort"]>;
  #client: AcpClientHandle | undefined;
  /** The SDK context from initialize, for unstable client notifications (auth/status_update). */
  #context: AgentContext | undefined;
  /** The auth status this connection last saw or sent (auth/status_update only on a change). */
  #authState: string | undefined;
  /** A key page this connection is waiting on (one at a time). */
  #askingForKey = false;
  #closing = false;
  /** MCP over ACP: this connection's caller of the client's `acp` MCP servers (when advertised). */
  readonly #mcpCaller: acp.McpOverAcpCaller | undefined;

  constructor(settings: RuntimeSettings, principal: string, totalSessions: () => number, refusal: () => string | undefined = () => undefined) {
    this.#settings = settings;
    this.principal = principal;
    this.#totalSessions = totalSessions;
    this.#refusal = refusal;
    this.#lifecycle = new ConnectionLifecycle(settings.lifecycle, this, settings.logger);
    this.#port = settings.integration.inputPort();
    if (settings.mcpTransports.acp) this.#mcpCaller = new acp.McpOverAcpCaller({ clientInfo: { name: settings.integration.name, version: settings.integration.version } });
  }

  get sessionCount(): number {
    return this.#sessions.size;
  }

  buildApp(): AgentApp {
    const { integration } = this.#settings;
    // Every request handled gets a span (the client's trace context as parent, when honoured).
    const traced = traceIncomingRequests(acp.agent({ name: integration.name }), this.#settings.inboundTraceContext);
    const app = (this.#settings.audit ? auditIncomingRequests(traced, this.#settings.audit, this.principal) : traced)
      .onRequest(acp.methods.agent.initialize, ({ params, client }) => {
        this.#client = new AcpClientHandle(stableContext(client), params.clientCapabilities ?? {}, { requestTimeoutMs: this.#settings.clientRequestTimeoutMs });
        this.#context = client;
        this.#authState = JSON.stringify(this.#authStatus());
        return this.#initializeResponse();
      })
      .onRequest(acp.methods.agent.session.new, async ({ params, client, signal }) =>
        this.#newSession(
          params,
          this.#client ?? new AcpClientHandle(stableContext(client), {}, { requestTimeoutMs: this.#settings.clientRequestTimeoutMs }),
          undefined,
          signal,
        ),
      )
      .onRequest(acp.methods.agent.authenticate, async ({ params }) => {
        await this.#settings.authentication.authenticate(params.methodId, this.principal);
        await this.#authChanged();
        return {};
      })
      .onRequest(acp.methods.agent.session.prompt, async ({ params, signal }) => {
        if (!this.#sessions.has(params.sessionId)) await this.#lifecycle.refuseIfActiveElsewhere(params.sessionId);
        const session = this.#session(params.sessionId);
        // Quotas are checked before the turn: a running turn is never cut by one.
        const endTurn = await this.#settings.quotas?.startTurn(this.principal, params.sessionId, newId("turn"));
        try {
          return await this.#prompt(session, params, signal);
        } finally {
          await endTurn?.();
        }
      })
      .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
        const session = this.#sessions.get(params.sessionId);
        if (session) session.handle.interrupt();
        else this.#settings.logger.debug("session/cancel for an unknown session; ignored", { sessionId: params.sessionId });
      })
      .onRequest(acp.methods.agent.session.close, async ({ params }) => {
        await this.#closeSession(this.#session(params.sessionId), "session/close");
      });
    this.#registerAuthAndProviders(app);
    return this.#lifecycle.register(app);
  }

  async #prompt(session: RuntimeSession, params: acp.PromptRequest, signal: AbortSignal): Promise<acp.PromptResponse> {
    if ((await this.#unblock(session, signal)) === "cancelled") return { stopReason: "cancelled" };
    await session.warnings.beforePrompt();
    // A $/cancel_request for the prompt cancels the turn like session/cancel.
    const onAbort = (): void => session.handle.interrupt("prompt request cancelled");
    signal.addEventListener("abort", onAbort, { once: true });
    const port = this.#port;
    const running = this.#lifecycle.prompt(session.handle, params.prompt, () => port.prompt(session.handle.acpSessionId, session.driver, params.prompt, "reject"));
    if (session.running === undefined) session.running = running; // a rejected busy prompt must not replace it
    try {
      return await running;
    } finally {
      if (session.running === running) session.running = undefined;
      signal.removeEventListener("abort", onAbort);
    }
  }

  #registerAuthAndProviders(app: AgentApp): void {
    const { authentication } = this.#settings;
    if (authentication.logout) {
      app.onRequest(acp.methods.agent.logout, async () => {
        await authentication.logout?.(this.principal);
        await this.#authChanged();
        return {};
      });
    }
    const providers = this.#providers();
    if (providers) {
      app
        .onRequest(acp.methods.agent.providers.list, () => ({ providers: providers.list(this.principal) }))
        .onRequest(acp.methods.agent.providers.set, async ({ params }) => {
          await providers.set(params.providerId, { apiType: params.apiType, baseUrl: params.baseUrl, headers: params.headers ?? {} }, this.principal);
          this.#settings.logger.info("provider configured", { providerId: params.providerId, apiType: params.apiType, baseUrl: params.baseUrl });
          return {};
        })
        .onRequest(acp.methods.agent.providers.disable, async ({ params }) => {
          await providers.disable(params.providerId, this.principal);
          return {};
        });
    }
    if (this.#authStatus() !== undefined) app.onRequest(acp.methods.agent.auth.status, () => ({ ...this.#authStatus()! }));
    // Progress of an MCP request over ACP comes back as mcp/message notifications.
    if (this.#mcpCaller) app.onNotification(acp.methods.agent.mcp.message, this.#mcpCaller.handleNotification);
  }

  #providers(): AcpProviders | undefined {
    return this.#settings.lifecycle.unstable.providers ? this.#settings.providers : undefined;
  }

  /** The unstable auth status, when the authentication reports one and the feature is on. */
  #authStatus(): ReturnType<NonNullable<RuntimeSettings["authentication"]["status"]>> | undefined {
    const { authentication, lifecycle } = this.#settings;
    return lifecycle.unstable.authStatus ? authentication.status?.(this.principal) : undefined;
  }

  /** auth/status_update after logout / authenticate, when the status differs from the last one. */
  async #authChanged(): Promise<void> {
    const status = this.#authStatus();
    if (status === undefined || !this.#context) return;
    const key = JSON.stringify(status);
    if (key === this.#authState) return;
    this.#authState = key;
    await this.#context.notify(acp.methods.client.auth.statusUpdate, { ...status }).catch((error: unknown) => {
      this.#settings.logger.debug("auth/status_update not sent", { error: errorMessage(error) });
    });
  }

  #initializeResponse(): InitializeResponse {
    const { integration, promptCapabilities } = this.#settings;
    return {
      protocolVersion: SUPPORTED_PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: this.#lifecycle.loadSession,
        promptCapabilities: { ...promptCapabilities },
        // `acp` (unstable) only when on: a stable client never sees the unknown key.
        mcpCapabilities: { http: this.#settings.mcpTransports.http, sse: this.#settings.mcpTransports.sse, ...(this.#settings.mcpTransports.acp ? { acp: true } : {}) },
        sessionCapabilities: { close: {}, additionalDirectories: {}, ...this.#lifecycle.sessionCapabilities() },
        ...(this.#providers() ? { providers: {} } : {}),
        ...(this.#settings.authentication.logout || this.#authStatus() !== undefined
          ? { auth: { ...(this.#settings.authentication.logout ? { logout: {} } : {}), ...(this.#authStatus() !== undefined ? { status: {} } : {}) } }
          : {}),
      },
      authMethods: this.#settings.authentication.methods.map((m) => ({ ...m })),
      agentInfo: { name: integration.name, version: integration.version },
      ...(integration.infoMeta ? { _meta: integration.infoMeta } : {}),
    };
  }

  #session(acpSessionId: string): RuntimeSession {
    const session = this.#sessions.get(acpSessionId);
    if (!session || session.closing) throw sessionNotFound(acpSessionId);
    return session;
  }

  // LifecycleHost: session/load and session/resume open stored sessions through #newSession.
  async openSession(params: NewSessionRequest, restore: SessionRestore, signal?: AbortSignal): Promise<LifecycleSessionView> {
    if (!this.#client) throw acp.RequestError.invalidRequest(undefined, "initialize first");
    await this.#newSession(params, this.#client, restore, signal);
    return this.#session(restore.acpSessionId);
  }

  session(acpSessionId: string): LifecycleSessionView {
    return this.#session(acpSessionId);
  }

  checkDirectory(path: string, field: string): string {
    return checkWorkspaceDirectory(path, field, { principal: this.principal, workspaceRoot: this.#settings.workspaceRoot });
  }

  foreignSession(sessionId: string, owner: string): void {
    this.#settings.audit?.record({ principal: this.principal, sessionId, action: "foreign_session", detail: { owner } });
  }

  async closeSession(acpSessionId: string, why: string): Promise<void> {
    const session = this.#sessions.get(acpSessionId);
    if (session) await this.#closeSession(session, why);
  }

  /** Opens a session: a new one, or (restore) a stored one under its id with its transcript. */
  /** `signal`: the opening request's; when the client cancels it ($/cancel_request) nothing is left open and -32800 is answered. */
  async #newSession(params: NewSessionRequest, client: AcpClientHandle, restore?: SessionRestore, signal?: AbortSignal): Promise<NewSessionResponse> {
    const cwd = this.checkDirectory(params.cwd, "cwd");
    const additionalDirectories = (params.additionalDirectories ?? []).map((d, i) => this.checkDirectory(d, `additionalDirectories[${i}]`));
    // Servers of an unknown type (e.g. unstable `acp`) are refused there with -32602.
    const mcpServers = params.mcpServers as StableMcpServer[];
    const mcpConfigs = mcpServerConfigs(mcpServers, this.#settings.mcpTransports, this.#mcpChannel());
    await refuseNonPublicMcpUrls(mcpConfigs, this.#settings.mcpTransports);
    if (this.#closing) throw acp.RequestError.invalidRequest(undefined, "the agent is shutting down");
    const refusal = this.#refusal();
    if (refusal !== undefined) throw acp.RequestError.invalidRequest(undefined, refusal);
    if (this.#totalSessions() >= this.#settings.maxSessions) {
      throw acp.RequestError.invalidRequest(
        { maxSessions: this.#settings.maxSessions },
        `too many open sessions (the limit is ${this.#settings.maxSessions}); close one with session/close first`,
      );
    }
    const acpSessionId = restore?.acpSessionId ?? newId("sess");
    const releaseQuota = (await this.#settings.quotas?.openSession(this.principal, acpSessionId)) ?? (async () => {});
    try {
      return await this.#startSession(params, { cwd, additionalDirectories, mcpServers, mcpConfigs }, client, { acpSessionId, releaseQuota }, restore, signal);
    } catch (error) {
      await releaseQuota();
      throw error;
    }
  }

  /** The rest of #newSession once the request was checked and the session's quota slot taken. */
  async #startSession(
    params: NewSessionRequest,
    checked: { cwd: string; additionalDirectories: string[]; mcpServers: StableMcpServer[]; mcpConfigs: ReturnType<typeof mcpServerConfigs> },
    client: AcpClientHandle,
    { acpSessionId, releaseQuota }: { acpSessionId: string; releaseQuota: () => Promise<void> },
    restore: SessionRestore | undefined,
    signal: AbortSignal | undefined,
  ): Promise<NewSessionResponse> {
    const { integration, logger } = this.#settings;
    const { cwd, additionalDirectories, mcpServers, mcpConfigs } = checked;
    const controller = new CancellationController();
    const context: AcpAgentFactoryContext = {
      acpSessionId,
      agentSessionId: newId("loop"),
      principal: this.principal,
      cwd,
      additionalDirectories,
      integration,
      cancellation: controller.handle(),
      mcpServers,
      mcpServerConfigs: mcpConfigs,
      clientCapabilities: client.capabilities,
      client,
      metadata: { acpSessionId, cwd, additionalDirectories, ...(params._meta ? { acpMeta: params._meta } : {}) },
      logger,
      ...(signal ? { signal } : {}),
    };
    const prepared = this.#lifecycle.prepare(acpSessionId, context.agentSessionId, restore);
    Object.assign(context, { transcriptObservers: prepared.transcriptObservers }, prepared.snapshot ? { snapshot: prepared.snapshot } : {});
    let started: ReturnType<typeof startSessionAgent>;
    try {
      started = startSessionAgent(await this.#settings.factory(context), context);
    } catch (error) {
      if (signal?.aborted) throw cancelled(signal);
      logger.error("the agent factory failed", { error: errorMessage(error) });
      throw toRequestError(error, "could not create the session's agent");
    }
    if (signal?.aborted) {
      await Promise.resolve(started.close?.()).catch((e: unknown) => logger.warn("session cleanup failed", { sessionId: acpSessionId, error: errorMessage(e) }));
      throw cancelled(signal);
    }
    prepared.controls.attach(started.driver);
    const handle = integration.bindSession({
      acpSessionId,
      agentSessionId: started.driver.sessionId,
      client,
      accepts: this.#accepted(started.driver),
      cancellation: controller,
      principal: this.principal,
    });
    const warnings = new SessionWarnings(client, acpSessionId, logger);
    this.#sessions.set(acpSessionId, { handle, driver: started.driver, close: started.close, running: undefined, closing: false, warnings, releaseQuota });
    const opened = this.#sessions.get(acpSessionId)!;
    let state: Omit<NewSessionResponse, "sessionId">;
    try {
      state = await this.#lifecycle.opened(opened, prepared, { ...params, cwd, additionalDirectories }, restore);
    } catch (error) {
      await this.#closeSession(opened, "the session could not be opened");
      logger.error("opening the session failed", { sessionId: acpSessionId, error: errorMessage(error) });
      throw toRequestError(error, "could not open the session");
    }
    if (signal?.aborted) {
      await this.#closeSession(opened, "the client cancelled the request");
      if (!restore) await this.#lifecycle.discard(acpSessionId);
      throw cancelled(signal);
    }
    logger.info(restore ? "session restored" : "session opened", { sessionId: acpSessionId, cwd });
    warnings.announce(started.warnings);
    // After this answer is written (setImmediate runs after the write's microtasks), load the
    // model's libraries so the first prompt does not wait for them; start-up itself stays lazy.
    setImmediate(() => started.driver.model.preload?.());
    return { sessionId: acpSessionId, ...state };
  }

  /** The way to the client's `acp` MCP servers: `mcp/message` through the SDK's caller. */
  #mcpChannel(): McpAcpChannel | undefined {
    const caller = this.#mcpCaller;
    if (!caller) return undefined;
    return {
      request: (serverId, method, params, options) => {
        const context = this.#context;
        if (!context) return Promise.reject(acp.RequestError.invalidRequest(undefined, "initialize first"));
        // The SDK waits for the client's answer even after $/cancel_request; stop waiting at once.
        const answer = caller.request(context, serverId, method, params, options);
        return raceAbort(answer, options.signal).then((outcome) => {
          if (outcome.aborted) throw options.signal.reason instanceof Error ? options.signal.reason : new Error("aborted");
          return outcome.value;
        });
      },
    };
  }

  /**
   * While the credentials are missing: when the client can show a URL, ask the human on the key
   * page (a session/cancel or a cancelled prompt request ends the wait: "cancelled"); otherwise,
   * or when that fails, -32000 (auth required).
   */
  async #unblock(session: RuntimeSession, requestSignal: AbortSignal): Promise<"ok" | "cancelled"> {
    const { authentication, keyPage, logger } = this.#settings;
    const blocker = authentication.promptBlocker(this.principal);
    if (blocker === undefined) return "ok";
    const refuse = (message: string): never => {
      throw acp.RequestError.authRequired({ authMethods: authentication.methods.map((m) => m.id) }, message);
    };
    const shared = authentication.credentialEntry;
    const entry = shared && { label: shared.label, store: (secret: string) => shared.store(secret, this.principal) };
    if (!entry || keyPage === false || !session.handle.client.canElicitUrls) return refuse(blocker);
    if (this.#askingForKey) return refuse(`${blocker} (the key is being asked for on the key page already; wait for that prompt)`);
    this.#askingForKey = true;
    const cancellation = session.handle.cancellationHandle();
    const signal = AbortSignal.any([requestSignal, cancellation.signalSince(cancellation.generation())]);
    try {
      const outcome = await elicitCredential(session.handle.client, entry, { sessionId: session.handle.acpSessionId, signal, lifetimeMs: keyPage.lifetimeMs, logger });
      if (outcome.kind === "cancelled") return "cancelled";
      if (outcome.kind !== "stored") return refuse(credentialRefusal(blocker, outcome));
    } finally {
      this.#askingForKey = false;
    }
    await this.#authChanged();
    const still = authentication.promptBlocker(this.principal);
    return still === undefined ? "ok" : refuse(still);
  }

  /** Advertised AND supported by this session's model. */
  #accepted(driver: LoopDriver): AcceptedContent {
    const advertised = this.#settings.promptCapabilities;
    const model = driver.model.capabilities;
    return {
      image: advertised.image && model.image,
      audio: advertised.audio && model.audio,
      embeddedContext: advertised.embeddedContext && model.embeddedContext,
    };
  }

  /** Cancels the session's turn, waits (bounded) for its prompt to answer, then frees it. */
  async #closeSession(session: RuntimeSession, why: string): Promise<void> {
    const { integration, logger, closeTimeoutMs } = this.#settings;
    const id = session.handle.acpSessionId;
    if (!this.#sessions.has(id) || session.closing) return;
    session.closing = true;
    session.handle.interrupt(`${why}: session closed`);
    if (session.running) {
      const settled = session.running.then(
        () => true,
        () => true,
      );
      const done = await Promise.race([settled, delay(closeTimeoutMs).then(() => false)]);
      if (!done) logger.warn("a cancelled turn did not end in time; closing the session anyway", { sessionId: id });
    }
    this.#sessions.delete(id);
    integration.unbindSession(id);
    await session.releaseQuota();
    await this.#lifecycle.closed(id);
    try {
      await session.close?.();
    } catch (error) {
      logger.warn("session cleanup failed", { sessionId: id, error: errorMessage(error) });
    }
    logger.info("session closed", { sessionId: id, why });
  }

  /** Cancels every running turn at once (the connection is gone: nobody can answer a permission). */
  interruptAll(reason: string): void {
    for (const session of this.#sessions.values()) session.handle.interrupt(reason);
  }

  /** Closes every session of this connection (connection end, shutdown). */
  async closeAll(why: string): Promise<void> {
    this.#closing = true;
    await Promise.all([...this.#sessions.values()].map((s) => this.#closeSession(s, why)));
  }
}

/**
 * The app is built from the SDK's `/unstable` entrypoint (a superset of stable v1); the client
 * handle, which embedders also build from their own stable apps, takes the stable context. Both
 * are the same connection object at run time; only the generated class declarations differ.
 */
function stableContext(context: AgentContext): StableAgentContext {
  return context as unknown as StableAgentContext;
}

/** The answer to a request the client cancelled: -32800 (the SDK's reason), never an internal error. */
function cancelled(signal: AbortSignal): Error {
  return signal.reason instanceof acp.RequestError ? signal.reason : acp.RequestError.requestCancelled({}, "the client cancelled the request");
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
