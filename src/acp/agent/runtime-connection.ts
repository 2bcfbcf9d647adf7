import type { AgentContext as StableAgentContext } from "@agentclientprotocol/sdk";
import type { AgentApp, AgentContext, InitializeResponse } from "@agentclientprotocol/sdk/unstable";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { advertisedCapabilities, registerAgentMethods, type AgentMethod, type GroupHandlers } from "../methods.js";
import { traceIncomingRequests, type InboundTraceContext } from "../tracing.js";
import { activeContext, inContext, newId, raceAbort } from "../../core/index.js";
import type { McpAcpChannel } from "../../tools/index.js";
import { AccountMethods } from "./account-methods.js";
import type { AcpAuthentication } from "./auth.js";
import { AcpClientHandle, type SessionUpdateSink } from "./client-handle.js";
import { credentialRefusal, elicitCredential } from "./credential-elicitation.js";
import { ConnectionLifecycle, ownedLifecycleSettings } from "./lifecycle.js";
import type { LifecycleSettings } from "./lifecycle-settings.js";
import type { AcpProviders } from "./providers.js";
import { SessionTable, type OpenSessionEntry, type SessionTableSettings } from "./session-table.js";
import type { AcpAuditSink } from "./audit-trail.js";
import { auditIncomingRequests } from "./audit-requests.js";

/** What a runtime's connections share: the opening settings (`SessionTableSettings`) and the rest. */
export interface RuntimeSettings extends SessionTableSettings {
  /** Bound on each fs/terminal request to the client. */
  clientRequestTimeoutMs: number;
  /** Whether the client's `_meta` trace context parents our request spans. */
  inboundTraceContext: InboundTraceContext;
  authentication: AcpAuthentication;
  /** Store, modes, model choices, slash commands (see lifecycle.ts). */
  lifecycle: LifecycleSettings;
  /** The unstable providers/* methods (advertised when set and the feature is on). */
  providers: AcpProviders | undefined;
  /** ACP versions served on streams (runtime.ts). */
  protocol: "v1" | "v2" | "auto";
  /** Ask for a missing credential on a loopback key page (URL elicitation); `false`: answer -32000. */
  keyPage: { lifetimeMs: number } | false;
  /** Who did what (`serve`'s audit trail); undefined: nothing recorded. */
  audit: AcpAuditSink | undefined;
}

/** The only protocol version this agent speaks; answered whatever the client asks (ACP negotiation). */
export const SUPPORTED_PROTOCOL_VERSION = 1;

/** One client connection's state and handlers: its client handle and the sessions it opened (its `SessionTable`). */
export class AcpConnectionState {
  readonly #settings: RuntimeSettings;
  /** Who this connection acts for (see `AcpServeOptions.principal`). */
  readonly principal: string;
  readonly #sessions: SessionTable;
  readonly #lifecycle: ConnectionLifecycle;
  /** The SDK context from initialize (MCP over ACP requests). */
  #context: AgentContext | undefined;
  /** authenticate, logout, auth/status, providers/*. */
  readonly #account: AccountMethods;
  /** The methods registered (buildApp): initialize advertises their capabilities. */
  #served: ReadonlySet<AgentMethod> = new Set();
  /** A key page this connection is waiting on (one at a time). */
  #askingForKey = false;
  /** MCP over ACP: this connection's caller of the client's `acp` MCP servers (when advertised). */
  readonly #mcpCaller: acp.McpOverAcpCaller | undefined;

  /** Where `session/update`s go instead of the SDK connection (the v2 bridge's pipe); undefined: the connection. */
  readonly #sessionUpdates: SessionUpdateSink | undefined;

