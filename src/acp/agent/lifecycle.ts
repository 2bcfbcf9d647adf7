import type { ContentBlock, LoadSessionRequest, NewSessionRequest, PromptResponse, ResumeSessionRequest, SessionConfigOption } from "@agentclientprotocol/sdk/unstable";
import * as acp from "@agentclientprotocol/sdk/unstable";
import type { GroupHandlers } from "../methods.js";
import type { Logger } from "../../core/index.js";
import { errorMessage } from "../../core/index.js";
import type { LoopDriver } from "../../loop/index.js";
import type { Item } from "../../core/index.js";
import type { LoadedSession } from "../../store/index.js";
import { openSessionReader } from "../../store/index.js";
import { availableCommands, parseSlashCommand, runSlashCommand } from "./commands.js";
import { sessionNotFound } from "./integration.js";
import { ownedOpenSessions, ownedSessionStore } from "./ownership.js";
import type { DescribeCall } from "./replay.js";
import { ReplayStream, repairDanglingToolCalls } from "./replay.js";
import { UpdateQueue } from "./update-queue.js";
import type { AcpSessionHandle } from "./session.js";
import { refuseIfLeasedElsewhere, sessionActiveElsewhere, sessionLeaseLost, takeSessionLease } from "./session-leases.js";
import { StoredSessions, storeError } from "./stored-sessions.js";
import { titleStored } from "./session-title.js";
import type { LifecycleSettings } from "./lifecycle-settings.js";
import type { OpenedState, OpenSessionEntry, SessionRestore, SessionTable } from "./session-table.js";

/**
 * The lifecycle settings as one principal sees them: another principal's sessions, stored or
 * open, are not there (`onForeign` hears of each attempt on a stored one).
 */
export function ownedLifecycleSettings(settings: LifecycleSettings, principal: string, onForeign?: (sessionId: string, owner: string) => void): LifecycleSettings {
  return { ...settings, store: settings.store && ownedSessionStore(settings.store, principal, onForeign), open: ownedOpenSessions(settings.open, principal) };
}

/**
 * One connection's session lifecycle handlers: load (with replay) / resume over the store, modes,
 * config options, slash commands, titles, per-session locks. The operations on stored sessions
 * (list, delete, fork, set title, archive, status) are `StoredSessions'`. Sessions are opened,
 * found and closed through the connection's `SessionTable`.
 */
export class ConnectionLifecycle {
  readonly #sessions: SessionTable;
  readonly #stored: StoredSessions;
  readonly #settings: LifecycleSettings;
  readonly #logger: Logger;

