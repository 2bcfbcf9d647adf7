// The MCP SDK is imported when a server is first connected, not at start-up (it is large).
import { STATUS_CODES } from "node:http";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { ConfigError, abortError, createStderrLogger, errorMessage } from "../core/index.js";
import type { Logger, SandboxPlacement } from "../core/index.js";
import type { McpAcpChannel } from "./mcp-acp.js";
import type { ProcessGroupStdioTransport } from "./mcp-stdio.js";
import type { publicOnlyFetch as PublicOnlyFetch } from "./mcp-fetch.js";
import { mcpToolName, sanitizeMcpName, wrapMcpTool, type McpToolClient } from "./mcp-tool.js";
import type { Tool } from "./types.js";

/**
 * An MCP server to connect to: the transports ACP's session/new can hand over (`acp`: a server
 * the ACP client provides over the ACP connection itself, reached through `channel`).
 * `publicOnly` (http, sse): connect to public addresses only, each connection's address checked
 * and pinned (`publicOnlyFetch`): loopback, private, link-local … fail; redirects not followed.
 */
export type McpServerConfig = (
  | { name: string; transport: "stdio"; command: string; args?: string[]; env?: Record<string, string>; cwd?: string }
  | { name: string; transport: "http" | "sse"; url: string; headers?: Record<string, string>; publicOnly?: boolean }
  | { name: string; transport: "acp"; serverId: string; channel: McpAcpChannel }
) & {
  /** Overrides McpConnectOptions.startupTimeoutMs for this server. */
  startupTimeoutMs?: number;
};

/** Bound on connecting to one MCP server and listing its tools unless `startupTimeoutMs` says otherwise. */
export const DEFAULT_MCP_STARTUP_TIMEOUT_MS = 10_000;
/** Bound on one MCP tool call (reset by the server's progress notifications) unless `callTimeoutMs` says otherwise. */
export const DEFAULT_MCP_CALL_TIMEOUT_MS = 600_000;

/** Options of `McpToolSource.connect`: time bounds, the logger, and the sandbox and environment of stdio servers. */
export interface McpConnectOptions {
  /** Bound on connecting + listing tools, per server (default {@link DEFAULT_MCP_STARTUP_TIMEOUT_MS}). */
  startupTimeoutMs?: number;
  /** Bound on one tool call, reset by server progress notifications (default {@link DEFAULT_MCP_CALL_TIMEOUT_MS}). */
  callTimeoutMs?: number;
  /** Default stderr (server stderr lines are logged at debug level). */
  logger?: Logger;
  /** Working directory for stdio servers without their own `cwd`. */
  cwd?: string;
  /** How this client introduces itself to servers. */
  clientInfo?: { name: string; version: string };
  /** Aborting stops the start-up: every server is closed and `connect` rejects with an AbortError. */
  signal?: AbortSignal;
  /** The environment stdio servers start from (then their own `env`). Default: this process's. */
  stdioEnv?: Readonly<Record<string, string | undefined>>;
  /** Run stdio servers in this OS sandbox, able to write only `writable`. */
  stdioSandbox?: SandboxPlacement;
}

/** An MCP server that could not be started or listed; the others still serve their tools. */
export interface McpServerFailure {
  server: string;
  reason: string;
}

interface Connection {
  name: string;
  client: McpToolClient;
  /** None for `acp` servers: they ride on the ACP connection. */
  transport: Transport | undefined;
}

/**
 * Tools from MCP servers, namespaced `<server>__<tool>`. A server that fails or hangs at
 * start-up is skipped and reported in `failures`; the others still work. `close()` closes
 * every client and ends stdio servers with their whole process group.
 */
export class McpToolSource {
  readonly tools: readonly Tool[];
  readonly failures: readonly McpServerFailure[];
  /** Names of the servers that connected. */
  readonly servers: readonly string[];
  readonly #connections: Connection[];
  readonly #shutdowns: Array<Promise<void>>;
  #closed: Promise<void> | undefined;

  private constructor(connections: Connection[], tools: Tool[], failures: McpServerFailure[], shutdowns: Array<Promise<void>>) {
    this.#connections = connections;
    this.#shutdowns = shutdowns;
    this.tools = tools;
    this.failures = failures;
    this.servers = connections.map((c) => c.name);
  }

