import * as acp from "@agentclientprotocol/sdk/unstable";
import { StateError } from "../../core/errors.js";
import { validatePromptBlocks } from "./capabilities.js";
import { AgentConnectionError, CapabilityError, TurnInterruptedError } from "./errors.js";
import { EventQueue } from "./event-queue.js";
import { TurnCollector, ClientEventMapper, type AcpSessionEvent, type PromptResult } from "./events.js";
import type { HostSessionInfo } from "./host-services.js";
import type { RequestOptions } from "./link.js";
import type { ClientPermissionPolicy } from "./permissions.js";
import { activeSpan } from "../../core/tracing.js";
import { notePermissionDecision } from "../tracing.js";

/**
 * The client a session runs on (`AcpSession.client`): an `AcpClient`, every member of it. It is
 * declared here and completed in client.ts (`declare module`, `extends AcpClient`) so that this
 * module, which the client imports, never imports the client.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- completed by client.ts (see above)
export interface SessionOwner {}

/** What a session needs from its client (kept narrow so the two stay decoupled). */
export interface SessionHost {
  capabilities(): acp.AgentCapabilities | undefined;
  request<M extends acp.AgentRequestMethod>(method: M, params: acp.AgentRequestParamsByMethod[M], options?: RequestOptions): Promise<acp.AgentRequestResponsesByMethod[M]>;
  sendCancel(sessionId: string): Promise<void>;
  readonly policy: ClientPermissionPolicy;
  readonly promptTimeoutMs: number;
  closeSession(sessionId: string, options?: { signal?: AbortSignal }): Promise<void>;
  /** The client that owns the session; its session methods serve this one's. */
  readonly client: SessionOwner;
}

/** Where a fork opens (defaults: the source's cwd and directories) — `AcpClient`'s `SessionOptions`. */
export interface ForkOptions {
  cwd?: string;
  additionalDirectories?: string[];
  mcpServers?: acp.McpServer[];
  signal?: AbortSignal;
  onEvent?: (event: AcpSessionEvent) => void;
}

/** What `AcpSession.prompt` takes: text, one ACP content block, or several. */
export type PromptInput = string | acp.ContentBlock | acp.ContentBlock[];

/** Options of one prompt. */
export interface PromptOptions {
  /** Aborting sends `session/cancel` for this prompt (the prompt then ends `cancelled`). */
  signal?: AbortSignal;
}

/** Cancels the one prompt it was taken for; a late call never touches a later prompt. */
export interface AcpCancellationHandle {
  /** The turn number this handle is fenced to. */
  readonly turn: number;
  cancel(): Promise<void>;
}

/** A streamed prompt: iterate the events; `result` settles with the turn. */
export interface PromptStream extends AsyncIterable<AcpSessionEvent> {
  readonly result: Promise<PromptResult>;
  cancel(): Promise<void>;
}

interface Turn {
  readonly id: number;
  readonly abort: AbortController;
  readonly collector: TurnCollector;
  readonly sink: ((event: AcpSessionEvent) => void) | undefined;
  cancelRequested: boolean;
  failure?: Error;
}

export interface SessionState {
  modes?: acp.SessionModeState | null;
  configOptions?: acp.SessionConfigOption[] | null;
}

/** One ACP session on an agent: prompts, streamed events, cancellation, permissions. */
export class AcpSession {
  readonly sessionId: string;
  readonly info: HostSessionInfo;
  #modes: acp.SessionModeState | undefined;
  #commands: acp.AvailableCommand[] = [];
  #configOptions: acp.SessionConfigOption[] | undefined;
  #title: string | undefined;
  readonly #host: SessionHost;
  readonly #mapper = new ClientEventMapper();
  readonly #listeners = new Set<(event: AcpSessionEvent) => void>();
  readonly #preCancelled = new Set<number>();
  #turnCount = 0;
  #active: Turn | undefined;
  #closed = false;
  /** Set while a recovery `session/load` replays history the listeners already saw. */
  suppressUpdates = false;
  /** Runs after `close()` (a session from `AcpClient.startSession` closes its client here). */
  onClose: (() => Promise<void>) | undefined;