  constructor(settings: RuntimeSettings, principal: string, totalSessions: () => number, refusal: () => string | undefined = () => undefined, sessionUpdates?: SessionUpdateSink) {
    this.#settings = settings;
    this.#sessionUpdates = sessionUpdates;
    this.principal = principal;
    // Another principal's sessions, stored or open, are not there for this connection.
    // Such an attempt is answered as for an unknown session; the audit trail records whose it was.
    const foreign = (sessionId: string, owner: string): void => settings.audit?.record({ principal, sessionId, action: "foreign_session", detail: { owner } });
    const lifecycle = ownedLifecycleSettings(settings.lifecycle, principal, foreign);
    this.#sessions = new SessionTable(settings, { principal, lifecycle, totalSessions, refusal, mcpChannel: () => this.#mcpChannel() });
    this.#lifecycle = new ConnectionLifecycle(this.#sessions);
    const { unstable } = settings.lifecycle;
    this.#account = new AccountMethods(
      { authentication: settings.authentication, providers: unstable.providers ? settings.providers : undefined, authStatus: unstable.authStatus, logger: settings.logger },
      principal,
    );
    if (settings.mcpTransports.acp) this.#mcpCaller = new acp.McpOverAcpCaller({ clientInfo: { name: settings.integration.name, version: settings.integration.version } });
  }

  get sessionCount(): number {
    return this.#sessions.size;
  }

  buildApp(): AgentApp {
    // Every request handled gets a span (the client's trace context as parent, when honoured).
    const traced = traceIncomingRequests(acp.agent({ name: this.#settings.integration.name }), this.#settings.inboundTraceContext);
    // Who did what: every request registered below is recorded (refusals included) when auditing.
    const app = this.#settings.audit ? auditIncomingRequests(traced, this.#settings.audit, this.principal) : traced;
    this.#served = registerAgentMethods(app, {
      connection: this.#handlers(),
      account: this.#account.handlers(),
      lifecycle: this.#lifecycle.handlers(),
      stored: this.#lifecycle.storedHandlers(),
    });
    return app;
  }

  #clientHandle(client: AgentContext, capabilities: acp.ClientCapabilities): AcpClientHandle {
    return new AcpClientHandle(stableContext(client), capabilities, { requestTimeoutMs: this.#settings.clientRequestTimeoutMs, sessionUpdates: this.#sessionUpdates });
  }

  /** initialize, session/new, prompt, cancel, close, and (MCP over ACP) mcp/message. */
  #handlers(): GroupHandlers<"connection"> {
    const port = this.#settings.integration.inputPort();
    const handlers: GroupHandlers<"connection"> = {
      [acp.methods.agent.initialize]: ({ params, client }) => {
        this.#sessions.client = this.#clientHandle(client, params.clientCapabilities ?? {});
        this.#context = client;
        this.#account.initialized(client);
        return this.#initializeResponse();
      },
      [acp.methods.agent.session.new]: async ({ params, client, signal }) =>
        this.#sessions.open(params, undefined, signal, this.#sessions.client ?? this.#clientHandle(client, {})),
      [acp.methods.agent.session.prompt]: async ({ params, signal }) => {
        const traced = activeContext(); // the served request's span: the turn's parent, after the awaits below
        if (!this.#sessions.find(params.sessionId)) await this.#lifecycle.refuseIfActiveElsewhere(params.sessionId);
        const session = this.#sessions.get(params.sessionId);
        // Quotas are checked before the turn: a running turn is never cut by one.
        const endTurn = await this.#settings.quotas?.startTurn(this.principal, params.sessionId, newId("turn"));
        try {
          return await this.#prompt(session, params, signal, () => inContext(traced, () => port.prompt(session.handle.acpSessionId, session.driver, params.prompt, "reject")));
        } finally {
          await endTurn?.();
        }
      },
      [acp.methods.agent.session.cancel]: ({ params }) => {
        const session = this.#sessions.find(params.sessionId);
        if (session) session.handle.interrupt();
        else this.#settings.logger.debug("session/cancel for an unknown session; ignored", { sessionId: params.sessionId });
      },
      [acp.methods.agent.session.close]: async ({ params }) => {
        await this.#sessions.close(this.#sessions.get(params.sessionId), "session/close");
      },
    };
    // Progress of an MCP request over ACP comes back as mcp/message notifications.
    if (this.#mcpCaller) handlers[acp.methods.agent.mcp.message] = this.#mcpCaller.handleNotification;
    return handlers;
  }

  /** A prompt to an open session once its quotas let it run; `run` drives the turn (in the request's trace context). */
  async #prompt(session: OpenSessionEntry, params: acp.PromptRequest, signal: AbortSignal, run: () => Promise<acp.PromptResponse>): Promise<acp.PromptResponse> {
    if ((await this.#unblock(session, signal)) === "cancelled") return { stopReason: "cancelled" };
    await session.warnings.beforePrompt();
    // A $/cancel_request for the prompt cancels the turn like session/cancel.
    const onAbort = (): void => session.handle.interrupt("prompt request cancelled");
    signal.addEventListener("abort", onAbort, { once: true });
    const running = this.#lifecycle.prompt(session.handle, params.prompt, run);
    if (session.running === undefined) session.running = running; // a rejected busy prompt must not replace it
    try {
      return await running;
    } finally {
      if (session.running === running) session.running = undefined;
      signal.removeEventListener("abort", onAbort);
    }
  }

  #initializeResponse(): InitializeResponse {
    const { integration, promptCapabilities, mcpTransports } = this.#settings;
    // The capabilities of the methods served (methods.ts), plus what no method stands for.
    const served = advertisedCapabilities(this.#served);
    return {
      protocolVersion: SUPPORTED_PROTOCOL_VERSION,
      agentCapabilities: {
        ...served,
        promptCapabilities: { ...promptCapabilities },
        // `acp` (unstable) only when served: a stable client never sees the unknown key.
        mcpCapabilities: { http: mcpTransports.http, sse: mcpTransports.sse, ...served.mcpCapabilities },
        sessionCapabilities: { ...served.sessionCapabilities, additionalDirectories: {} },
      },
      authMethods: this.#settings.authentication.methods.map((m) => ({ ...m })),
      agentInfo: { name: integration.name, version: integration.version },
      ...(integration.infoMeta ? { _meta: integration.infoMeta } : {}),
    };
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
  async #unblock(session: OpenSessionEntry, requestSignal: AbortSignal): Promise<"ok" | "cancelled"> {
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
    await this.#account.changed();
    const still = authentication.promptBlocker(this.principal);
    return still === undefined ? "ok" : refuse(still);
  }

  /** Cancels every running turn at once (the connection is gone: nobody can answer a permission). */
  interruptAll(reason: string): void {
    this.#sessions.interruptAll(reason);
  }

  /** Closes every session of this connection (connection end, shutdown). */
  async closeAll(why: string): Promise<void> {
    await this.#sessions.closeAll(why);
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
