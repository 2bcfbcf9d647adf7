import type {
  AgentApp,
  ContentBlock,
  LoadSessionRequest,
  NewSessionRequest,
  PromptResponse,
  ResumeSessionRequest,
  SessionCapabilities,
  SessionConfigOption,
  SessionModeState,
} from "@agentclientprotocol/sdk/unstable";
import * as acp from "@agentclientprotocol/sdk/unstable";
import type { Logger, TranscriptObserver } from "../../core/index.js";
import { errorMessage } from "../../core/index.js";
import type { LoopDriver, LoopSnapshot } from "../../loop/index.js";
import type { LoadedSession, SessionLease } from "../../store/index.js";
import { snapshotFromSession, storeTranscriptObserver } from "../../store/index.js";
import { availableCommands, parseSlashCommand, runSlashCommand } from "./commands.js";
import { sessionNotFound } from "./integration.js";
import { ownedOpenSessions, ownedSessionStore } from "./ownership.js";
import type { DescribeCall } from "./replay.js";
import { repairDanglingToolCalls, replayUpdates } from "./replay.js";
import type { AcpSessionHandle } from "./session.js";
import { SessionControls } from "./session-controls.js";
import { refuseIfLeasedElsewhere, sessionActiveElsewhere, sessionLeaseLost, takeSessionLease } from "./session-leases.js";

/** How many sessions whose lease was lost a connection remembers (to answer their prompts with the reason). */
const MAX_LOST_REMEMBERED = 256;
import { StoredSessions, storeError } from "./stored-sessions.js";
import type { LifecycleSettings } from "./lifecycle-settings.js";

/** A stored session being opened again (session/load or session/resume). */
export interface SessionRestore {
  acpSessionId: string;
  loaded: LoadedSession;
  /** The transcript the driver starts from (dangling tool calls repaired). */
  items: LoadedSession["items"];
}

/** What opening a session needs from the lifecycle, before the factory runs. */
export interface PreparedSession {
  controls: SessionControls;
  transcriptObservers: TranscriptObserver[];
  snapshot: LoopSnapshot | undefined;
}

/** The request fields a session is opened with (session/new's, or load's / resume's equivalent). */
export type OpenSessionParams = NewSessionRequest;

export interface LifecycleSessionView {
  handle: AcpSessionHandle;
  driver: LoopDriver;
}

/** What the connection offers the lifecycle handlers. */
export interface LifecycleHost {
  /** Who the connection acts for: it sees only its own sessions (ownership.ts). */
  readonly principal: string;
  openSession(params: OpenSessionParams, restore: SessionRestore, signal?: AbortSignal): Promise<LifecycleSessionView>;
  /** The open session or -32002. */
  session(acpSessionId: string): LifecycleSessionView;
  closeSession(acpSessionId: string, why: string): Promise<void>;
  /** -32602 unless `path` is an absolute, existing directory. */
  checkDirectory(path: string, field: string): string;
  /** Another principal's stored session was asked for (answered as unknown; recorded for the audit). */
  foreignSession?(sessionId: string, owner: string): void;
}

interface SessionState {
  controls: SessionControls;
  title: string | undefined;
  lease?: SessionLease;
}

/**
 * One connection's share of the session lifecycle: load (with replay) / resume over the store,
 * modes, config options, slash commands, titles, per-session locks. The operations on stored
 * sessions (list, delete, fork, set title, archive, status) are `StoredSessions`'. The connection
 * keeps owning open/close; it calls `prepare` / `opened` / `closed` around them.
 */
export class ConnectionLifecycle {
  readonly #settings: LifecycleSettings;
  readonly #host: LifecycleHost;
  readonly #logger: Logger;
  readonly #states = new Map<string, SessionState>();
  /** Sessions closed here because their lease was lost (bounded: the oldest go first), so a prompt is told why. */
  readonly #lost = new Set<string>();
  readonly #stored: StoredSessions;

