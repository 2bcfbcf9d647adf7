// An MCP server the ACP client provides over the ACP connection itself (unstable `mcp/message`,
// MCP 2026-07-28). The ACP SDK's McpOverAcpCaller does the framing and per-request metadata; this
// only gives the tool bridge the same listTools / callTool surface the MCP SDK's Client has.
// Loaded when an `acp` server is first connected (it brings in the MCP SDK's schemas).
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { CallToolRequest, CallToolResult, ListToolsRequest, ListToolsResult } from "@modelcontextprotocol/sdk/types.js";
import { CallToolResultSchema, ListToolsResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { abortError, errorMessage, formatMs } from "../core/index.js";

/** One inner MCP outcome of `mcp/message`: a result or an MCP error (never an ACP error). */
export type McpAcpOutcome = { result: unknown } | { error: { code: number; message: string; data?: unknown } };

/** An inner MCP notification scoped to one request (e.g. `notifications/progress`). */
export interface McpAcpNotification {
  method: string;
  params?: Record<string, unknown> | null;
}

/**
 * The way to the ACP peer that declared `acp` MCP servers: sends one MCP request as
 * `mcp/message` and resolves with its inner outcome; rejects on ACP-level failures. Aborting
 * `signal` cancels the request (`$/cancel_request`) and rejects at once.
 */
export interface McpAcpChannel {
  request(
    serverId: string,
    method: string,
    params: Record<string, unknown>,
    options: { signal: AbortSignal; onNotification?: (notification: McpAcpNotification) => void },
  ): Promise<McpAcpOutcome>;
}

/** The inner MCP request failed with an MCP error (the server answered, with an error). */
export class McpAcpError extends Error {
  override readonly name = "McpAcpError";
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(`${message} (MCP error ${code})`);
  }
}

/** listTools / callTool of one `acp` MCP server, with the MCP SDK Client's option semantics (timeout, progress, signal). */
export class AcpMcpClient {
  readonly #channel: McpAcpChannel;
  readonly #serverId: string;
  #requests = 0;

  constructor(channel: McpAcpChannel, serverId: string) {
    this.#channel = channel;
    this.#serverId = serverId;
  }

  async listTools(params?: ListToolsRequest["params"], options?: RequestOptions): Promise<ListToolsResult> {
    return ListToolsResultSchema.parse(await this.#request("tools/list", params?.cursor === undefined ? {} : { cursor: params.cursor }, options));
  }

  async callTool(params: CallToolRequest["params"], _resultSchema?: unknown, options?: RequestOptions): Promise<CallToolResult> {
    return CallToolResultSchema.parse(await this.#request("tools/call", { name: params.name, arguments: params.arguments ?? {} }, options));
  }

  /** Nothing to end: the server lives in the ACP client, and the connection is the ACP one. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  async #request(method: string, params: Record<string, unknown>, options: RequestOptions = {}): Promise<unknown> {
    const timeoutMs = options.timeout;
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    const arm = (): void => {
      if (timeoutMs === undefined) return;
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort(new Error(`the ACP client did not answer MCP ${method} within ${formatMs(timeoutMs)}`));
      }, timeoutMs);
    };
    const onAbort = (): void => controller.abort(options.signal?.reason);
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const progressToken = `${this.#serverId}#${++this.#requests}`;
    const onNotification = (notification: McpAcpNotification): void => {
      if (notification.method !== "notifications/progress" || notification.params?.progressToken !== progressToken) return;
      const { progress, total, message } = notification.params;
      if (typeof progress !== "number") return;
      if (options.resetTimeoutOnProgress) arm();
      options.onprogress?.({ progress, ...(typeof total === "number" ? { total } : {}), ...(typeof message === "string" ? { message } : {}) });
    };
    arm();
    try {
      const outcome = await this.#channel.request(this.#serverId, method, options.onprogress ? { ...params, _meta: { progressToken } } : params, {
        signal: controller.signal,
        onNotification,
      });
      if ("error" in outcome) throw new McpAcpError(outcome.error.code, outcome.error.message, outcome.error.data);
      return outcome.result;
    } catch (error) {
      if (timedOut) throw controller.signal.reason as Error;
      if (options.signal?.aborted) throw abortError("the MCP request", options.signal);
      throw error instanceof Error ? error : new Error(errorMessage(error));
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
    }
  }
}

