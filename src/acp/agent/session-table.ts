import type { McpServer as StableMcpServer } from "@agentclientprotocol/sdk";
import type { NewSessionRequest, PromptCapabilities, SessionConfigOption, SessionModeState } from "@agentclientprotocol/sdk/unstable";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { toRequestError } from "../errors.js";
import type { Logger } from "../../core/index.js";
import { CancellationController, errorMessage, newId } from "../../core/index.js";
import type { LoopDriver } from "../../loop/index.js";
import type { LoadedSession, SessionLease } from "../../store/index.js";
import { snapshotFromSession, storeTranscriptObserver } from "../../store/index.js";
import type { McpAcpChannel } from "../../tools/index.js";
import type { AcpClientHandle } from "./client-handle.js";
import { availableCommands } from "./commands.js";
import type { AcpAgentFactory, AcpAgentFactoryContext } from "./factory.js";
import { startSessionAgent } from "./factory.js";
import type { AcceptedContent } from "./input.js";
import type { AcpIntegration } from "./integration.js";
import { sessionNotFound } from "./integration.js";
import type { LifecycleSettings } from "./lifecycle-settings.js";
import { mcpServerConfigs, refuseNonPublicMcpUrls, type AcpMcpTransports } from "./mcp-servers.js";
import { checkWorkspaceDirectory } from "./path-params.js";
import type { AcpSessionHandle } from "./session.js";
import { SessionControls } from "./session-controls.js";
import { takeSessionLease } from "./session-leases.js";
import { SessionWarnings } from "./session-warnings.js";
import type { QuotaGate } from "./quotas.js";
import { titledTranscript, type SessionTitleState } from "./session-title.js";

/** How many sessions whose lease was lost a connection remembers (to answer their prompts with the reason). */
const MAX_LOST_REMEMBERED = 256;

/** A stored session being opened again (session/load, session/resume, the copy session/fork made). */
export interface SessionRestore {
  acpSessionId: string;
  loaded: LoadedSession;
  /** The transcript the driver starts from (dangling tool calls repaired). */
  items: LoadedSession["items"];
}

/** One open session of a connection: its binding and driver, and its lifecycle state. */
export interface OpenSessionEntry extends SessionTitleState {
  handle: AcpSessionHandle;
  driver: LoopDriver;
  close: (() => void | Promise<void>) | undefined;
  running: Promise<unknown> | undefined;
  /** Set once session/close (or shutdown) began: the session takes no new prompts. */
  closing: boolean;
  warnings: SessionWarnings;
  controls: SessionControls;
  lease?: SessionLease;
  /** Gives back the principal's `sessions` quota slot (when quotas are on). */
  releaseQuota?: () => Promise<void>;
}

/** What `open` checked and built before the agent factory runs. */
interface FactoryInputs {
  context: AcpAgentFactoryContext;
  controller: CancellationController;
  cwd: string;
  additionalDirectories: string[];
}

/** The session state new / load / resume / fork answer with. */
export type OpenedState = { modes?: SessionModeState; configOptions?: SessionConfigOption[] };

/** What opening sessions needs from the runtime (a part of its `RuntimeSettings`). */
export interface SessionTableSettings {
  integration: AcpIntegration;
  factory: AcpAgentFactory;
  maxSessions: number;
  promptCapabilities: Required<Pick<PromptCapabilities, "image" | "audio" | "embeddedContext">>;
  logger: Logger;
  closeTimeoutMs: number;
  /** Advertised MCP transports besides stdio (session/new refuses others with -32602). */
  mcpTransports: AcpMcpTransports;
  /** Real path of the directory holding one workspace per principal (cwd and roots must be inside theirs). */
  workspaceRoot: string | undefined;
  /** Per-principal quotas: a session takes a `sessions` slot while it is open. */
  quotas: QuotaGate | undefined;
}

/** Who the table opens sessions for, and what it asks the connection at each opening. */
export interface SessionTableContext {
  principal: string;
  /** The connection's lifecycle settings (the principal's views of the store and open sessions). */
  lifecycle: LifecycleSettings;
  /** Open sessions in the whole runtime (bounded by `maxSessions`). */
  totalSessions: () => number;
  /** A reason to refuse new sessions now (e.g. a quota), or undefined. */
  refusal: () => string | undefined;
  /** The way to the client's `acp` MCP servers, when on. */
  mcpChannel: () => McpAcpChannel | undefined;
}