  /** The client this session runs on (its agent process or connection): for `close()`, other sessions, `agentInfo`. */
  get client(): SessionOwner {
    return this.#host.client;
  }

  /** @internal Sessions come from `AcpClient` (`startSession`, `newSession`, `loadSession`, `resumeSession`). */
  constructor(host: SessionHost, info: HostSessionInfo, state: SessionState) {
    this.#host = host;
    this.sessionId = info.sessionId;
    this.info = info;
    this.applyState(state);
  }

  get modes(): acp.SessionModeState | undefined {
    return this.#modes;
  }

  get configOptions(): acp.SessionConfigOption[] | undefined {
    return this.#configOptions;
  }

  /** The session's title, as the agent last reported it (`session_info_update`) or `setTitle` stored it. */
  get title(): string | undefined {
    return this.#title;
  }

  /** `session/fork`: a new session with this one's history (this one is untouched). */
  fork(options: ForkOptions = {}): Promise<AcpSession> {
    return this.#host.client.forkSession(this.sessionId, { cwd: this.info.cwd, additionalDirectories: this.info.additionalDirectories, ...options });
  }

  /** `session/set_title`: resolves with the title the agent stored (it may normalize it). */
  setTitle(title: string, options: RequestOptions = {}): Promise<string> {
    return this.#host.client.setSessionTitle(this.sessionId, title, options);
  }

  /** `session/status`: `open` or `saved` (no side effects on the agent). */
  status(options: RequestOptions = {}): Promise<acp.SessionStatusResponse> {
    return this.#host.client.sessionStatus(this.sessionId, options);
  }

  /** The agent's slash commands (`available_commands_update`). */
  get availableCommands(): acp.AvailableCommand[] {
    return this.#commands;
  }

  /** True while a prompt is running. */
  get busy(): boolean {
    return this.#active !== undefined;
  }

  /** @internal */
  applyState(state: SessionState): void {
    if (state.modes) this.#modes = state.modes;
    if (state.configOptions) this.#configOptions = state.configOptions;
  }

