import type {
  AgentContext,
  ClientCapabilities,
  CreateElicitationRequest,
  CreateElicitationResponse,
  CreateTerminalRequest,
  ReadTextFileRequest,
  ReadTextFileResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionUpdate,
  TerminalHandle,
  WriteTextFileRequest,
} from "@agentclientprotocol/sdk";
import { methods } from "@agentclientprotocol/sdk/unstable";
import { StateError, formatMs } from "../../core/index.js";
import { tracedRequest } from "../tracing.js";

/** Default bound on each fs/terminal request to the client (a human is not waited on there). */
export const DEFAULT_CLIENT_REQUEST_TIMEOUT_MS = 30_000;

/** The client did not answer a request in time; the request was cancelled (`$/cancel_request`). */
export class ClientRequestTimeoutError extends Error {
  override readonly name = "ClientRequestTimeoutError";
  readonly code = "ETIMEDOUT";
  constructor(
    readonly method: string,
    readonly timeoutMs: number,
  ) {
    super(`the editor did not answer ${method} within ${formatMs(timeoutMs)}`);
  }
}


/**
 * Where a connection's `session/update`s go instead of its SDK connection, in call order;
 * resolves once written. The ACP v2 bridge's in-process link to the runtime
 * (acp/v2/runtime-pipe.ts) is one: there the SDK's write queue was a second send chain per update.
 */
export type SessionUpdateSink = (params: { sessionId: string; update: SessionUpdate }) => Promise<void>;

/** What the SDK's `request` takes to cancel and stop waiting at once. */
export interface CancelOptions {
  cancellationSignal: AbortSignal;
  stopWaitingOnCancel: true;
}

/**
 * The agent's way back to one ACP client connection: permission prompts, session updates, and
 * the client's file system and terminals. Capabilities are checked here because the SDK does
 * not enforce them. Cheap to share; one per connection.
 */
export class AcpClientHandle {
  readonly #context: AgentContext;
  readonly #capabilities: ClientCapabilities;
  readonly #timeoutMs: number;
  readonly #sessionUpdates: SessionUpdateSink | undefined;

  /**
   * `requestTimeoutMs` bounds each fs/terminal request (default 30 s); permission questions are
   * not bounded. `sessionUpdates` takes the `session/update`s instead of the context (see
   * `SessionUpdateSink`).
   */
  constructor(context: AgentContext, capabilities: ClientCapabilities = {}, options: { requestTimeoutMs?: number; sessionUpdates?: SessionUpdateSink | undefined } = {}) {
    this.#context = context;
    this.#capabilities = capabilities;
    this.#timeoutMs = options.requestTimeoutMs ?? DEFAULT_CLIENT_REQUEST_TIMEOUT_MS;
    this.#sessionUpdates = options.sessionUpdates;
  }

  /** The bound on each fs/terminal request. */
  get requestTimeoutMs(): number {
    return this.#timeoutMs;
  }

