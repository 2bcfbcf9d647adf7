import { Readable, type Writable } from "node:stream";
import type { AgentConnection, AnyMessage, ClientApp, PromptCapabilities, Stream } from "@agentclientprotocol/sdk/unstable";
import type { agentProtocolRouter as AgentProtocolRouterFn } from "@agentclientprotocol/sdk/experimental/v2";
import type { serveV2 as ServeV2Fn } from "./v2-bridge.js";
import { batchedSink } from "./batched-output.js";
import type { Logger } from "../../core/index.js";
import { ConfigError, errorMessage } from "../../core/index.js";
import type { AcpAgentFactory } from "./factory.js";
import type { AcpIntegration } from "./integration.js";
import { noAuthentication, type AcpAuthentication } from "./auth.js";
import { DEFAULT_KEY_PAGE_LIFETIME_MS } from "./credential-elicitation.js";
import type { AcpMcpTransports } from "./mcp-servers.js";
import { DEFAULT_CLIENT_REQUEST_TIMEOUT_MS, type SessionUpdateSink } from "./client-handle.js";
import { guardedNdJsonStream } from "./line-guard.js";
import type { TurnStateSink } from "./input-drain.js";
import { AcpConnectionState, type RuntimeSettings } from "./runtime-connection.js";
import type { SessionLeases, SessionStore } from "../../store/index.js";
import { AcpModelCatalog, type AcpModelOptions } from "./config-options.js";
import { lifecycleSettings, type LifecycleSettings } from "./lifecycle-settings.js";
import type { QuotaGate } from "./quotas.js";
import type { AcpAuditSink } from "./audit-trail.js";
import { prepareWorkspaceRoot } from "./path-params.js";
import { AcpModes, type AcpModesOptions } from "./modes.js";
import { resolveUnstableFeatures, type AcpUnstableFeatures } from "./unstable.js";
import type { AcpProviders } from "./providers.js";
import { DEFAULT_PRINCIPAL } from "./principal.js";
import { DEFAULT_MAX_SESSIONS } from "./limits.js";

import { ACP_PROTOCOL_CHOICES, type AcpProtocolChoice, type AcpServedConnection } from "./protocol.js";
import type { InboundTraceContext } from "../tracing.js";

export { ACP_PROTOCOL_CHOICES, type AcpProtocolChoice, type AcpServedConnection } from "./protocol.js";

export type { AcpAgentFactory, AcpAgentFactoryContext, AcpAgentFactoryResult, AcpSessionAgent } from "./factory.js";

/** Who a served connection belongs to. */
export interface AcpServeOptions {
  /**
   * The principal (a token-file name or a JWT subject) on whose behalf every request of this
   * connection is made: it owns the sessions the connection opens. Default `"default"` (stdio,
   * single-user).
   */
  principal?: string;
}

export { DEFAULT_PRINCIPAL };

/** One served connection. */

/**
 * A complete ACP agent from the same parts a hybrid host uses: an agent factory per session,
 * the integration as observer/approval bridge, one turn lock per session, stdio or any stream.
 */
export class AcpHeadlessRuntime {
  readonly #settings: RuntimeSettings;
  readonly #connections = new Map<AcpConnectionState, AcpServedConnection>();
  /** Routed connections (protocol v2 / auto) whose initialize has not picked a version yet. */
  readonly #routing = new Set<AcpServedConnection>();
  #refusal: string | undefined;

  /** @internal — use `AcpHeadlessRuntime.builder()`. */
  constructor(settings: RuntimeSettings) {
    this.#settings = settings;
  }

  static builder(): AcpHeadlessRuntimeBuilder {
    return new AcpHeadlessRuntimeBuilder();
  }

  get integration(): AcpIntegration {
    return this.#settings.integration;
  }

