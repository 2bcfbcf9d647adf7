import * as acp from "@agentclientprotocol/sdk/unstable";
import { createStderrLogger, type Logger } from "../../core/logger.js";
import { traceIncomingRequests } from "../tracing.js";
import { requireAdditionalDirectories, requireCapability, validateMcpServers } from "./capabilities.js";
import { registerElicitation } from "./elicitation.js";
import { resolveTimeouts, validateConfig, type AcpAgentConfig, type ResolvedTimeouts } from "./config.js";
import type { AgentEndError, AgentEndpoints } from "./endpoint.js";
import { AuthenticationRequiredError, ClientClosedError } from "./errors.js";
import { hostCapabilities, registerHostHandlers } from "./host-bridge.js";
import type { HostSessionInfo } from "./host-services.js";
import { Link, type RequestOptions } from "./link.js";
import { InProcessMcpServers, type SessionMcpServer } from "./mcp-over-acp.js";
import { processEndpoints } from "./process.js";
import { ClientPermissionPolicy } from "./permissions.js";
import { recoverSessions } from "./recovery.js";
import type { AcpSessionEvent } from "./events.js";
import { AcpSession, type SessionHost } from "./session.js";

// `AcpSession.client` is this client: session.ts declares the type, this file completes it (no import back).
declare module "./session.js" {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the members are AcpClient's
  interface SessionOwner extends AcpClient {}
}

/** Options of `newSession`, `loadSession`, `resumeSession`, `forkSession`; each defaults to the client config's. */
export interface SessionOptions {
  /** Absolute; defaults to the config's cwd. */
  cwd?: string;
  additionalDirectories?: string[];
  /**
   * Defaults to the config's MCP servers. Besides stdio/http/sse declarations, in-process
   * servers `{ name, server: () => McpServer }` (official MCP SDK), served over the ACP
   * connection when the agent advertises `mcpCapabilities.acp` (MCP over ACP, unstable).
   */
  mcpServers?: SessionMcpServer[];
  signal?: AbortSignal;
  /**
   * A session listener attached before anything is delivered, so it also sees updates sent
   * before the session/new answer and the history `session/load` replays. Stays attached.
   */
  onEvent?: (event: AcpSessionEvent) => void;
}


/** What `onLifecycle` listeners hear: the agent exited, was restarted or reconnected (sessions re-attached), or recovery gave up. */
export type ClientLifecycleEvent =
  | { type: "agent_exited"; error: AgentEndError }
  | { type: "recovered"; restarts: number; sessions: string[] }
  | { type: "recovery_failed"; error: unknown };

const MAX_BUFFERED_UPDATES = 10_000;

/**
 * One ACP agent process (or, with `url`, a connection to a served agent) and connection: initialize (protocol version checked), optional
 * authentication, capability-gated session methods, permission requests answered through
 * the policy, host services forwarded. `close()` ends the whole process tree.
 */
export class AcpClient {
  readonly config: AcpAgentConfig;
  readonly policy: ClientPermissionPolicy;
  readonly logger: Logger;
  readonly timeouts: ResolvedTimeouts;
  #link!: Link;
  /** Where the agent runs (a process, a URL): opens each connection and says how to recover. */
  #endpoints!: AgentEndpoints;
  #recovering: Promise<void> | undefined;
  #dead: Error | undefined;
  #closing: Promise<void> | undefined;
  #restarts = 0;
  readonly #sessions = new Map<string, AcpSession>();
  /** The MCP servers each session was opened with (re-sent on recovery). */
  readonly #sessionMcp = new Map<string, acp.McpServer[]>();
  /** Updates for sessions not known yet (sent before the session/new answer). */
  readonly #early = new Map<string, acp.SessionUpdate[]>();
  #earlyCount = 0;
  readonly #lifecycle = new Set<(event: ClientLifecycleEvent) => void>();
  readonly #authListeners = new Set<(status: acp.AuthStatusUpdateNotification) => void>();
  /** In-process MCP servers offered over the ACP connection (MCP over ACP). */
  readonly #mcp = new InProcessMcpServers();