  /** Connects to all servers in parallel. Throws ConfigError only for an invalid list (e.g. duplicate names). */
  static async connect(servers: readonly McpServerConfig[], options: McpConnectOptions = {}): Promise<McpToolSource> {
    checkNames(servers);
    const logger = options.logger ?? createStderrLogger();
    const timeoutMs = options.startupTimeoutMs ?? DEFAULT_MCP_STARTUP_TIMEOUT_MS;
    // Failed servers are shut down in the background so start-up stays within its bound; close() awaits them.
    const shutdowns: Array<Promise<void>> = [];
    const settled = await Promise.all(
      servers.map(async (server) => {
        try {
          return { kind: "connected", server, ...(await connectOne(server, options, logger, server.startupTimeoutMs ?? timeoutMs, shutdowns)) } as const;
        } catch (error) {
          const reason = errorMessage(error);
          logger.warn(`MCP server ${server.name} skipped: ${reason}`);
          return { kind: "failed", server, reason } as const;
        }
      }),
    );
    if (options.signal?.aborted) {
      const started = settled.flatMap((entry) => (entry.kind === "connected" ? [entry.connection] : []));
      await Promise.allSettled([...started.map((c) => closeConnection(c)), ...shutdowns]);
      throw abortError("MCP server start-up", options.signal);
    }
    const connections: Connection[] = [];
    const tools: Tool[] = [];
    const failures: McpServerFailure[] = [];
    const usedNames = new Set<string>();
    for (const entry of settled) {
      if (entry.kind === "failed") {
        failures.push({ server: entry.server.name, reason: entry.reason });
        continue;
      }
      const { connection, listed } = entry;
      connections.push(connection);
      for (const tool of listed) {
        const name = mcpToolName(entry.server.name, tool.name, usedNames);
        usedNames.add(name);
        tools.push(wrapMcpTool({ client: connection.client, server: entry.server.name, tool, name, callTimeoutMs: options.callTimeoutMs ?? DEFAULT_MCP_CALL_TIMEOUT_MS }));
      }
    }
    return new McpToolSource(connections, tools, failures, shutdowns);
  }

  /** Closes every connection (idempotent). */
  close(): Promise<void> {
    this.#closed ??= Promise.allSettled([...this.#connections.map((c) => closeConnection(c)), ...this.#shutdowns]).then(() => undefined);
    return this.#closed;
  }
}

function checkNames(servers: readonly McpServerConfig[]): void {
  const byPrefix = new Map<string, string>();
  for (const server of servers) {
    if (server.name.trim().length === 0) throw new ConfigError("an MCP server needs a non-empty name");
    const prefix = sanitizeMcpName(server.name);
    const other = byPrefix.get(prefix);
    if (other === server.name) throw new ConfigError(`two MCP servers are named "${server.name}"; server names must be unique`);
    if (other !== undefined) {
      throw new ConfigError(`MCP servers "${other}" and "${server.name}" would share the tool prefix "${prefix}__"; rename one`);
    }
    byPrefix.set(prefix, server.name);
  }
}