  /** Every event of this session, also those outside a prompt (replays, late updates). */
  onEvent(listener: (event: AcpSessionEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Sends a prompt and resolves with the whole turn. */
  async prompt(input: PromptInput, options: PromptOptions = {}): Promise<PromptResult> {
    return this.#runTurn(input, options, undefined);
  }

  /** Sends a prompt and yields its events as they arrive, ending with `done` or `error`. Breaking out early cancels the turn. */
  stream(input: PromptInput, options: PromptOptions = {}): PromptStream {
    let turnId = 0;
    const queue = new EventQueue<AcpSessionEvent>(() => void this.#cancelTurnNumber(turnId));
    const result = this.#runTurn(input, options, (event) => queue.push(event), (id) => (turnId = id));
    void result.then(
      () => queue.end(),
      () => queue.end(),
    );
    return {
      result,
      cancel: () => this.#cancelTurnNumber(turnId),
      [Symbol.asyncIterator]: () => queue[Symbol.asyncIterator](),
    };
  }

  /**
   * A handle fenced to the running prompt, or — when idle — to the next prompt. Usable from
   * any task; cancelling after that prompt ended does nothing.
   */
  cancellationHandle(): AcpCancellationHandle {
    const turn = this.#active?.id ?? this.#turnCount + 1;
    return { turn, cancel: () => this.#cancelTurnNumber(turn) };
  }

  /** Cancels the running prompt, if any. */
  async cancel(): Promise<void> {
    if (this.#active) await this.#cancelTurn(this.#active);
  }

  async setMode(modeId: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    if (!this.#modes) throw new CapabilityError("session/set_mode", "modes", "the agent returned no modes for this session");
    if (!this.#modes.availableModes.some((m) => m.id === modeId)) throw new StateError(`unknown mode "${modeId}"`);
    await this.#host.request(acp.methods.agent.session.setMode, { sessionId: this.sessionId, modeId }, options);
    this.#modes = { ...this.#modes, currentModeId: modeId };
  }

  async setConfigOption(configId: string, value: string | boolean, options: { signal?: AbortSignal } = {}): Promise<acp.SessionConfigOption[]> {
    if (!this.#configOptions) throw new CapabilityError("session/set_config_option", "configOptions", "the agent returned no config options for this session");
    if (!this.#configOptions.some((o) => o.id === configId)) throw new StateError(`unknown config option "${configId}"`);
    const params: acp.SetSessionConfigOptionRequest =
      typeof value === "boolean" ? { sessionId: this.sessionId, configId, type: "boolean", value } : { sessionId: this.sessionId, configId, value };
    const response = await this.#host.request(acp.methods.agent.session.setConfigOption, params, options);
    if (Array.isArray(response?.configOptions)) this.#configOptions = response.configOptions;
    return this.#configOptions;
  }

  /** Closes the session on the agent (`session/close` when advertised) and releases its terminals. */
  async close(options: { signal?: AbortSignal } = {}): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#active) await this.#cancelTurn(this.#active);
    try {
      await this.#host.closeSession(this.sessionId, options);
    } finally {
      await this.onClose?.();
    }
  }

  /** @internal Delivers one `session/update`. */
  receive(update: acp.SessionUpdate): void {
    if (this.suppressUpdates) {
      this.#mapper.map(update);
      return;
    }
    const event = this.#mapper.map(update);
    if (event.type === "mode_changed" && this.#modes) this.#modes = { ...this.#modes, currentModeId: event.modeId };
    if (event.type === "config_changed") this.#configOptions = event.configOptions;
    if (event.type === "commands") this.#commands = event.commands;
    if (event.type === "session_info" && typeof event.title === "string") this.#title = event.title;
    this.#emit(event);
  }

  /** @internal Answers one `session/request_permission` through the policy. */
  async handlePermission(params: acp.RequestPermissionRequest, requestSignal: AbortSignal): Promise<acp.RequestPermissionResponse> {
    const turn = this.#active;
    const requestSpan = activeSpan(); // the served request's span: the answer is awaited below
    const known = this.#mapper.toolCalls.get(params.toolCall.toolCallId);
    const title = params.toolCall.title ?? known?.title ?? "(untitled tool call)";
    const kind = params.toolCall.kind ?? known?.kind ?? "other";
    const toolCallId = params.toolCall.toolCallId;
    this.#emit({ type: "permission_requested", request: { toolCallId, title, kind, options: params.options, toolCall: params.toolCall } });
    const signals = [requestSignal, ...(turn ? [turn.abort.signal] : [])];
    const resolution =
      turn?.cancelRequested === true
        ? ({ outcome: { outcome: "cancelled" }, decision: "cancelled", source: "cancel", reason: "the turn was cancelled" } as const)
        : await this.#host.policy.resolveToolPermission(params, {
            roots: [this.info.cwd, ...this.info.additionalDirectories],
            known: known ? { ...known } : undefined,
            signal: AbortSignal.any(signals),
          });
    notePermissionDecision(requestSpan, resolution.decision, resolution.source, "optionKind" in resolution ? resolution.optionKind : undefined);
    this.#emit({
      type: "permission_answered",
      answer: {
        toolCallId,
        title,
        outcome: resolution.outcome,
        decision: resolution.decision,
        ...("optionKind" in resolution && resolution.optionKind ? { optionKind: resolution.optionKind } : {}),
        source: resolution.source,
        reason: resolution.reason,
        ...("noRejectOption" in resolution && resolution.noRejectOption ? { noRejectOption: true } : {}),
      },
    });
    if ("cancelTurn" in resolution && resolution.cancelTurn && turn) {
      if (resolution.failure) turn.failure ??= resolution.failure;
      // Answering `cancelled` obliges the client to cancel the turn (ACP).
      void this.#cancelTurn(turn);
    }
    return { outcome: resolution.outcome };
  }

  async #runTurn(
    input: PromptInput,
    options: PromptOptions,
    sink: ((event: AcpSessionEvent) => void) | undefined,
    onStart?: (turnId: number) => void,
  ): Promise<PromptResult> {
    const blocks = toBlocks(input);
    const emitError = (error: unknown): never => {
      const e = error instanceof Error ? error : new Error(String(error));
      sink?.({ type: "error", error: e });
      throw e;
    };
    if (this.#closed) emitError(new StateError("this session is closed"));
    if (this.#active) emitError(new StateError("a prompt is already running in this session; wait for it or cancel it"));
    try {
      validatePromptBlocks(this.#host.capabilities(), blocks);
    } catch (e) {
      emitError(e);
    }
    const turn: Turn = { id: ++this.#turnCount, abort: new AbortController(), collector: new TurnCollector(), sink, cancelRequested: false };
    onStart?.(turn.id);
    if (this.#preCancelled.delete(turn.id) || options.signal?.aborted) {
      // Cancelled before it began: nothing is sent to the agent.
      const result = turn.collector.result({ stopReason: "cancelled" });
      sink?.({ type: "done", stopReason: "cancelled", result });
      return result;
    }
    this.#active = turn;
    const onAbort = (): void => void this.#cancelTurn(turn);
    options.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const response = await this.#host.request(
        acp.methods.agent.session.prompt,
        { sessionId: this.sessionId, prompt: blocks },
        { timeoutMs: this.#host.promptTimeoutMs },
      );
      // Let notification handlers already dispatched before the answer finish first.
      await new Promise((resolve) => setImmediate(resolve));
      if (!response || typeof response.stopReason !== "string") throw new Error("the agent answered session/prompt without a stopReason");
      if (turn.failure) throw turn.failure;
      const result = turn.collector.result(response);
      this.#finish(turn);
      this.#emit({ type: "done", stopReason: result.stopReason, result }, turn);
      return result;
    } catch (error) {
      this.#finish(turn);
      // A dropped connection loses the turn's answer: say so, never report it as a plain failure.
      const e = error instanceof AgentConnectionError ? new TurnInterruptedError(this.sessionId, error) : error instanceof Error ? error : new Error(String(error));
      this.#emit({ type: "error", error: e }, turn);
      throw e;
    } finally {
      options.signal?.removeEventListener("abort", onAbort);
    }
  }

  #finish(turn: Turn): void {
    if (this.#active === turn) this.#active = undefined;
    turn.abort.abort();
  }

  /** Events go to the turn that was running when they arrived (if any) and to all listeners. */
  #emit(event: AcpSessionEvent, turn: Turn | undefined = this.#active): void {
    if (turn) {
      turn.collector.add(event);
      turn.sink?.(event);
    }
    for (const listener of this.#listeners) listener(event);
  }

  async #cancelTurnNumber(turnId: number): Promise<void> {
    if (this.#active?.id === turnId) return this.#cancelTurn(this.#active);
    if (turnId > this.#turnCount) this.#preCancelled.add(turnId);
  }

  async #cancelTurn(turn: Turn): Promise<void> {
    if (turn.cancelRequested || this.#active !== turn) return;
    turn.cancelRequested = true;
    // Pending permission questions are answered `cancelled` through this signal.
    turn.abort.abort();
    await this.#host.sendCancel(this.sessionId);
  }
}

export function toBlocks(input: PromptInput): acp.ContentBlock[] {
  if (typeof input === "string") return [{ type: "text", text: input }];
  return Array.isArray(input) ? input : [input];
}