  private constructor(config: AcpAgentConfig, policy: ClientPermissionPolicy) {
    this.config = config;
    this.policy = policy;
    this.logger = config.logger ?? createStderrLogger("warn", "agentkit-acp client");
    this.timeouts = resolveTimeouts(config.timeouts);
  }

  /** Spawns the agent, initializes (and authenticates when configured). Deny-all policy by default. */
  static async start(config: AcpAgentConfig, policy: ClientPermissionPolicy = ClientPermissionPolicy.denyAll()): Promise<AcpClient> {
    validateConfig(config);
    const client = new AcpClient(config, policy);
    // A URL's module is loaded only for URL agents: it brings in `ws` and the SDK's network transports.
    client.#endpoints =
      config.url === undefined ? processEndpoints(config, client.timeouts, client.logger) : (await import("./remote.js")).urlEndpoints({ ...config, url: config.url });
    client.#link = await client.#connect();
    return client;
  }

  /**
   * Spawns the agent and opens one session, their lifetimes tied: closing the session closes
   * the client (and ends the process tree). Deny-all policy unless one is given.
   */
  static async startSession(config: AcpAgentConfig, policy: ClientPermissionPolicy = ClientPermissionPolicy.denyAll(), options: SessionOptions = {}): Promise<AcpSession> {
    const client = await AcpClient.start(config, policy);
    try {
      const session = await client.newSession(options);
      session.onClose = () => client.close();
      return session;
    } catch (error) {
      await client.close();
      throw error;
    }
  }

  /** Runs `fn` with a fresh session; the agent's process tree is ended when `fn` settles. */
  static async withSession<T>(
    config: AcpAgentConfig,
    policy: ClientPermissionPolicy,
    fn: (session: AcpSession, client: AcpClient) => Promise<T>,
    options: SessionOptions = {},
  ): Promise<T> {
    const client = await AcpClient.start(config, policy);
    try {
      return await fn(await client.newSession(options), client);
    } finally {
      await client.close();
    }
  }

  get initializeResponse(): acp.InitializeResponse {
    return this.#link.init;
  }

  get agentCapabilities(): acp.AgentCapabilities {
    return this.#link.init.agentCapabilities ?? {};
  }

  /** The ACP version spoken with the agent: 1, or 2 with `protocol: "v2"`. */
  get protocolVersion(): number {
    return this.#link.protocolVersion;
  }

  get agentInfo(): acp.Implementation | undefined {
    return this.#link.init.agentInfo ?? undefined;
  }

  /** The agent's process id (= its process group id); undefined for a `url` agent. */
  get pid(): number | undefined {
    return this.#link.endpoint.pid;
  }