async function connectOne(
  server: McpServerConfig,
  options: McpConnectOptions,
  logger: Logger,
  timeoutMs: number,
  shutdowns: Array<Promise<void>>,
): Promise<{ connection: Connection; listed: McpTool[] }> {
  let transport: Transport | undefined;
  let client: McpToolClient;
  const abort = new AbortController();
  let work: Promise<McpTool[]>;
  if (server.transport === "acp") {
    // MCP 2026-07-28 over mcp/message: no handshake, every request carries its own metadata.
    const { AcpMcpClient } = await import("./mcp-acp.js");
    client = new AcpMcpClient(server.channel, server.serverId);
    work = listAllTools(client, timeoutMs, abort.signal);
  } else {
    const connected = (transport = await createTransport(server, options, logger));
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const sdkClient = new Client(options.clientInfo ?? { name: "agentkit-acp", version: "0.1.0" }, { capabilities: {} });
    client = sdkClient;
    work = (async () => {
      await sdkClient.connect(connected, { timeout: timeoutMs, signal: abort.signal });
      return listAllTools(sdkClient, timeoutMs, abort.signal);
    })();
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not start within ${timeoutMs} ms`)), timeoutMs);
  });
  const { signal } = options;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(abortError("MCP server start-up", signal));
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
  });
  try {
    const listed = await Promise.race([work, timeout, aborted]);
    return { connection: { name: server.name, client, transport }, listed };
  } catch (error) {
    abort.abort();
    work.catch(() => {}); // settles after the close below; its error is the one already reported
    shutdowns.push(closeConnection({ name: server.name, client, transport }));
    if (server.transport === "http" || server.transport === "sse") {
      // What the remote answered (an internal page, a body) is never passed on: status and a short reason only.
      logger.warn(`MCP server ${server.name} failed to start`, { error: errorMessage(error) });
      throw new Error(`${describe(server)} ${remoteFailure(error)}`, { cause: error });
    }
    const stderr = server.transport === "stdio" ? (transport as ProcessGroupStdioTransport).stderrTail.trim() : "";
    const detail = stderr.length > 0 ? ` (stderr: ${stderr.split("\n").slice(-5).join(" | ")})` : "";
    throw new Error(`${describe(server)} ${errorMessage(error)}${detail}`, { cause: error });
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  }
}

const networkReasons: Record<string, string> = {
  EADDRNOTPUBLIC: "its address is not public (loopback, private, link-local …); not connected",
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host not found",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
};

/**
 * A remote server's start-up failure in our words: the HTTP status, a network error's kind, our
 * own time bound, or a fixed phrase — never text the server sent (the SDK's messages carry bodies).
 */
function remoteFailure(error: unknown): string {
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "number" && code >= 100 && code <= 599) return `answered HTTP ${code}${STATUS_CODES[code] ? ` (${STATUS_CODES[code]})` : ""}`;
    if (typeof code === "string" && networkReasons[code]) return networkReasons[code];
    if (typeof code === "string" && /CERT|TLS|SSL/.test(code)) return "TLS certificate not accepted";
    if (/^did not start within \d+ ms$/.test(cause.message) || cause.name === "AbortError") return cause.message;
  }
  return "did not answer as an MCP server";
}

async function listAllTools(client: McpToolClient, timeoutMs: number, signal: AbortSignal): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const result = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs, signal });
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined) break;
  }
  return tools;
}

async function createTransport(server: Exclude<McpServerConfig, { transport: "acp" }>, options: McpConnectOptions, logger: Logger): Promise<Transport> {
  switch (server.transport) {
    case "stdio": {
      const { ProcessGroupStdioTransport } = await import("./mcp-stdio.js");
      return new ProcessGroupStdioTransport({
        name: server.name,
        command: server.command,
        args: server.args,
        env: server.env,
        cwd: server.cwd ?? options.cwd,
        logger,
        ...(options.stdioEnv ? { baseEnv: options.stdioEnv } : {}),
        ...(options.stdioSandbox ? { sandbox: options.stdioSandbox } : {}),
      });
    }
    case "http": {
      const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
      return new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers ?? {} }, ...(await remoteFetch(server)) });
    }
    case "sse": {
      const { SSEClientTransport } = await import("@modelcontextprotocol/sdk/client/sse.js");
      return new SSEClientTransport(new URL(server.url), { requestInit: { headers: server.headers ?? {} }, ...(await remoteFetch(server)) });
    }
  }
}

async function remoteFetch(server: { publicOnly?: boolean }): Promise<{ fetch?: typeof PublicOnlyFetch }> {
  if (server.publicOnly !== true) return {};
  return { fetch: (await import("./mcp-fetch.js")).publicOnlyFetch };
}

function describe(server: McpServerConfig): string {
  switch (server.transport) {
    case "stdio":
      return `(stdio: ${server.command})`;
    case "acp":
      return `(acp: served by the ACP client)`;
    default:
      return `(${server.transport}: ${server.url})`;
  }
}

async function closeConnection(connection: Connection): Promise<void> {
  // Streamable HTTP: tell the server the session is over (bounded; a dead server must not stall close).
  const transport = connection.transport as (Transport & { terminateSession?: () => Promise<void> }) | undefined;
  if (transport === undefined) return connection.client.close().catch(() => {});
  if (typeof transport.terminateSession === "function" && transport.sessionId !== undefined) {
    const ended = transport.terminateSession().catch(() => {});
    await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
  }
  await connection.client.close().catch(() => {});
  await transport.close().catch(() => {});
}