/**
 * The sessions one connection opened, owned by the connection. Opening and closing happen here
 * (the agent factory, the binding, the store header, the lease, the shared open-session list);
 * the lifecycle handlers (lifecycle.ts) and the connection's read and open sessions through it.
 */
export class SessionTable {
  readonly #settings: SessionTableSettings;
  readonly #context: SessionTableContext;
  readonly #sessions = new Map<string, OpenSessionEntry>();
  /** Sessions closed here because their lease was lost (bounded: the oldest go first), so a prompt is told why. */
  readonly #lost = new Set<string>();
  #closing = false;
  /** The client handle from initialize (load / resume open sessions with it). */
  client: AcpClientHandle | undefined;

  constructor(settings: SessionTableSettings, context: SessionTableContext) {
    this.#settings = settings;
    this.#context = context;
  }

  get size(): number {
    return this.#sessions.size;
  }

  get principal(): string {
    return this.#context.principal;
  }

  /** The lifecycle settings as this connection's principal sees them. */
  get lifecycle(): LifecycleSettings {
    return this.#context.lifecycle;
  }

  get logger(): Logger {
    return this.#settings.logger;
  }

  /** The open session, or -32002 (also while it closes). */
  get(acpSessionId: string): OpenSessionEntry {
    const session = this.#sessions.get(acpSessionId);
    if (!session || session.closing) throw sessionNotFound(acpSessionId);
    return session;
  }

  /** The session if this connection has it open (also while it closes). */
  find(acpSessionId: string): OpenSessionEntry | undefined {
    return this.#sessions.get(acpSessionId);
  }

  /** Whether this connection closed the session because its lease was lost. */
  lostLease(acpSessionId: string): boolean {
    return this.#lost.has(acpSessionId);
  }