  /** The settings are the table's: the principal's views of the store and open sessions. */
  constructor(sessions: SessionTable) {
    this.#sessions = sessions;
    this.#settings = sessions.lifecycle;
    this.#logger = sessions.logger;
    this.#stored = new StoredSessions(this.#settings, {
      checkDirectory: (path, field) => sessions.checkDirectory(path, field),
      resume: (params, signal) => this.#restore(params, false, signal),
      locked: (id, run) => this.#locked(id, run),
      titleChanged: (id, title) => this.#titleChanged(id, title),
    }, this.#logger);
  }

  /** The handlers for what is configured; what is not stays -32601 (and is not advertised). */
  handlers(): GroupHandlers<"lifecycle"> {
    const { store, modes, models } = this.#settings;
    const handlers: GroupHandlers<"lifecycle"> = {};
    if (store) {
      handlers[acp.methods.agent.session.load] = ({ params, signal }) => this.#restore(params, true, signal);
      handlers[acp.methods.agent.session.resume] = ({ params, signal }) => this.#restore(params, false, signal);
    }
    if (modes) handlers[acp.methods.agent.session.setMode] = ({ params }) => this.#setMode(params.sessionId, params.modeId).then(() => ({}));
    if (models) {
      handlers[acp.methods.agent.session.setConfigOption] = async ({ params }) => {
        if ("type" in params && params.type === "boolean") throw acp.RequestError.invalidParams({ configId: params.configId }, `config option "${params.configId}" is not a boolean option`);
        return { configOptions: await this.#setConfig(params.sessionId, params.configId, params.value, true) };
      };
    }
    return handlers;
  }

  /** The operations on stored sessions (list, delete, fork, title, archive, status). */
  storedHandlers(): GroupHandlers<"stored"> {
    return this.#stored.handlers();
  }

  /**
   * A prompt: a slash command we handle is answered here (no model call, nothing stored);
   * otherwise the first prompt sets the title, then `run` drives the turn.
   */
  async prompt(handle: AcpSessionHandle, prompt: readonly ContentBlock[], run: () => Promise<PromptResponse>): Promise<PromptResponse> {
    const state = this.#sessions.find(handle.acpSessionId);
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
    const titled = state !== undefined && state.title === undefined && !handle.gate.busy && this.#setTitle(handle, state, prompt);
    try {
      return await run();
    } finally {
      if (titled && this.#settings.store) await titleStored(state, this.#settings.store, handle.acpSessionId, this.#logger);
    }
  }

  /**
   * Sets the title from the first prompt and tells the client at once; it is stored with the
   * prompt's user item (session-title.ts), and the turn waits for that write only at its end.
   */
  #setTitle(handle: AcpSessionHandle, state: OpenSessionEntry, prompt: readonly ContentBlock[]): boolean {
    const title = titleFromPrompt(prompt);
    if (title === undefined || !this.#settings.store) return false;
    state.title = title;
    state.unstoredTitle = title;
    handle.push({ sessionUpdate: "session_info_update", title, updatedAt: new Date().toISOString() });
    return true;
  }

  async #setMode(acpSessionId: string, modeId: string): Promise<void> {
    const state = this.#sessions.get(acpSessionId);
    if (!state.controls.setMode(modeId)) return;
    await this.#persistControls(acpSessionId, state);
    state.handle.push({ sessionUpdate: "current_mode_update", currentModeId: modeId });
    await state.handle.flush();
  }

  async #setConfig(acpSessionId: string, configId: string, value: unknown, fromClient: boolean): Promise<SessionConfigOption[]> {
    const state = this.#sessions.get(acpSessionId);
    const { options, shapeChanged } = state.controls.setConfig(configId, value);
    await this.#persistControls(acpSessionId, state);
    // The answer carries the list; an update also tells clients that only watch updates, and is a must when a command changed it.
    if (shapeChanged || !fromClient) {
      state.handle.push({ sessionUpdate: "config_option_update", configOptions: options });
      await state.handle.flush();
    }
    return options;
  }

  async #persistControls(acpSessionId: string, state: OpenSessionEntry): Promise<void> {
    const { store } = this.#settings;
    if (!store) return;
    try {
      await store.updateHeader(acpSessionId, { metadata: state.controls.metadata() });
    } catch (error) {
      this.#logger.warn("could not store the session's mode / config", { sessionId: acpSessionId, error: errorMessage(error) });
    }
  }

  /** Load / resume; a cancelled request ($/cancel_request) leaves the session closed and answers -32800. */
  async #restore(params: LoadSessionRequest | ResumeSessionRequest, replay: boolean, signal?: AbortSignal): Promise<OpenedState> {
    const id = params.sessionId;
    // Checked in full before anything happens (an open copy is closed below): a refused cwd changes nothing.
    this.#sessions.checkDirectory(params.cwd, "cwd");
    (params.additionalDirectories ?? []).forEach((d, i) => this.#sessions.checkDirectory(d, `additionalDirectories[${i}]`));
    return this.#locked(id, async () => {
      // Another principal's session is answered as unknown before anything of it is touched.
      if (!(await this.#settings.store!.exists(id).catch(storeError))) throw sessionNotFound(id);
      // One process owns a session at a time: an open copy (any connection) is closed first.
      await this.#settings.open.get(id)?.close(replay ? "session/load of an open session" : "session/resume of an open session");
      // Another instance running it answers "active elsewhere"; the lease is ours from here until close.
      const lease = this.#settings.leases && (await takeSessionLease(this.#settings.leases, id, this.#logger));
      const { view, restore, open, replayed } = await this.#openStored(id, params, replay, signal).catch(async (error: unknown) => {
        await lease?.release();
        throw error;
      });
      if (lease) this.#sessions.holdLease(id, lease);
      await this.#moveIfNeeded(restore.loaded, open);
      if (replayed && !signal?.aborted) {
        // What the stream held back (dangling tool calls) needs the session's tools to be described.
        for (const update of replayed.finish(describeWith(view.driver))) view.handle.push(update);
        await view.handle.flush();
      }
      if (signal?.aborted) {
        await this.#sessions.close(id, "the client cancelled the request");
        throw signal.reason instanceof acp.RequestError ? signal.reason : acp.RequestError.requestCancelled({}, "the client cancelled the request");
      }
      return view.controls.sessionState();
    });
  }

  /**
   * Reads the session item by item and, for session/load, replays each item as it is read
   * (ReplayStream; sent in batches, so a long history is never all in memory as updates); then
   * opens it with the whole transcript, which the loop needs for its model requests.
   */
  async #openStored(
    id: string,
    params: LoadSessionRequest | ResumeSessionRequest,
    replay: boolean,
    signal?: AbortSignal,
  ): Promise<{ view: OpenSessionEntry; restore: SessionRestore; open: NewSessionRequest; replayed: ReplayStream | undefined }> {
    const client = this.#sessions.client;
    if (!client) throw acp.RequestError.invalidRequest(undefined, "initialize first");
    const reader = await openSessionReader(this.#settings.store!, id).catch(storeError);
    if (!reader) throw sessionNotFound(id);
    const replayed = replay ? new ReplayStream() : undefined;
    const queue = new UpdateQueue((update) => client.sessionUpdate(id, update), this.#logger);
    const items: Item[] = [];
    try {
      let sent = 0;
      for await (const { item } of reader.items()) {
        if (signal?.aborted) break;
        items.push(item);
        for (const update of replayed?.push(item) ?? []) {
          queue.push(update);
          // Written in batches: a long history neither piles up in memory nor blocks a $/cancel_request.
          if (++sent % 200 === 0) await queue.flushed();
        }
      }
      await queue.flushed();
    } catch (error) {
      storeError(error);
    } finally {
      await reader.close();
    }
    if (signal?.aborted) throw signal.reason instanceof acp.RequestError ? signal.reason : acp.RequestError.requestCancelled({}, "the client cancelled the request");
    const loaded: LoadedSession = { ...reader.result(), items };
    const restore: SessionRestore = { acpSessionId: id, loaded, items: repairDanglingToolCalls(items) };
    const open: NewSessionRequest = { cwd: params.cwd, additionalDirectories: params.additionalDirectories ?? [], mcpServers: params.mcpServers ?? [], _meta: params._meta ?? null };
    await this.#sessions.open(open, restore, signal);
    return { view: this.#sessions.get(id), restore, open, replayed };
  }

  /** The client may open a stored session in another directory: the header follows. */
  async #moveIfNeeded(loaded: LoadedSession, open: NewSessionRequest): Promise<void> {
    const dirs = open.additionalDirectories ?? [];
    const same = loaded.header.cwd === open.cwd && JSON.stringify(loaded.header.additionalDirectories) === JSON.stringify(dirs);
    if (same) return;
    await this.#settings.store!.updateHeader(loaded.header.sessionId, { cwd: open.cwd, additionalDirectories: dirs }).catch((error: unknown) => {
      this.#logger.warn("could not store the session's new cwd", { sessionId: loaded.header.sessionId, error: errorMessage(error) });
    });
  }

  /** A title set by session/set_title, told to the session if it is open on this connection. */
  async #titleChanged(id: string, title: string): Promise<void> {
    const state = this.#sessions.find(id);
    if (!state || state.closing) return;
    state.title = title;
    state.handle.push({ sessionUpdate: "session_info_update", title, updatedAt: new Date().toISOString() });
    await state.handle.flush();
  }

  /** For a request about a session that is not open on this connection: -32600 if its lease was lost here or another instance runs it. */
  async refuseIfActiveElsewhere(acpSessionId: string): Promise<void> {
    // Not this principal's (or unknown): "not found", never "active elsewhere".
    const store = this.#settings.store;
    if (store && !(await store.exists(acpSessionId).catch(storeError))) throw sessionNotFound(acpSessionId);
    if (this.#sessions.lostLease(acpSessionId)) throw sessionLeaseLost(acpSessionId);
    await refuseIfLeasedElsewhere(this.#settings.leases, acpSessionId);
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