  get sessions(): AcpSession[] {
    return [...this.#sessions.values()];
  }

  onLifecycle(listener: (event: ClientLifecycleEvent) => void): () => void {
    this.#lifecycle.add(listener);
    return () => this.#lifecycle.delete(listener);
  }

  async authenticate(methodId: string, options: RequestOptions = {}): Promise<void> {
    const methods = this.#link.init.authMethods ?? [];
    if (!methods.some((m) => m.id === methodId)) throw new AuthenticationRequiredError(methods, `method "${methodId}" is not offered`);
    await this.request(acp.methods.agent.authenticate, { methodId }, options);
  }

  async newSession(options: SessionOptions = {}): Promise<AcpSession> {
    const { cwd, additionalDirectories, mcpServers } = await this.#sessionParams(options, "session/new");
    let response: acp.NewSessionResponse;
    try {
      response = await this.request(acp.methods.agent.session.new, { cwd, additionalDirectories, mcpServers }, { signal: options.signal });
    } catch (error) {
      if (error instanceof acp.RequestError && error.code === -32000) throw new AuthenticationRequiredError(this.#link.init.authMethods ?? [], error.message);
      throw error;
    }
    if (!response || typeof response.sessionId !== "string") throw new Error("the agent answered session/new without a sessionId");
    return this.#adopt(response, { cwd, additionalDirectories, mcpServers }, options);
  }

  /** Registers a session the agent just created (new / fork) and delivers updates that raced ahead. */
  #adopt(
    response: { sessionId: string; modes?: acp.SessionModeState | null; configOptions?: acp.SessionConfigOption[] | null },
    params: { cwd: string; additionalDirectories: string[]; mcpServers: acp.McpServer[] },
    options: SessionOptions,
  ): AcpSession {
    const { cwd, additionalDirectories, mcpServers } = params;
    const session = this.#register({ sessionId: response.sessionId, cwd, additionalDirectories }, response);
    this.#sessionMcp.set(response.sessionId, mcpServers);
    if (options.onEvent) session.onEvent(options.onEvent);
    // Updates that raced ahead of the answer are delivered now, in order.
    const early = this.#early.get(response.sessionId) ?? [];
    this.#early.delete(response.sessionId);
    this.#earlyCount -= early.length;
    for (const update of early) session.receive(update);
    return session;
  }

  /** `session/load` (needs `loadSession`): history is replayed to `onEvent` before this resolves. */
  async loadSession(sessionId: string, options: SessionOptions = {}): Promise<AcpSession> {
    requireCapability(this.agentCapabilities, "session/load");
    return this.#attach("session/load", sessionId, options);
  }

  /** `session/resume` (needs `sessionCapabilities.resume`): no replay. */
  async resumeSession(sessionId: string, options: SessionOptions = {}): Promise<AcpSession> {
    requireCapability(this.agentCapabilities, "session/resume");
    return this.#attach("session/resume", sessionId, options);
  }

  /** Continues a stored session: `session/resume` when advertised (no replay), else `session/load`. */
  async continueSession(sessionId: string, options: SessionOptions = {}): Promise<AcpSession> {
    if (this.agentCapabilities.sessionCapabilities?.resume != null) return this.resumeSession(sessionId, options);
    return this.loadSession(sessionId, options);
  }

  /** `archived` (`exclude` by default, `include`, `only`) needs `sessionCapabilities.archive`. */
  async listSessions(options: { cwd?: string; cursor?: string; archived?: acp.SessionArchiveFilter; signal?: AbortSignal } = {}): Promise<acp.ListSessionsResponse> {
    requireCapability(this.agentCapabilities, "session/list");
    if (options.archived !== undefined) requireCapability(this.agentCapabilities, "session/archive");
    const params = { cwd: options.cwd ?? null, cursor: options.cursor ?? null, ...(options.archived !== undefined ? { archived: options.archived } : {}) };
    const response = await this.request(acp.methods.agent.session.list, params, { signal: options.signal });
    if (!response || !Array.isArray(response.sessions)) throw new Error("the agent answered session/list without a sessions array");
    return response;
  }

  /**
   * `session/fork` (unstable; needs `sessionCapabilities.fork`): a new session on the agent with
   * the source's history; the source is untouched. The new session is open on this client.
   */
  async forkSession(sessionId: string, options: SessionOptions = {}): Promise<AcpSession> {
    requireCapability(this.agentCapabilities, "session/fork");
    const { cwd, additionalDirectories, mcpServers } = await this.#sessionParams(options, "session/fork");
    const response = await this.request(acp.methods.agent.session.fork, { sessionId, cwd, additionalDirectories, mcpServers }, { signal: options.signal });
    if (!response || typeof response.sessionId !== "string") throw new Error("the agent answered session/fork without a sessionId");
    return this.#adopt(response, { cwd, additionalDirectories, mcpServers }, options);
  }

  /** `session/set_title` (unstable; `sessionCapabilities.title`): resolves with the title the agent stored. */
  async setSessionTitle(sessionId: string, title: string, options: RequestOptions = {}): Promise<string> {
    const response = await this.#call(acp.methods.agent.session.setTitle, { sessionId, title }, options);
    const stored = typeof response?.title === "string" ? response.title : title;
    this.#sessions.get(sessionId)?.receive({ sessionUpdate: "session_info_update", title: stored });
    return stored;
  }

  /** `session/status` (unstable; `sessionCapabilities.status`): `open` (in the agent's memory) or `saved`. */
  async sessionStatus(sessionId: string, options: RequestOptions = {}): Promise<acp.SessionStatusResponse> {
    const response = await this.#call(acp.methods.agent.session.status, { sessionId }, options);
    if (!response || typeof response.status !== "string") throw new Error("the agent answered session/status without a status");
    return response;
  }

  /** `session/archive` (unstable; `sessionCapabilities.archive`): hidden from the default list; an open session is closed. */
  async archiveSession(sessionId: string, options: RequestOptions = {}): Promise<void> {
    await this.#call(acp.methods.agent.session.archive, { sessionId }, options);
    await this.#forget(sessionId);
  }

  async unarchiveSession(sessionId: string, options: RequestOptions = {}): Promise<void> {
    await this.#call(acp.methods.agent.session.unarchive, { sessionId }, options);
  }

  /** `session/close` when advertised; always releases the session's host terminals. */
  async closeSession(sessionId: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    const advertised = this.agentCapabilities.sessionCapabilities?.close != null;
    const known = this.#sessions.has(sessionId);
    if (!advertised && !known) requireCapability(this.agentCapabilities, "session/close");
    try {
      // A dead or closed agent has no session left to close: forgetting it is enough.
      if (advertised && !this.#dead) await this.request(acp.methods.agent.session.close, { sessionId }, options);
    } finally {
      await this.#forget(sessionId);
    }
  }

  async deleteSession(sessionId: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    await this.#call(acp.methods.agent.session.delete, { sessionId }, options);
    await this.#forget(sessionId);
  }

  async logout(options: RequestOptions = {}): Promise<void> {
    await this.#call(acp.methods.agent.logout, {}, options);
  }

  /** `auth/status` (unstable; `auth.status`): the agent's authentication state, without changing it. */
  async authStatus(options: RequestOptions = {}): Promise<acp.AuthStatusResponse> {
    const response = await this.#call(acp.methods.agent.auth.status, {}, options);
    if (!response || typeof response.state !== "string") throw new Error("the agent answered auth/status without a state");
    return response;
  }

  /** `providers/list` (unstable; `providers`): the agent's configurable LLM providers. */
  async listProviders(options: RequestOptions = {}): Promise<acp.ProviderInfo[]> {
    const response = await this.#call(acp.methods.agent.providers.list, {}, options);
    if (!response || !Array.isArray(response.providers)) throw new Error("the agent answered providers/list without a providers array");
    return response.providers;
  }

  /** `providers/set`: replaces one provider's routing (protocol, base URL, headers). */
  async setProvider(providerId: string, config: { apiType: string; baseUrl: string; headers?: Record<string, string> }, options: RequestOptions = {}): Promise<void> {
    await this.#call(acp.methods.agent.providers.set, { providerId, apiType: config.apiType, baseUrl: config.baseUrl, ...(config.headers ? { headers: config.headers } : {}) }, options);
  }

  /** `providers/disable` (a provider listed as `required` cannot be disabled). */
  async disableProvider(providerId: string, options: RequestOptions = {}): Promise<void> {
    await this.#call(acp.methods.agent.providers.disable, { providerId }, options);
  }

  /** `auth/status_update` notifications (the agent's authentication state changed). */
  onAuthStatus(listener: (status: acp.AuthStatusUpdateNotification) => void): () => void {
    this.#authListeners.add(listener);
    return () => this.#authListeners.delete(listener);
  }

  /** A request gated by its capability (the one named in the method table, acp/methods.ts). */
  #call<M extends acp.AgentRequestMethod>(method: M, params: acp.AgentRequestParamsByMethod[M], options: RequestOptions = {}): Promise<acp.AgentRequestResponsesByMethod[M]> {
    requireCapability(this.agentCapabilities, method);
    return this.request(method, params, options);
  }

  /** The typed raw request (no capability checks): an escape hatch for methods not wrapped here. */
  async request<M extends acp.AgentRequestMethod>(method: M, params: acp.AgentRequestParamsByMethod[M], options: RequestOptions = {}): Promise<acp.AgentRequestResponsesByMethod[M]> {
    const link = await this.#current();
    const timeoutMs = options.timeoutMs ?? (method === acp.methods.agent.session.prompt ? this.timeouts.promptMs : this.timeouts.requestMs);
    return link.request(method, params, { ...options, timeoutMs });
  }

  /** Ends every session's terminals, the connection and the agent's process tree. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#dead ??= new ClientClosedError();
      await this.#link.close(new ClientClosedError());
      await this.#mcp.close();
      await this.config.hostServices?.terminal?.dispose().catch((e: unknown) => this.logger.warn("terminal dispose failed", { error: String(e) }));
    })();
    return this.#closing;
  }

  /** SIGKILL the agent's process group now (e.g. after a second Ctrl-C). */
  async kill(): Promise<void> {
    this.#dead ??= new ClientClosedError();
    await this.#link.kill(new ClientClosedError("the agent was killed"));
    await this.close();
  }

  async #current(): Promise<Link> {
    if (this.#recovering) await this.#recovering;
    if (this.#dead) throw this.#dead;
    return this.#link;
  }

  async #connect(): Promise<Link> {
    // Requests the agent sends us (fs, terminal, permission) get a span, parented by its `_meta`.
    const app = traceIncomingRequests(acp.client({ name: "agentkit-acp" }), "honor");
    app.onNotification(acp.methods.client.session.update, ({ params }) => this.#route(params));
    app.onNotification(acp.methods.client.auth.statusUpdate, ({ params }) => {
      for (const listener of this.#authListeners) listener(params);
    });
    app.onRequest(acp.methods.client.session.requestPermission, ({ params, signal }) => {
      const session = this.#sessions.get(params.sessionId);
      if (!session) throw acp.RequestError.sessionNotFound(params.sessionId);
      return session.handlePermission(params, signal);
    });
    registerHostHandlers(app, this.config.hostServices, (id) => this.#sessions.get(id)?.info);
    this.#mcp.serve(app);
    const elicitation = registerElicitation(app, { form: this.config.elicitation, url: this.config.urlElicitation }, (id) => this.#sessions.has(id));
    // Loaded only for v2: the SDK's v2 entrypoint costs start-up time a v1 client need not pay.
    const v2 = this.config.protocol === "v2" ? (await import("./v2-bridge.js")).clientV2Bridge : undefined;
    const link = new Link(this.#endpoints.open(), this.logger, app, v2);
    this.#mcp.attach(link.connection.agent);
    try {
      const capabilities = { ...hostCapabilities(this.config.hostServices), ...(elicitation ? { elicitation } : {}) };
      await link.initialize(this.config, this.timeouts, capabilities);
    } catch (error) {
      await link.close(error instanceof Error ? error : new Error(String(error)));
      throw error;
    }
    void link.endpoint.exited.then(() => this.#onExit(link));
    return link;
  }

  #route(notification: acp.SessionNotification): void {
    const session = this.#sessions.get(notification.sessionId);
    if (session) return session.receive(notification.update);
    if (this.#earlyCount >= MAX_BUFFERED_UPDATES) {
      this.logger.warn("dropping update for an unknown session (buffer full)", { sessionId: notification.sessionId });
      return;
    }
    const list = this.#early.get(notification.sessionId) ?? [];
    list.push(notification.update);
    this.#early.set(notification.sessionId, list);
    this.#earlyCount += 1;
  }

  async #sessionParams(options: SessionOptions, method: string): Promise<{ cwd: string; additionalDirectories: string[]; mcpServers: acp.McpServer[] }> {
    const cwd = options.cwd ?? this.config.cwd;
    const additionalDirectories = options.additionalDirectories ?? this.config.additionalDirectories ?? [];
    validateConfig({ ...this.config, cwd, additionalDirectories });
    requireAdditionalDirectories(this.agentCapabilities, method, additionalDirectories);
    const mcpServers = await this.#mcp.declare(options.mcpServers ?? this.config.mcpServers ?? [], this.agentCapabilities, method);
    validateMcpServers(this.agentCapabilities, method, mcpServers);
    return { cwd, additionalDirectories, mcpServers };
  }

  async #attach(method: "session/load" | "session/resume", sessionId: string, options: SessionOptions): Promise<AcpSession> {
    const { cwd, additionalDirectories, mcpServers } = await this.#sessionParams(options, method);
    // Registered first so that replayed updates (and permission requests) find the session.
    const existing = this.#sessions.get(sessionId);
    const session = existing ?? this.#register({ sessionId, cwd, additionalDirectories }, {});
    this.#sessionMcp.set(sessionId, mcpServers);
    const unsubscribe = options.onEvent ? session.onEvent(options.onEvent) : undefined;
    let attached = false;
    try {
      const params = { sessionId, cwd, additionalDirectories, mcpServers };
      const response =
        method === "session/load"
          ? await this.request(acp.methods.agent.session.load, params, { signal: options.signal })
          : await this.request(acp.methods.agent.session.resume, params, { signal: options.signal });
      session.applyState(response ?? {});
      attached = true;
      return session;
    } catch (error) {
      if (!existing) {
        this.#sessions.delete(sessionId);
        this.#sessionMcp.delete(sessionId);
      }
      throw error;
    } finally {
      if (!attached) unsubscribe?.();
    }
  }

  #register(info: HostSessionInfo, state: { modes?: acp.SessionModeState | null; configOptions?: acp.SessionConfigOption[] | null }): AcpSession {
    const session = new AcpSession(this.#sessionHost(), info, state);
    this.#sessions.set(info.sessionId, session);
    return session;
  }

  async #forget(sessionId: string): Promise<void> {
    this.#sessionMcp.delete(sessionId);
    if (!this.#sessions.delete(sessionId)) return;
    await this.config.hostServices?.terminal?.releaseSession(sessionId).catch((e: unknown) => this.logger.warn("releasing session terminals failed", { sessionId, error: String(e) }));
  }

  #sessionHost(): SessionHost {
    return {
      capabilities: () => this.#link.init.agentCapabilities,
      request: (method, params, options) => this.request(method, params, options),
      sendCancel: async (sessionId) => {
        if (this.#dead || this.#recovering) return;
        await this.#link.notify(acp.methods.agent.session.cancel, { sessionId });
      },
      policy: this.policy,
      promptTimeoutMs: this.timeouts.promptMs,
      closeSession: (sessionId, options) => this.closeSession(sessionId, options),
      client: this,
    };
  }

  #onExit(link: Link): void {
    if (link !== this.#link || this.#closing) return;
    const error = link.endpoint.exitError();
    link.endpoint.reportLost(this.logger);
    this.#emitLifecycle({ type: "agent_exited", error });
    const recovery = this.#endpoints.recovery;
    if (this.#restarts >= recovery.limit) {
      this.#dead = error;
      return;
    }
    this.#restarts += 1;
    this.#recovering = (async () => {
      try {
        const next = await recovery.next(() => this.#connect(), () => this.#closing !== undefined, this.logger);
        if (this.#closing) {
          await next.close();
          return;
        }
        const recovered = await recoverSessions(next, this.#sessions.values(), (id) => this.#sessionMcp.get(id) ?? [], this.timeouts.requestMs, recovery.reattachForMs);
        this.#link = next;
        this.#emitLifecycle({ type: "recovered", restarts: this.#restarts, sessions: recovered });
      } catch (e) {
        this.#dead = error;
        this.#emitLifecycle({ type: "recovery_failed", error: e });
      } finally {
        this.#recovering = undefined;
      }
    })();
  }

  #emitLifecycle(event: ClientLifecycleEvent): void {
    for (const listener of this.#lifecycle) {
      try {
        listener(event);
      } catch (e) {
        this.logger.warn("lifecycle listener failed", { error: String(e) });
      }
    }
  }
}