  /** -32602 unless `path` is an absolute, existing directory inside the principal's workspace. */
  checkDirectory(path: string, field: string): string {
    return checkWorkspaceDirectory(path, field, { principal: this.#context.principal, workspaceRoot: this.#settings.workspaceRoot });
  }

  /**
   * Opens a session: a new one, or (restore) a stored one under its id with its transcript.
   * `signal`: the opening request's; when the client cancels it ($/cancel_request) nothing is
   * left open and -32800 is answered.
   */
  async open(params: NewSessionRequest, restore?: SessionRestore, signal?: AbortSignal, client = this.client): Promise<{ sessionId: string } & OpenedState> {
    if (!client) throw acp.RequestError.invalidRequest(undefined, "initialize first");
    const { context, controller, cwd, additionalDirectories } = await this.#factoryContext(params, client, restore, signal);
    const releaseQuota = await this.#settings.quotas?.openSession(this.principal, context.acpSessionId);
    try {
      return await this.#start(params, { context, controller, cwd, additionalDirectories }, client, restore, signal, releaseQuota);
    } catch (error) {
      await releaseQuota?.();
      throw error;
    }
  }

  /** The rest of `open` once the request was checked and the principal's quota slot taken. */
  async #start(
    params: NewSessionRequest,
    { context, controller, cwd, additionalDirectories }: FactoryInputs,
    client: AcpClientHandle,
    restore: SessionRestore | undefined,
    signal: AbortSignal | undefined,
    releaseQuota: (() => Promise<void>) | undefined,
  ): Promise<{ sessionId: string } & OpenedState> {
    const { logger } = this.#settings;
    const controls = new SessionControls({ modes: this.#context.lifecycle.modes, models: this.#context.lifecycle.models, principal: this.principal }, restore?.loaded.header.metadata ?? {}, logger);
    let started: ReturnType<typeof startSessionAgent>;
    try {
      started = startSessionAgent(await this.#settings.factory(context), context);
    } catch (error) {
      if (signal?.aborted) throw cancelled(signal);
      logger.error("the agent factory failed", { error: errorMessage(error) });
      throw toRequestError(error, "could not create the session's agent");
    }
    if (signal?.aborted) {
      await Promise.resolve(started.close?.()).catch((e: unknown) => logger.warn("session cleanup failed", { sessionId: context.acpSessionId, error: errorMessage(e) }));
      throw cancelled(signal);
    }
    controls.attach(started.driver);
    const entry = this.#add(context, controller, started, controls, client, restore);
    if (releaseQuota) entry.releaseQuota = releaseQuota;
    try {
      await this.#opened(entry, { cwd, additionalDirectories }, restore);
    } catch (error) {
      await this.close(entry, "the session could not be opened");
      logger.error("opening the session failed", { sessionId: context.acpSessionId, error: errorMessage(error) });
      throw toRequestError(error, "could not open the session");
    }
    if (signal?.aborted) {
      await this.close(entry, "the client cancelled the request");
      if (!restore) await this.#discard(context.acpSessionId);
      throw cancelled(signal);
    }
    logger.info(restore ? "session restored" : "session opened", { sessionId: context.acpSessionId, cwd });
    entry.warnings.announce(started.warnings);
    // After this answer is written (setImmediate runs after the write's microtasks), load the
    // model's libraries so the first prompt does not wait for them; start-up itself stays lazy.
    setImmediate(() => started.driver.model.preload?.());
    return { sessionId: context.acpSessionId, ...controls.sessionState() };
  }

  /** Checks the request and the limits, then builds what the agent factory is given. */
  async #factoryContext(params: NewSessionRequest, client: AcpClientHandle, restore: SessionRestore | undefined, signal: AbortSignal | undefined): Promise<FactoryInputs> {
    const { integration, logger, maxSessions, mcpTransports } = this.#settings;
    const cwd = this.checkDirectory(params.cwd, "cwd");
    const additionalDirectories = (params.additionalDirectories ?? []).map((d, i) => this.checkDirectory(d, `additionalDirectories[${i}]`));
    // Servers of an unknown type (e.g. unstable `acp`) are refused there with -32602.
    const mcpServers = params.mcpServers as StableMcpServer[];
    const mcpConfigs = mcpServerConfigs(mcpServers, mcpTransports, this.#context.mcpChannel());
    await refuseNonPublicMcpUrls(mcpConfigs, mcpTransports);
    if (this.#closing) throw acp.RequestError.invalidRequest(undefined, "the agent is shutting down");
    const refusal = this.#context.refusal();
    if (refusal !== undefined) throw acp.RequestError.invalidRequest(undefined, refusal);
    if (this.#context.totalSessions() >= maxSessions) {
      throw acp.RequestError.invalidRequest({ maxSessions }, `too many open sessions (the limit is ${maxSessions}); close one with session/close first`);
    }
    const acpSessionId = restore?.acpSessionId ?? newId("sess");
    const agentSessionId = newId("loop");
    const controller = new CancellationController();
    const { store } = this.#context.lifecycle;
    const context: AcpAgentFactoryContext = {
      acpSessionId,
      agentSessionId,
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
      transcriptObservers: store ? [titledTranscript(storeTranscriptObserver(store, { sessionId: acpSessionId }), () => this.#sessions.get(acpSessionId), store, acpSessionId, logger)] : [],
      ...(restore ? { snapshot: snapshotFromSession({ ...restore.loaded, items: restore.items }, { sessionId: agentSessionId }) } : {}),
    };
    return { context, controller, cwd, additionalDirectories };
  }

  /** Binds the started driver to its ACP session and enters it in the table. */
  #add(context: AcpAgentFactoryContext, controller: CancellationController, started: ReturnType<typeof startSessionAgent>, controls: SessionControls, client: AcpClientHandle, restore: SessionRestore | undefined): OpenSessionEntry {
    const { integration, logger } = this.#settings;
    const { acpSessionId } = context;
    const handle = integration.bindSession({
      acpSessionId,
      agentSessionId: started.driver.sessionId,
      client,
      accepts: this.#accepted(started.driver),
      cancellation: controller,
      principal: this.principal,
    });
    const entry: OpenSessionEntry = {
      handle,
      driver: started.driver,
      close: started.close,
      running: undefined,
      closing: false,
      warnings: new SessionWarnings(client, acpSessionId, logger),
      controls,
      title: restore?.loaded.header.title,
    };
    this.#sessions.set(acpSessionId, entry);
    return entry;
  }

  /**
   * Once bound: enters the session in the runtime's open list, checks a restored driver really
   * took the transcript, writes a new session's header (and takes its lease), and queues what
   * follows the answer. On a throw the caller closes the session.
   */
  async #opened(entry: OpenSessionEntry, dirs: { cwd: string; additionalDirectories: string[] }, restore: SessionRestore | undefined): Promise<void> {
    const id = entry.handle.acpSessionId;
    const { store, leases, open } = this.#context.lifecycle;
    open.set(id, { close: (why) => this.close(id, why), busy: () => entry.handle.gate.busy });
    if (restore && entry.driver.transcript.length !== restore.items.length) {
      throw new Error("the agent factory returned a started LoopDriver that ignored context.snapshot; return an Agent (the runtime starts it) or start it with the snapshot");
    }
    if (store && !restore) {
      await store.create({ sessionId: id, cwd: dirs.cwd, additionalDirectories: dirs.additionalDirectories, metadata: entry.controls.metadata() });
      if (leases) this.holdLease(id, await takeSessionLease(leases, id, this.#settings.logger));
    }
    // The title as stored now: a prompt (or session/set_title) sent at once after the answer may
    // title the session before this runs, and tells the client itself (it was told twice).
    const storedTitle = entry.title;
    setImmediate(() => this.#afterAnswer(entry, dirs, storedTitle));
  }

  /** Available commands and the stored title, sent right after the answer; the first update carries the session's `_meta` (serve: its sandbox). */
  #afterAnswer(entry: OpenSessionEntry, dirs: { cwd: string; additionalDirectories: string[] }, storedTitle: string | undefined): void {
    const { handle } = entry;
    if (handle.closed) return;
    const { slashCommands, modes, models, sessionInfoMeta } = this.#context.lifecycle;
    const meta = sessionInfoMeta?.(dirs);
    if (slashCommands) handle.push({ sessionUpdate: "available_commands_update", availableCommands: availableCommands(modes, models), ...(meta ? { _meta: meta } : {}) });
    else if (meta) handle.push({ sessionUpdate: "session_info_update", _meta: meta });
    if (storedTitle !== undefined && entry.title === storedTitle) handle.push({ sessionUpdate: "session_info_update", title: storedTitle });
  }

  /** A new session whose session/new was cancelled: its stored header goes too. */
  async #discard(acpSessionId: string): Promise<void> {
    await this.#context.lifecycle.store?.delete(acpSessionId).catch((error: unknown) => this.#settings.logger.warn("could not remove a cancelled session", { sessionId: acpSessionId, error: errorMessage(error) }));
  }

  /** Keeps the lease with the open session; losing it (not renewed in time) closes the session here. */
  holdLease(id: string, lease: SessionLease): void {
    const entry = this.#sessions.get(id);
    if (!entry) {
      void lease.release();
      return;
    }
    entry.lease = lease;
    this.#lost.delete(id);
    lease.onLost((reason) => {
      this.#settings.logger.warn("session lease lost; closing the session on this instance", { sessionId: id, reason });
      this.#lost.add(id);
      for (const old of this.#lost) if (this.#lost.size > MAX_LOST_REMEMBERED) this.#lost.delete(old);
      void this.close(id, "the session lease was lost").catch(() => undefined);
    });
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

  /**
   * Cancels the session's turn, waits (bounded) for its prompt to answer, then frees it. The
   * lease is given back before the close is answered, so another instance can open it right after.
   */
  async close(session: OpenSessionEntry | string, why: string): Promise<void> {
    const entry = typeof session === "string" ? this.#sessions.get(session) : session;
    if (!entry) return;
    const { integration, logger, closeTimeoutMs } = this.#settings;
    const id = entry.handle.acpSessionId;
    if (!this.#sessions.has(id) || entry.closing) return;
    entry.closing = true;
    entry.handle.interrupt(`${why}: session closed`);
    if (entry.running) {
      const settled = entry.running.then(
        () => true,
        () => true,
      );
      const done = await Promise.race([settled, delay(closeTimeoutMs).then(() => false)]);
      if (!done) logger.warn("a cancelled turn did not end in time; closing the session anyway", { sessionId: id });
    }
    this.#sessions.delete(id);
    integration.unbindSession(id);
    this.#context.lifecycle.open.delete(id);
    await entry.lease?.release();
    await entry.releaseQuota?.();
    try {
      await entry.close?.();
    } catch (error) {
      logger.warn("session cleanup failed", { sessionId: id, error: errorMessage(error) });
    }
    logger.info("session closed", { sessionId: id, why });
  }

  /** Cancels every running turn at once (the connection is gone: nobody can answer a permission). */
  interruptAll(reason: string): void {
    for (const session of this.#sessions.values()) session.handle.interrupt(reason);
  }

  /** Closes every session (connection end, shutdown); no new one opens after. */
  async closeAll(why: string): Promise<void> {
    this.#closing = true;
    await Promise.all([...this.#sessions.values()].map((s) => this.close(s, why)));
  }
}

/** The answer to a request the client cancelled: -32800 (the SDK's reason), never an internal error. */
export function cancelled(signal: AbortSignal): Error {
  return signal.reason instanceof acp.RequestError ? signal.reason : acp.RequestError.requestCancelled({}, "the client cancelled the request");
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