  /**
   * One request with a bound: `send` gets SDK cancel options; when `timeoutMs` (default the
   * handle's) passes first, the request is cancelled and this rejects with
   * `ClientRequestTimeoutError`; an aborted `signal` rejects as the SDK does (-32800).
   */
  async bounded<T>(method: string, send: (options: CancelOptions) => Promise<T>, options: { signal?: AbortSignal | undefined; timeoutMs?: number } = {}): Promise<T> {
    const timeoutMs = Math.max(0, options.timeoutMs ?? this.#timeoutMs);
    const timer = new AbortController();
    const handle = setTimeout(() => timer.abort(), Math.min(timeoutMs, 2_147_483_647));
    const signal = options.signal ? AbortSignal.any([options.signal, timer.signal]) : timer.signal;
    try {
      return await send({ cancellationSignal: signal, stopWaitingOnCancel: true });
    } catch (error) {
      if (timer.signal.aborted && options.signal?.aborted !== true) throw new ClientRequestTimeoutError(method, timeoutMs);
      throw error;
    } finally {
      clearTimeout(handle);
    }
  }

  /** What the client advertised in `initialize`. */
  get capabilities(): ClientCapabilities {
    return this.#capabilities;
  }

  /** The SDK context, for requests this handle does not wrap (e.g. extension methods). */
  get context(): AgentContext {
    return this.#context;
  }

  get canReadFiles(): boolean {
    return this.#capabilities.fs?.readTextFile === true;
  }

  get canWriteFiles(): boolean {
    return this.#capabilities.fs?.writeTextFile === true;
  }

  /** The client advertised `elicitation.form` (it can show a form and return the answers). */
  get canElicitForms(): boolean {
    return this.#capabilities.elicitation?.form != null;
  }

  /** The client advertised `elicitation.url` (it can show a URL, ask the human's consent to open it). */
  get canElicitUrls(): boolean {
    return this.#capabilities.elicitation?.url != null;
  }

  /**
   * Sends `elicitation/create` (not bounded: a human answers); aborting `signal` sends
   * `$/cancel_request` and stops waiting.
   */
  async elicit(params: CreateElicitationRequest, signal?: AbortSignal): Promise<CreateElicitationResponse> {
    if (params.mode === "form" && !this.canElicitForms) throw new StateError("the ACP client did not advertise elicitation.form");
    if (params.mode === "url" && !this.canElicitUrls) throw new StateError("the ACP client did not advertise elicitation.url");
    return tracedRequest(methods.client.elicitation.create, params, (p) => this.#context.request(methods.client.elicitation.create, p, signal ? { cancellationSignal: signal, stopWaitingOnCancel: true } : undefined));
  }

  /** Sends `elicitation/complete`: the out-of-band part of a URL elicitation is done. */
  completeElicitation(elicitationId: string): Promise<void> {
    return this.#context.notify(methods.client.elicitation.complete, { elicitationId });
  }

  get hasTerminal(): boolean {
    return this.#capabilities.terminal === true;
  }

  /** Sends `session/update`; resolves once the message is written. */
  sessionUpdate(sessionId: string, update: SessionUpdate): Promise<void> {
    const params = { sessionId, update };
    return this.#sessionUpdates ? this.#sessionUpdates(params) : this.#context.notify(methods.client.session.update, params);
  }

  /**
   * Sends `session/request_permission`. Aborting `signal` sends `$/cancel_request` and stops
   * waiting at once (the client is told; no promise is left hanging on its answer).
   */
  requestPermission(params: RequestPermissionRequest, signal?: AbortSignal): Promise<RequestPermissionResponse> {
    return tracedRequest(methods.client.session.requestPermission, params, (p) =>
      this.#context.request(methods.client.session.requestPermission, p, signal ? { cancellationSignal: signal, stopWaitingOnCancel: true } : undefined),
    );
  }

  async readTextFile(params: ReadTextFileRequest, signal?: AbortSignal): Promise<ReadTextFileResponse> {
    if (!this.canReadFiles) throw new StateError("the ACP client did not advertise fs.readTextFile");
    return this.bounded(methods.client.fs.readTextFile, (o) => tracedRequest(methods.client.fs.readTextFile, params, (p) => this.#context.request(methods.client.fs.readTextFile, p, o)), { signal });
  }

  async writeTextFile(params: WriteTextFileRequest, signal?: AbortSignal): Promise<void> {
    if (!this.canWriteFiles) throw new StateError("the ACP client did not advertise fs.writeTextFile");
    await this.bounded(methods.client.fs.writeTextFile, (o) => tracedRequest(methods.client.fs.writeTextFile, params, (p) => this.#context.request(methods.client.fs.writeTextFile, p, o)), { signal });
  }

  /** Runs a command in a client terminal; release the handle when done. */
  async createTerminal(params: CreateTerminalRequest): Promise<TerminalHandle> {
    if (!this.hasTerminal) throw new StateError("the ACP client did not advertise terminal support");
    return tracedRequest(methods.client.terminal.create, params, (p) => this.#context.createTerminal(p));
  }
}