  constructor(settings: LifecycleSettings, host: LifecycleHost, logger: Logger) {
    // Another principal's sessions, stored or open, are not there for this connection.
    this.#settings = { ...settings, store: settings.store && ownedSessionStore(settings.store, host.principal, (id, owner) => host.foreignSession?.(id, owner)), open: ownedOpenSessions(settings.open, host.principal) };
    this.#host = host;
    this.#logger = logger;
    this.#stored = new StoredSessions(this.#settings, {
      checkDirectory: (path, field) => host.checkDirectory(path, field),
      resume: (params, signal) => this.#restore(params, false, signal),
      locked: (id, run) => this.#locked(id, run),
      titleChanged: (id, title) => this.#titleChanged(id, title),
    }, logger);
  }

  get loadSession(): boolean {
    return this.#settings.store !== undefined;
  }

  /** The session capabilities the store adds (close and additionalDirectories are the connection's). */
  sessionCapabilities(): SessionCapabilities {
    const { store, unstable } = this.#settings;
    return {
      ...(store ? { list: {}, resume: {}, delete: {} } : {}),
      ...(store && unstable.fork ? { fork: {} } : {}),
      ...(store && unstable.title ? { title: {} } : {}),
      ...(store && unstable.archive ? { archive: {} } : {}),
      ...(unstable.status ? { status: {} } : {}),
    };
  }

  /** Adds the handlers for what is configured; what is not stays -32601. */
  register(app: AgentApp): AgentApp {
    const { store, modes, models } = this.#settings;
    if (store) {
      app
        .onRequest(acp.methods.agent.session.load, ({ params, signal }) => this.#restore(params, true, signal))
        .onRequest(acp.methods.agent.session.resume, ({ params, signal }) => this.#restore(params, false, signal));
    }
    this.#stored.register(app);
    if (modes) app.onRequest(acp.methods.agent.session.setMode, ({ params }) => this.#setMode(params.sessionId, params.modeId).then(() => ({})));
    if (models) {
      app.onRequest(acp.methods.agent.session.setConfigOption, async ({ params }) => {
        if ("type" in params && params.type === "boolean") throw acp.RequestError.invalidParams({ configId: params.configId }, `config option "${params.configId}" is not a boolean option`);
        return { configOptions: await this.#setConfig(params.sessionId, params.configId, params.value, true) };
      });
    }
    return app;
  }

  /** Called while opening, before the agent factory: controls, store observer, snapshot. */
  prepare(acpSessionId: string, agentSessionId: string, restore: SessionRestore | undefined): PreparedSession {
    const { store, modes, models } = this.#settings;
    const controls = new SessionControls({ modes, models, principal: this.#host.principal }, restore?.loaded.header.metadata ?? {}, this.#logger);
    return {
      controls,
      transcriptObservers: store ? [storeTranscriptObserver(store, { sessionId: acpSessionId })] : [],
      snapshot: restore && snapshotFromSession({ ...restore.loaded, items: restore.items }, { sessionId: agentSessionId }),
    };
  }

  /**
   * Called once the session is bound: writes a new session's header, checks a restored driver
   * really took the transcript, and queues what follows the answer (available commands).
   * Returns the new/load/resume answer fields. On a throw the caller closes the session.
   */
  async opened(session: LifecycleSessionView, prepared: PreparedSession, params: OpenSessionParams, restore: SessionRestore | undefined): Promise<{ modes?: SessionModeState; configOptions?: SessionConfigOption[] }> {
    const id = session.handle.acpSessionId;
    const { store } = this.#settings;
    this.#states.set(id, { controls: prepared.controls, title: restore?.loaded.header.title });
    this.#settings.open.set(id, { close: (why) => this.#host.closeSession(id, why), busy: () => session.handle.gate.busy });
    if (restore && session.driver.transcript.length !== restore.items.length) {
      throw new Error("the agent factory returned a started LoopDriver that ignored context.snapshot; return an Agent (the runtime starts it) or start it with the snapshot");
    }
    if (store && !restore) {
      await store.create({ sessionId: id, cwd: params.cwd, additionalDirectories: params.additionalDirectories ?? [], metadata: prepared.controls.metadata() });
      if (this.#settings.leases) this.#holdLease(id, await takeSessionLease(this.#settings.leases, id, this.#logger));
    }
    setImmediate(() => this.#afterAnswer(session.handle));
    return prepared.controls.sessionState();
  }

  /** A new session whose session/new was cancelled: its stored header goes too. */
  async discard(acpSessionId: string): Promise<void> {
    await this.#settings.store?.delete(acpSessionId).catch((error: unknown) => this.#logger.warn("could not remove a cancelled session", { sessionId: acpSessionId, error: errorMessage(error) }));
  }

  /**
   * Called when the connection closed a session (the file stays). The lease is given back
   * before the close is answered, so another instance can open the session right after.
   */
  async closed(acpSessionId: string): Promise<void> {
    const lease = this.#states.get(acpSessionId)?.lease;
    this.#states.delete(acpSessionId);
    this.#settings.open.delete(acpSessionId);
    await lease?.release();
  }

  /**
   * A prompt: a slash command we handle is answered here (no model call, nothing stored);
   * otherwise the first prompt sets the title, then `run` drives the turn.
   */
  async prompt(handle: AcpSessionHandle, prompt: readonly ContentBlock[], run: () => Promise<PromptResponse>): Promise<PromptResponse> {
    const state = this.#states.get(handle.acpSessionId);
    if (state?.lease && !state.lease.held) throw sessionActiveElsewhere(handle.acpSessionId, undefined);
    if (state && this.#settings.slashCommands) {
      const command = parseSlashCommand(prompt, availableCommands(this.#settings.modes, this.#settings.models));
      if (command) {
        const lease = handle.gate.tryAcquire();
        if (!lease) throw acp.RequestError.invalidRequest({ sessionId: handle.acpSessionId }, `session ${handle.acpSessionId} is already running a prompt; wait for it or send session/cancel`);
        try {
          const text = await runSlashCommand(command, {
            controls: state.controls,
            modes: this.#settings.modes,
            models: this.#settings.models,
            setMode: (modeId) => this.#setMode(handle.acpSessionId, modeId),
            setConfig: async (configId, value) => void (await this.#setConfig(handle.acpSessionId, configId, value, false)),
          });
          handle.push({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
          await handle.flush();
          return { stopReason: "end_turn" };
        } finally {
          lease.release();
        }
      }
    }
    const title = state && state.title === undefined && !handle.gate.busy ? this.#setTitle(handle, state, prompt) : undefined;
    try {
      return await run();
    } finally {
      await title?.();
    }
  }

  /**
   * Sets the title from the first prompt and tells the client at once; returns the store write,
   * run after the turn: the user's message is durable before the model is called, and a second
   * fdatasync would only delay that call (a title lost in a crash comes from the next prompt).
   */
  #setTitle(handle: AcpSessionHandle, state: SessionState, prompt: readonly ContentBlock[]): (() => Promise<void>) | undefined {
    const title = titleFromPrompt(prompt);
    const { store } = this.#settings;
    if (title === undefined || !store) return undefined;
    state.title = title;
    handle.push({ sessionUpdate: "session_info_update", title, updatedAt: new Date().toISOString() });
    return async () => {
      try {
        await store.updateHeader(handle.acpSessionId, { title });
      } catch (error) {
        this.#logger.warn("could not store the session title", { sessionId: handle.acpSessionId, error: errorMessage(error) });
      }
    };
  }

  #afterAnswer(handle: AcpSessionHandle): void {
    if (handle.closed) return;
    if (this.#settings.slashCommands) {
      handle.push({ sessionUpdate: "available_commands_update", availableCommands: availableCommands(this.#settings.modes, this.#settings.models) });
    }
    const title = this.#states.get(handle.acpSessionId)?.title;
    if (title !== undefined) handle.push({ sessionUpdate: "session_info_update", title });
  }

  #state(acpSessionId: string): { view: LifecycleSessionView; state: SessionState } {
    const view = this.#host.session(acpSessionId);
    const state = this.#states.get(acpSessionId);
    if (!state) throw sessionNotFound(acpSessionId);
    return { view, state };
  }

  async #setMode(acpSessionId: string, modeId: string): Promise<void> {
    const { view, state } = this.#state(acpSessionId);
    if (!state.controls.setMode(modeId)) return;
    await this.#persistControls(acpSessionId, state);
    view.handle.push({ sessionUpdate: "current_mode_update", currentModeId: modeId });
    await view.handle.flush();
  }

  async #setConfig(acpSessionId: string, configId: string, value: unknown, fromClient: boolean): Promise<SessionConfigOption[]> {
    const { view, state } = this.#state(acpSessionId);
    const { options, shapeChanged } = state.controls.setConfig(configId, value);
    await this.#persistControls(acpSessionId, state);
    // The answer carries the list; an update also tells clients that only watch updates, and is a must when a command changed it.
    if (shapeChanged || !fromClient) {
      view.handle.push({ sessionUpdate: "config_option_update", configOptions: options });
      await view.handle.flush();
    }
    return options;
  }

  async #persistControls(acpSessionId: string, state: SessionState): Promise<void> {
    const { store } = this.#settings;
    if (!store) return;
    try {
      await store.updateHeader(acpSessionId, { metadata: state.controls.metadata() });
    } catch (error) {
      this.#logger.warn("could not store the session's mode / config", { sessionId: acpSessionId, error: errorMessage(error) });
    }
  }

  /** Load / resume; a cancelled request ($/cancel_request) leaves the session closed and answers -32800. */
  async #restore(params: LoadSessionRequest | ResumeSessionRequest, replay: boolean, signal?: AbortSignal): Promise<{ modes?: SessionModeState; configOptions?: SessionConfigOption[] }> {
    const id = params.sessionId;
    // Checked in full before anything happens (an open copy is closed below): a refused cwd changes nothing.
    this.#host.checkDirectory(params.cwd, "cwd");
    (params.additionalDirectories ?? []).forEach((d, i) => this.#host.checkDirectory(d, `additionalDirectories[${i}]`));
    return this.#locked(id, async () => {
      // Another principal's session is answered as unknown before anything of it is touched.
      if (!(await this.#settings.store!.exists(id).catch(storeError))) throw sessionNotFound(id);
      // One process owns a session at a time: an open copy (any connection) is closed first.
      await this.#settings.open.get(id)?.close(replay ? "session/load of an open session" : "session/resume of an open session");
      // Another instance running it answers "active elsewhere"; the lease is ours from here until close.
      const lease = this.#settings.leases && (await takeSessionLease(this.#settings.leases, id, this.#logger));
      const { view, restore, open } = await this.#openStored(id, params, signal).catch(async (error: unknown) => {
        await lease?.release();
        throw error;
      });
      if (lease) this.#holdLease(id, lease);
      await this.#moveIfNeeded(restore.loaded, open);
      if (replay) {
        let sent = 0;
        for (const update of replayUpdates(restore.items, describeWith(view.driver))) {
          if (signal?.aborted) break;
          view.handle.push(update);
          // Written in batches: a long history neither piles up in memory nor blocks a $/cancel_request.
          if (++sent % 200 === 0) await view.handle.flush();
        }
        await view.handle.flush();
      }
      if (signal?.aborted) {
        await this.#host.closeSession(id, "the client cancelled the request");
        throw signal.reason instanceof acp.RequestError ? signal.reason : acp.RequestError.requestCancelled({}, "the client cancelled the request");
      }
      return this.#states.get(id)!.controls.sessionState();
    });
  }

  async #openStored(id: string, params: LoadSessionRequest | ResumeSessionRequest, signal?: AbortSignal): Promise<{ view: LifecycleSessionView; restore: SessionRestore; open: OpenSessionParams }> {
    const loaded = await this.#settings.store!.load(id).catch(storeError);
    if (!loaded) throw sessionNotFound(id);
    const restore: SessionRestore = { acpSessionId: id, loaded, items: repairDanglingToolCalls(loaded.items) };
    const open: OpenSessionParams = { cwd: params.cwd, additionalDirectories: params.additionalDirectories ?? [], mcpServers: params.mcpServers ?? [], _meta: params._meta ?? null };
    return { view: await this.#host.openSession(open, restore, signal), restore, open };
  }

  /** The client may open a stored session in another directory: the header follows. */
  async #moveIfNeeded(loaded: LoadedSession, open: OpenSessionParams): Promise<void> {
    const dirs = open.additionalDirectories ?? [];
    const same = loaded.header.cwd === open.cwd && JSON.stringify(loaded.header.additionalDirectories) === JSON.stringify(dirs);
    if (same) return;
    await this.#settings.store!.updateHeader(loaded.header.sessionId, { cwd: open.cwd, additionalDirectories: dirs }).catch((error: unknown) => {
      this.#logger.warn("could not store the session's new cwd", { sessionId: loaded.header.sessionId, error: errorMessage(error) });
    });
  }

  /** A title set by session/set_title, told to the session if it is open on this connection. */
  async #titleChanged(id: string, title: string): Promise<void> {
    const state = this.#states.get(id);
    if (!state) return;
    state.title = title;
    const view = this.#host.session(id);
    view.handle.push({ sessionUpdate: "session_info_update", title, updatedAt: new Date().toISOString() });
    await view.handle.flush();
  }

  /** For a request about a session that is not open on this connection: -32600 if its lease was lost here or another instance runs it. */
  async refuseIfActiveElsewhere(acpSessionId: string): Promise<void> {
    // Not this principal's (or unknown): "not found", never "active elsewhere".
    const store = this.#settings.store;
    if (store && !(await store.exists(acpSessionId).catch(storeError))) throw sessionNotFound(acpSessionId);
    if (this.#lost.has(acpSessionId)) throw sessionLeaseLost(acpSessionId);
    await refuseIfLeasedElsewhere(this.#settings.leases, acpSessionId);
  }

  /** Keeps the lease with the open session; losing it (not renewed in time) closes the session here. */
  #holdLease(id: string, lease: SessionLease): void {
    const state = this.#states.get(id);
    if (!state) {
      void lease.release();
      return;
    }
    state.lease = lease;
    this.#lost.delete(id);
    lease.onLost((reason) => {
      this.#logger.warn("session lease lost; closing the session on this instance", { sessionId: id, reason });
      this.#lost.add(id);
      for (const old of this.#lost) if (this.#lost.size > MAX_LOST_REMEMBERED) this.#lost.delete(old);
      void this.#host.closeSession(id, "the session lease was lost").catch(() => undefined);
    });
  }

  async #locked<T>(id: string, run: () => Promise<T>): Promise<T> {
    const locks = this.#settings.locks;
    const previous = locks.get(id) ?? Promise.resolve();
    const current = previous.catch(() => undefined).then(run);
    locks.set(id, current);
    try {
      return await current;
    } finally {
      if (locks.get(id) === current) locks.delete(id);
    }
  }
}

/** Title from a prompt: its first non-empty text line, whitespace collapsed, at most 60 characters. */
export function titleFromPrompt(prompt: readonly ContentBlock[]): string | undefined {
  for (const block of prompt) {
    if (block.type !== "text") continue;
    const line = block.text
      .split(/\r?\n/)
      .map((l) => l.trim().replace(/\s+/g, " "))
      .find((l) => l.length > 0);
    if (line) return line.length > 60 ? `${line.slice(0, 59).trimEnd()}…` : line;
  }
  return undefined;
}

/** Title, kind and locations from the session's tool registry, for calls without recorded info. */
function describeWith(driver: LoopDriver): DescribeCall {
  return (toolName, input) => {
    const tool = driver.tools.get(toolName);
    if (!tool) return undefined;
    const parsed = tool.parse(input);
    const context = { cwd: driver.cwd, roots: driver.roots };
    return { title: tool.title(parsed, context), kind: tool.kind, locations: tool.locations(parsed, context) };
  };
}
