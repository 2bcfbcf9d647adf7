import * as acp from "@agentclientprotocol/sdk/unstable";
import type { Logger } from "../../core/logger.js";
import { abortError } from "../../core/cancellation.js";
import { tracedRequest } from "../tracing.js";
import { activeContext, activeContextOr, inContext } from "../../core/tracing.js";
import type { AcpAgentConfig, ResolvedTimeouts } from "./config.js";
import { AcpTimeoutError, AuthenticationRequiredError, ClientClosedError, ProtocolVersionError } from "./errors.js";
import type { AgentEndpoint } from "./endpoint.js";
import type { ClientV2Bridge } from "./v2-bridge.js";

/** Builds the v2 bridge on the agent's stream (loaded by the client only when v2 is asked for). */
export type V2BridgeFactory = (stream: acp.Stream, logger: Logger) => ClientV2Bridge;

/** The ACP protocol versions this client speaks on the wire. */
export const SUPPORTED_PROTOCOL_VERSIONS = [acp.PROTOCOL_VERSION];

export interface RequestOptions {
  signal?: AbortSignal;
  /** 0 or undefined = no timeout. */
  timeoutMs?: number;
}

/** One agent endpoint (a process or a connection to a URL) plus its SDK connection, initialized. Replaced as a whole on recovery. */
export class Link {
  readonly endpoint: AgentEndpoint;
  readonly connection: acp.ClientConnection;
  #init: acp.InitializeResponse | undefined;
  #closedByUs: Error | undefined;
  /** Set when the link speaks ACP v2 (through the bridge). */
  readonly #v2: ClientV2Bridge | undefined;
  /** The context the link was made in (a delegating tool's span): the parent of its requests. */
  readonly #trace = activeContext();

  constructor(endpoint: AgentEndpoint, logger: Logger, app: acp.ClientApp, v2?: V2BridgeFactory) {
    this.endpoint = endpoint;
    this.#v2 = v2?.(endpoint.stream, logger);
    this.connection = this.#v2 ? app.connect(this.#v2.app) : app.connect(endpoint.stream);
    // The connection can also end without the process (oversized message …): then end it too.
    // For a remote agent, the end of the connection is its "exit".
    void this.connection.closed.then(() => {
      if (this.connection.signal.aborted) endpoint.noteFailure(this.connection.signal.reason);
      if (!endpoint.exitInfo) void endpoint.close();
    });
  }

  /** The protocol version spoken on the wire (2 through the v2 bridge). */
  get protocolVersion(): number {
    return this.#v2 ? 2 : this.init.protocolVersion;
  }

  get init(): acp.InitializeResponse {
    if (!this.#init) throw new Error("link not initialized");
    return this.#init;
  }

  /** Sends a request; maps transport failures to the typed error that explains them. */
  async request<M extends acp.AgentRequestMethod>(
    method: M,
    params: acp.AgentRequestParamsByMethod[M],
    options: RequestOptions = {},
  ): Promise<acp.AgentRequestResponsesByMethod[M]> {
    const timeout = new AbortController();
    const timer = options.timeoutMs ? setTimeout(() => timeout.abort(), options.timeoutMs) : undefined;
    const signals = [timeout.signal, ...(options.signal ? [options.signal] : [])];
    try {
      // A span per request; its trace context goes to the agent in `params._meta`.
      return await inContext(activeContextOr(this.#trace), () =>
        tracedRequest(method, params, (traced) =>
          this.connection.agent.request(method, traced, {
            cancellationSignal: AbortSignal.any(signals),
            stopWaitingOnCancel: true,
          }),
        ),
      );
    } catch (error) {
      throw this.explain(error, method, timeout.signal.aborted ? options.timeoutMs : undefined, options.signal);
    } finally {
      clearTimeout(timer);
    }
  }

  notify(method: typeof acp.methods.agent.session.cancel, params: acp.CancelNotification): Promise<void> {
    return this.connection.agent.notify(method, params).catch(() => undefined);
  }

  explain(error: unknown, method: string, timedOutAfter: number | undefined, userSignal: AbortSignal | undefined): unknown {
    if (timedOutAfter !== undefined) return new AcpTimeoutError(method, timedOutAfter);
    if (userSignal?.aborted) return userSignal.reason instanceof Error ? userSignal.reason : abortError("the operation");
    if (error instanceof acp.RequestError) return error;
    if (this.#closedByUs) return this.#closedByUs;
    return this.endpoint.explain(error, method);
  }

  /** initialize (+ authenticate); throws typed errors and leaves closing to the caller. */
  async initialize(config: AcpAgentConfig, timeouts: ResolvedTimeouts, capabilities: acp.ClientCapabilities): Promise<acp.InitializeResponse> {
    let response: acp.InitializeResponse;
    try {
      response = await this.request(
        acp.methods.agent.initialize,
        {
          protocolVersion: acp.PROTOCOL_VERSION,
          clientCapabilities: capabilities,
          clientInfo: config.clientInfo ?? { name: "agentkit-acp", version: "0.1.0" },
        },
        { timeoutMs: timeouts.initializeMs },
      );
    } catch (error) {
      // Asked for v2, answered another version (the SDK's v2 client refuses the answer itself).
      const answered = this.#v2?.answeredVersion();
      if (answered !== undefined && answered !== 2) throw new ProtocolVersionError(answered, [2], "it does not speak ACP v2: connect with protocol v1 (prompt --protocol v1, the default)");
      if (error instanceof acp.RequestError && error.code === -32022) {
        const data = error.data as { supported?: unknown } | undefined;
        const supported = Array.isArray(data?.supported) ? (data.supported as unknown[]) : [];
        throw new ProtocolVersionError(typeof supported[0] === "number" ? supported[0] : null, SUPPORTED_PROTOCOL_VERSIONS);
      }
      throw error;
    }
    // Results are not validated by the SDK: check the fields we depend on.
    if (typeof response !== "object" || response === null || typeof response.protocolVersion !== "number") {
      throw new ProtocolVersionError(null, SUPPORTED_PROTOCOL_VERSIONS);
    }
    if (!SUPPORTED_PROTOCOL_VERSIONS.includes(response.protocolVersion)) {
      throw new ProtocolVersionError(response.protocolVersion, SUPPORTED_PROTOCOL_VERSIONS);
    }
    this.#init = response;
    if (config.authMethodId !== undefined) {
      const methods = response.authMethods ?? [];
      if (!methods.some((m) => m.id === config.authMethodId)) {
        throw new AuthenticationRequiredError(methods, `configured method "${config.authMethodId}" is not offered`);
      }
      await this.request(acp.methods.agent.authenticate, { methodId: config.authMethodId }, { timeoutMs: timeouts.requestMs });
    }
    return response;
  }

  /** Rejects pending calls with `reason`, then ends the process tree. */
  async close(reason: Error = new ClientClosedError()): Promise<void> {
    this.#closedByUs ??= reason;
    this.connection.close(reason);
    await this.endpoint.close();
  }

  async kill(reason: Error = new ClientClosedError()): Promise<void> {
    this.#closedByUs ??= reason;
    this.connection.close(reason);
    await this.endpoint.kill();
  }
}
