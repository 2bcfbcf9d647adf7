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
import { methods } from "@agentclientprotocol/sdk";
import { StateError } from "../../core/index.js";

/**
 * The agent's way back to one ACP client connection: permission prompts, session updates, and
 * the client's file system and terminals. Capabilities are checked here because the SDK does
 * not enforce them. Cheap to share; one per connection.
 */
export class AcpClientHandle {
  readonly #context: AgentContext;
  readonly #capabilities: ClientCapabilities;

  constructor(context: AgentContext, capabilities: ClientCapabilities = {}) {
    this.#context = context;
    this.#capabilities = capabilities;
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

  /** Sends `elicitation/create`; aborting `signal` sends `$/cancel_request` and stops waiting. */
  async elicit(params: CreateElicitationRequest, signal?: AbortSignal): Promise<CreateElicitationResponse> {
    if (params.mode === "form" && !this.canElicitForms) throw new StateError("the ACP client did not advertise elicitation.form");
    return this.#context.request(methods.client.elicitation.create, params, signal ? { cancellationSignal: signal, stopWaitingOnCancel: true } : undefined);
  }

  get hasTerminal(): boolean {
    return this.#capabilities.terminal === true;
  }

  /** Sends `session/update`; resolves once the message is written. */
  sessionUpdate(sessionId: string, update: SessionUpdate): Promise<void> {
    return this.#context.notify(methods.client.session.update, { sessionId, update });
  }

  /**
   * Sends `session/request_permission`. Aborting `signal` sends `$/cancel_request` and stops
   * waiting at once (the client is told; no promise is left hanging on its answer).
   */
  requestPermission(params: RequestPermissionRequest, signal?: AbortSignal): Promise<RequestPermissionResponse> {
    return this.#context.request(
      methods.client.session.requestPermission,
      params,
      signal ? { cancellationSignal: signal, stopWaitingOnCancel: true } : undefined,
    );
  }

  async readTextFile(params: ReadTextFileRequest, signal?: AbortSignal): Promise<ReadTextFileResponse> {
    if (!this.canReadFiles) throw new StateError("the ACP client did not advertise fs.readTextFile");
    return this.#context.request(methods.client.fs.readTextFile, params, signal ? { cancellationSignal: signal, stopWaitingOnCancel: true } : undefined);
  }

  async writeTextFile(params: WriteTextFileRequest, signal?: AbortSignal): Promise<void> {
    if (!this.canWriteFiles) throw new StateError("the ACP client did not advertise fs.writeTextFile");
    await this.#context.request(methods.client.fs.writeTextFile, params, signal ? { cancellationSignal: signal, stopWaitingOnCancel: true } : undefined);
  }

  /** Runs a command in a client terminal; release the handle when done. */
  async createTerminal(params: CreateTerminalRequest): Promise<TerminalHandle> {
    if (!this.hasTerminal) throw new StateError("the ACP client did not advertise terminal support");
    return this.#context.createTerminal(params);
  }
}