  /** Sessions open across all connections. */
  get sessionCount(): number {
    let n = 0;
    for (const c of this.#connections.keys()) n += c.sessionCount;
    return n;
  }

  /** Connections being served now. */
  get connectionCount(): number {
    return this.#connections.size;
  }

  /**
   * From now on session/new, load and resume are refused with `reason` (-32600); open sessions
   * keep working. A draining server calls this before it waits for running turns.
   */
  refuseNewSessions(reason: string): void {
    this.#refusal = reason;
  }

  /**
   * Serves one client over an SDK stream (e.g. `ndJsonStream(...)`) or, in-process, a ClientApp
   * (always v1). With protocol `v2` / `auto` a stream first goes through the SDK's protocol
   * router, which picks the version at `initialize`.
   */
  serve(target: Stream | ClientApp, options: AcpServeOptions = {}): AcpServedConnection {
    return this.#serve(target, options.principal ?? DEFAULT_PRINCIPAL);
  }

  /** `turnState`: where a v2 connection reports its sessions' turns (the stdio stream's end-of-input wait). */
  #serve(target: Stream | ClientApp, principal: string, turnState?: TurnStateSink): AcpServedConnection {
    if (!("writable" in target) || this.#settings.protocol === "v1") return this.#serveV1(target, principal);
    return this.#serveRouted(target, principal, turnState);
  }

  #serveRouted(stream: Stream, principal: string, turnState: TurnStateSink | undefined): AcpServedConnection {
    const { logger, protocol } = this.#settings;
    let selected: AcpServedConnection | undefined;
    // The router holds the input until a valid initialize; this pipe lets close() end it before.
    const stop = new AbortController();
    const input = new TransformStream<AnyMessage, AnyMessage>();
    stream.readable.pipeTo(input.writable, { signal: stop.signal }).catch(() => undefined);
    const routedStream: Stream = { readable: input.readable, writable: stream.writable };
    // The v2 entrypoint and bridge load only when v2 is on: a v1 start-up stays as lean as before.
    const routed = loadV2().then(({ agentProtocolRouter, serveV2 }) => {
      const pick = (served: AcpServedConnection): AcpServedConnection => {
        selected = served;
        this.#routing.delete(entry);
        return served;
      };
      const router = agentProtocolRouter().withV2({ connect: (s) => pick(serveV2(s, (app, updates) => this.#serveV1(app, principal, updates), logger, turnState)) });
      if (protocol === "auto") router.withV1({ connect: (s) => pick(this.#serveV1(s, principal)) });
      return router.connect(routedStream);
    });
    const closed = routed.then(
      (r) => r.closed,
      (error: unknown) => {
        logger.error("the ACP v2 support could not be loaded", { error: errorMessage(error) });
        stop.abort();
      },
    ).finally(() => this.#routing.delete(entry));
    const entry: AcpServedConnection = {
      closed,
      close: async () => {
        if (selected) await selected.close();
        else stop.abort(new Error("the agent is shutting down"));
        await closed;
      },
    };
    this.#routing.add(entry);
    return entry;
  }

  #serveV1(target: Stream | ClientApp, principal: string, sessionUpdates?: SessionUpdateSink): AcpServedConnection {
    const state = new AcpConnectionState(this.#settings, principal, () => this.sessionCount, () => this.#refusal, sessionUpdates);
    const app = state.buildApp();
    const connection: AgentConnection = "writable" in target ? app.connect(target) : app.connect(target);
    // Synchronous with the SDK's close, before it rejects pending requests, so a permission wait
    // ends as a cancel, never as a failed request (which would deny and go on), whatever the
    // order in which the rejections and the close handler below run.
    connection.signal.addEventListener("abort", () => state.interruptAll("the ACP connection closed"), { once: true });
    const closed = connection.closed.then(async () => {
      await state.closeAll("the ACP connection closed");
      this.#connections.delete(state);
    });
    const served: AcpServedConnection = {
      closed,
      close: async () => {
        await state.closeAll("the agent is shutting down");
        await settleWrites();
        connection.close();
        await closed;
      },
    };
    this.#connections.set(state, served);
    return served;
  }

  /**
   * Serves on this process's stdin/stdout (stdout carries only ACP). Resolves after stdin ends
   * (the client closed the pipe) and every session is shut down. A line over `maxMessageBytes`
   * (default 32 MiB) gets an error reply and the connection goes on (see `guardedNdJsonStream`).
   */
  async serveStdio(io: { input?: NodeJS.ReadableStream; output?: NodeJS.WritableStream; maxMessageBytes?: number } = {}): Promise<void> {
    const input = (io.input ?? process.stdin) as Readable;
    const output = (io.output ?? process.stdout) as Writable;
    const stream = guardedNdJsonStream(batchedSink(output), Readable.toWeb(input) as ReadableStream<Uint8Array>, {
      ...(io.maxMessageBytes !== undefined ? { maxMessageBytes: io.maxMessageBytes } : {}),
      logger: this.#settings.logger,
    });
    await this.#serve(stream, DEFAULT_PRINCIPAL, stream.turnState).closed;
  }

  /**
   * Ends everything cleanly (e.g. on SIGTERM): running turns are cancelled and their prompts
   * answered `cancelled`, sessions closed, connections closed.
   */
  async shutdown(): Promise<void> {
    await Promise.all([...this.#connections.values(), ...this.#routing].map((served) => served.close()));
  }
}

async function loadV2(): Promise<{ agentProtocolRouter: typeof AgentProtocolRouterFn; serveV2: typeof ServeV2Fn }> {
  const [sdk, bridge] = await Promise.all([import("@agentclientprotocol/sdk/experimental/v2"), import("./v2-bridge.js")]);
  return { agentProtocolRouter: sdk.agentProtocolRouter, serveV2: bridge.serveV2 };
}

/** Lets the SDK write answers of handlers that just returned before a connection closes. */
async function settleWrites(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * Configures an `AcpHeadlessRuntime` (from `AcpHeadlessRuntime.builder()`): the integration and the per-session agent
 * factory, then the optional parts (store, leases, modes, models, authentication, MCP transports, limits).
 */
export class AcpHeadlessRuntimeBuilder {
  #integration: AcpIntegration | undefined;
  #factory: AcpAgentFactory | undefined;
  #maxSessions = DEFAULT_MAX_SESSIONS;
  #prompt: Required<Pick<PromptCapabilities, "image" | "audio" | "embeddedContext">> = { image: false, audio: false, embeddedContext: false };
  #logger: Logger | undefined;
  #closeTimeoutMs = 5_000;
  #clientRequestTimeoutMs = DEFAULT_CLIENT_REQUEST_TIMEOUT_MS;
  #inboundTraceContext: InboundTraceContext = "honor";
  #mcpTransports: AcpMcpTransports = { http: false, sse: false, acp: false };
  #authentication: AcpAuthentication = noAuthentication();
  #keyPage: { lifetimeMs: number } | false = { lifetimeMs: DEFAULT_KEY_PAGE_LIFETIME_MS };
  #store: SessionStore | undefined;
  #leases: SessionLeases | undefined;
  #modes: AcpModes | undefined;
  #models: AcpModelCatalog | undefined;
  #slashCommands = false;
  #sessionInfoMeta: LifecycleSettings["sessionInfoMeta"];
  #unstable: AcpUnstableFeatures = resolveUnstableFeatures(true);
  #providers: AcpProviders | undefined;
  #protocol: AcpProtocolChoice = "v1";
  #workspaceRoot: string | undefined;
  #quotas: QuotaGate | undefined;
  #audit: AcpAuditSink | undefined;

  /** The integration (observer, approvals, session routing) — the source of truth. Required. */
  integration(integration: AcpIntegration): this {
    this.#integration = integration;
    return this;
  }
  /** Creates each session's agent (wire `context.integration` as observer and `context.cancellation`). Required. */
  agentFactory(factory: AcpAgentFactory): this {
    this.#factory = factory;
    return this;
  }
  /** Open sessions allowed at once (default {@link DEFAULT_MAX_SESSIONS}); session/new beyond it is refused. */
  maxSessions(count: number): this {
    if (!Number.isInteger(count) || count < 1) throw new ConfigError(`maxSessions must be a positive integer, got ${count}`);
    this.#maxSessions = count;
    return this;
  }
  /**
   * Optional prompt content to advertise. Advertise only what the models your factory builds
   * take; a session whose model lacks one still refuses it with -32602.
   */
  promptCapabilities(capabilities: { image?: boolean; audio?: boolean; embeddedContext?: boolean }): this {
    this.#prompt = { ...this.#prompt, ...capabilities };
    return this;
  }
  logger(logger: Logger): this {
    this.#logger = logger;
    return this;
  }
  /** Bound on each fs/terminal request to the client (default 30 s); a late answer fails that tool call. Permission questions are not bounded. */
  clientRequestTimeout(ms: number): this {
    if (!Number.isFinite(ms) || ms <= 0) throw new ConfigError("clientRequestTimeout must be a positive number of milliseconds");
    this.#clientRequestTimeoutMs = ms;
    return this;
  }

  /**
   * Whether a client's `_meta.traceparent` parents this agent's spans (`honor`, the default) or is
   * ignored (`ignore`: each request starts a new trace; for clients you do not trust).
   */
  inboundTraceContext(mode: InboundTraceContext): this {
    if (mode !== "honor" && mode !== "ignore") throw new ConfigError(`inboundTraceContext must be "honor" or "ignore", got ${String(mode)}`);
    this.#inboundTraceContext = mode;
    return this;
  }

  /** How long session/close and shutdown wait for a cancelled turn to end (default 5 s). */
  closeTimeout(ms: number): this {
    this.#closeTimeoutMs = ms;
    return this;
  }

  /**
   * MCP transports to advertise besides stdio (default none). Advertise only what your factory
   * starts, e.g. with `startSessionMcpServers`; session/new refuses the others with -32602.
   * `acp` (unstable MCP-over-ACP, `mcp/message`) is advertised only while the unstable feature
   * `mcpAcp` is on; its servers reach the factory as `mcpServerConfigs` with a channel.
   * `stdio: false` refuses a client's stdio servers (-32602: a client never names a command this
   * agent runs); `privateAddresses: false` refuses http/sse URLs whose host is or resolves to a
   * loopback, private, link-local or otherwise non-public address (both default true).
   */
  mcpTransports(transports: { http?: boolean; sse?: boolean; acp?: boolean; stdio?: boolean; privateAddresses?: boolean }): this {
    this.#mcpTransports = { ...this.#mcpTransports, ...transports };
    return this;
  }
  /** Auth methods, `authenticate`, and the -32000 gate on prompts (default: none, never blocks). */
  authentication(authentication: AcpAuthentication): this {
    this.#authentication = authentication;
    return this;
  }

  /**
   * The key page: while the authentication's credential is missing and the client advertises
   * `elicitation.url`, a prompt asks the human to paste the key on a one-shot page on 127.0.0.1
   * (URL-mode elicitation; see `AcpAuthentication.credentialEntry`) instead of answering -32000.
   * On by default with a 10-minute lifetime; `false` when the human is not on this machine.
   */
  keyPage(options: { lifetimeMs?: number } | false): this {
    this.#keyPage = options === false ? false : { lifetimeMs: options.lifetimeMs ?? DEFAULT_KEY_PAGE_LIFETIME_MS };
    return this;
  }

  /**
   * Durable sessions: each session's header and committed items go to `store` (fsync'd before
   * the turn goes on), and `loadSession`, `session/list`, `/resume`, `/delete` are advertised and
   * served from it. The factory's Agent is started with the stored transcript on load/resume.
   */
  sessionStore(store: SessionStore): this {
    this.#store = store;
    return this;
  }
  /**
   * Session leases: a session is open on one instance at a time (load/resume/prompt/delete of a
   * session another instance holds answer -32600 "active on another instance"). Default with a
   * store: in-process leases (also when `undefined` is passed); instances sharing a store share
   * leases (e.g. `PostgresSessionLeases`).
   */
  sessionLeases(leases: SessionLeases | undefined): this {
    this.#leases = leases;
    return this;
  }
  /**
   * Session modes (`session/set_mode`, `current_mode_update`): each mode's permission policy
   * replaces the agent's for the session, from the next tool call on. Default set: ask,
   * auto-edit, read-only (see `defaultModes`).
   */
  modes(options: AcpModesOptions = {}): this {
    this.#modes = new AcpModes(options);
    return this;
  }
  /**
   * The `model` config option (and `thought_level` where the current model supports thinking):
   * the session's model and thinking level follow it from the next model call on.
   */
  models(options: AcpModelOptions): this {
    this.#models = new AcpModelCatalog(options);
    return this;
  }
  /** Answer `/help`, `/mode`, `/model` locally and advertise them (`available_commands_update`). Default off. */
  slashCommands(enabled = true): this {
    this.#slashCommands = enabled;
    return this;
  }

  /** `_meta` of the session's first update after it opens (the commands update, else a `session_info_update`): e.g. what the sandbox allows its commands. */
  sessionInfoMeta(meta: NonNullable<LifecycleSettings["sessionInfoMeta"]>): this {
    this.#sessionInfoMeta = meta;
    return this;
  }

  /**
   * The unstable ACP v1 methods (session/fork, set_title, status, archive …), served through the
   * SDK's `/unstable` entrypoint. All on by default (advertised only where possible, e.g. the
   * store-backed ones need `sessionStore`); `false` switches all off, an object single ones.
   */
  unstable(features: boolean | Partial<AcpUnstableFeatures>): this {
    this.#unstable = resolveUnstableFeatures(features);
    return this;
  }

  /** The unstable `providers/list` / `set` / `disable` (e.g. `modelSpecProviders(spec, baseUrl)`). */
  providers(providers: AcpProviders): this {
    this.#providers = providers;
    return this;
  }

  /**
   * Confine each principal's sessions to `<dir>/<principal>/`: cwd and additionalDirectories of
   * session/new, load, resume and fork must resolve (after symlinks) inside it, else -32602
   * naming the field. Made (0700) now; each principal's directory on its first use. Without it,
   * any existing directory outside /proc, /sys and /dev is accepted.
   */
  workspaceRoot(dir: string): this {
    this.#workspaceRoot = prepareWorkspaceRoot(dir);
    return this;
  }

  /** Per-principal quotas checked before a session opens and before each prompt (see `QuotaGate`). */
  quotas(gate: QuotaGate): this {
    this.#quotas = gate;
    return this;
  }

  /** Records who did what: sessions opened/loaded/deleted, prompts, refused requests (see `AuditTrail`). */
  audit(sink: AcpAuditSink): this {
    this.#audit = sink;
    return this;
  }

  /** ACP versions served (default `v1`; see `AcpProtocolChoice`). */
  protocol(choice: AcpProtocolChoice): this {
    if (!ACP_PROTOCOL_CHOICES.includes(choice)) throw new ConfigError(`protocol must be one of ${ACP_PROTOCOL_CHOICES.join(", ")}, got ${String(choice)}`);
    this.#protocol = choice;
    return this;
  }

  build(): AcpHeadlessRuntime {
    if (!this.#integration) throw new ConfigError("AcpHeadlessRuntime.builder(): .integration(AcpIntegration) is required");
    if (!this.#factory) throw new ConfigError("AcpHeadlessRuntime.builder(): .agentFactory(factory) is required");
    return new AcpHeadlessRuntime({
      integration: this.#integration,
      factory: this.#factory,
      maxSessions: this.#maxSessions,
      promptCapabilities: { ...this.#prompt },
      logger: this.#logger ?? this.#integration.logger,
      closeTimeoutMs: this.#closeTimeoutMs,
      clientRequestTimeoutMs: this.#clientRequestTimeoutMs,
      inboundTraceContext: this.#inboundTraceContext,
      mcpTransports: { ...this.#mcpTransports, acp: this.#mcpTransports.acp && this.#unstable.mcpAcp },
      authentication: this.#authentication,
      lifecycle: lifecycleSettings({
        store: this.#store,
        leases: this.#leases,
        modes: this.#modes,
        models: this.#models,
        slashCommands: this.#slashCommands,
        sessionInfoMeta: this.#sessionInfoMeta,
        unstable: this.#unstable,
      }),
      providers: this.#providers,
      protocol: this.#protocol,
      keyPage: this.#keyPage,
      workspaceRoot: this.#workspaceRoot,
      quotas: this.#quotas,
      audit: this.#audit,
    });
  }
}
