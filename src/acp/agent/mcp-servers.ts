import type { McpServer, McpCapabilities } from "@agentclientprotocol/sdk";
import { RequestError } from "@agentclientprotocol/sdk/unstable";
import type { Logger } from "../../core/index.js";
import { urlHostReach } from "../../core/network.js";
import { isHttpUrl } from "../../core/urls.js";
import type { McpAcpChannel, McpConnectOptions, McpServerConfig, McpServerFailure, Tool } from "../../tools/index.js";
import { McpToolSource, sanitizeMcpName } from "../../tools/index.js";

/**
 * Which MCP transports an agent takes from clients: `http`, `sse` (advertised), `acp` (unstable
 * MCP-over-ACP), and `stdio` (ACP has no capability for it; default true — false refuses a
 * client's stdio server with -32602, so a client never names a command the agent runs).
 * `privateAddresses: false` refuses http/sse URLs whose host is or resolves to a non-public
 * address (loopback, private, link-local …; default true).
 */
export type AcpMcpTransports = Required<Pick<McpCapabilities, "http" | "sse">> & { acp: boolean; stdio?: boolean; privateAddresses?: boolean };

/**
 * Turns the `mcpServers` of session/new, load or resume into server configs, or throws
 * `-32602` for an invalid list: a missing or duplicate name, two names that would share a tool
 * prefix, a stdio entry without a command, an http/sse entry without an http(s) URL, an acp
 * entry without a serverId, or a transport the agent did not advertise. Call it before doing
 * anything else with the request. `channel`: the connection's way to `acp` servers.
 */
export function mcpServerConfigs(servers: readonly McpServer[] | undefined, transports: AcpMcpTransports, channel?: McpAcpChannel): McpServerConfig[] {
  if (servers === undefined) return [];
  if (!Array.isArray(servers)) throw invalid("mcpServers must be an array", {});
  const configs: McpServerConfig[] = [];
  const byPrefix = new Map<string, string>();
  servers.forEach((server: McpServer, index) => {
    const field = `mcpServers[${index}]`;
    if (typeof server !== "object" || server === null) throw invalid(`${field} must be an object`, { index });
    const name = typeof server.name === "string" ? server.name.trim() : "";
    if (name.length === 0) throw invalid(`${field} needs a non-empty name`, { index });
    const prefix = sanitizeMcpName(name);
    const other = byPrefix.get(prefix);
    if (other === name) throw invalid(`two MCP servers are named "${name}"; names must be unique in a session`, { index, name });
    if (other !== undefined) throw invalid(`MCP servers "${other}" and "${name}" would share the tool prefix "${prefix}__"; rename one`, { index, name });
    byPrefix.set(prefix, name);
    configs.push(configFor(server, name, field, index, transports, channel));
  });
  return configs;
}

function configFor(server: McpServer, name: string, field: string, index: number, transports: AcpMcpTransports, channel: McpAcpChannel | undefined): McpServerConfig {
  // `acp` is only in the unstable schema: read it off the untyped entry.
  const acpEntry = server as { type?: unknown; serverId?: unknown };
  if (acpEntry.type === "acp") {
    if (!transports.acp || channel === undefined) throw invalid(`${field} ("${name}") uses the acp transport, which this agent does not advertise`, { index, name });
    if (typeof acpEntry.serverId !== "string" || acpEntry.serverId.length === 0) throw invalid(`${field} ("${name}") needs a non-empty serverId`, { index, name });
    return { name, transport: "acp", serverId: acpEntry.serverId, channel };
  }
  if ("type" in server && (server.type === "http" || server.type === "sse")) {
    if (!transports[server.type]) throw invalid(`${field} ("${name}") uses the ${server.type} transport, which this agent does not advertise`, { index, name });
    if (typeof server.url !== "string" || !isHttpUrl(server.url)) throw invalid(`${field} ("${name}") needs an http(s) url`, { index, name });
    const publicOnly = transports.privateAddresses === false ? { publicOnly: true } : {};
    return { name, transport: server.type, url: server.url, headers: pairs(server.headers, `${field}.headers`, index), ...publicOnly };
  }
  if ("type" in server && server.type !== undefined && server.type !== "stdio") {
    throw invalid(`${field} ("${name}") uses the unsupported transport "${String(server.type)}"`, { index, name });
  }
  if (transports.stdio === false) {
    throw invalid(
      `${field} ("${name}") is a stdio MCP server: this agent does not run commands a client names; use an http or sse MCP server${transports.http || transports.sse ? "" : " (none are taken either)"}`,
      { index, name },
    );
  }
  if (!("command" in server) || typeof server.command !== "string" || server.command.trim().length === 0) {
    throw invalid(`${field} ("${name}") needs a command`, { index, name });
  }
  const args = server.args ?? [];
  if (!Array.isArray(args) || args.some((a) => typeof a !== "string")) throw invalid(`${field}.args must be an array of strings`, { index, name });
  return { name, transport: "stdio", command: server.command, args, env: pairs(server.env, `${field}.env`, index) };
}

/**
 * With `privateAddresses: false`: -32602 naming `mcpServers[i]` for an http/sse server whose
 * host is, or resolves to, any non-public address (the name is resolved here; the address is
 * not echoed). A name that does not resolve in time is let through: its connection fails.
 */
export async function refuseNonPublicMcpUrls(configs: readonly McpServerConfig[], transports: AcpMcpTransports): Promise<void> {
  if (transports.privateAddresses !== false) return;
  const reaches = await Promise.all(configs.map((c) => (c.transport === "http" || c.transport === "sse" ? urlHostReach(c.url) : "public")));
  const index = reaches.indexOf("non-public");
  if (index === -1) return;
  const name = configs[index]!.name;
  throw invalid(
    `mcpServers[${index}] ("${name}") points to a loopback, private or otherwise non-public address; this agent does not connect to such addresses for a client`,
    { index, name },
  );
}

function pairs(list: ReadonlyArray<{ name: string; value: string }> | undefined, field: string, index: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of list ?? []) {
    if (typeof entry?.name !== "string" || entry.name.length === 0 || typeof entry.value !== "string") {
      throw invalid(`${field} entries need a non-empty name and a string value`, { index });
    }
    out[entry.name] = entry.value;
  }
  return out;
}

function invalid(message: string, data: Record<string, unknown>): RequestError {
  return RequestError.invalidParams({ mcpServers: data }, message);
}

/**
 * Options of `startSessionMcpServers`: where stdio servers run, their time bounds, environment and sandbox, and the
 * cancellation of the request opening the session.
 */
export interface SessionMcpOptions {
  /** Working directory of stdio servers (the session cwd). */
  cwd: string;
  logger: Logger;
  /** Bound on each server's start-up, connect and list tools (default `DEFAULT_MCP_STARTUP_TIMEOUT_MS` of agentkit-acp/tools). */
  startupTimeoutMs?: number;
  /** Bound on one tool call, reset by the server's progress notifications (default `DEFAULT_MCP_CALL_TIMEOUT_MS`). */
  callTimeoutMs?: number;
  clientInfo?: { name: string; version: string };
  /** Aborting (the client cancelled the request opening the session) stops the start-up. */
  signal?: AbortSignal;
  /** The environment stdio servers start from (`serve`: the minimal child environment). */
  stdioEnv?: Readonly<Record<string, string | undefined>>;
  /** Run stdio servers in this OS sandbox, able to write only `writable`. */
  stdioSandbox?: McpConnectOptions["stdioSandbox"];
}

/** One session's MCP servers: their namespaced tools, the servers that were skipped, and `close()`. */
export interface SessionMcpServers {
  readonly tools: readonly Tool[];
  readonly failures: readonly McpServerFailure[];
  /** Ends every server (stdio process groups, HTTP sessions); idempotent. */
  close(): Promise<void>;
}

const none: SessionMcpServers = { tools: [], failures: [], close: () => Promise.resolve() };

/**
 * Starts a session's MCP servers in parallel with a bounded start-up each: a server that fails
 * or hangs is skipped (listed in `failures`, logged) and the others still work.
 */
export async function startSessionMcpServers(configs: readonly McpServerConfig[], options: SessionMcpOptions): Promise<SessionMcpServers> {
  if (configs.length === 0) return none;
  return McpToolSource.connect(configs, {
    logger: options.logger,
    cwd: options.cwd,
    ...(options.startupTimeoutMs !== undefined ? { startupTimeoutMs: options.startupTimeoutMs } : {}),
    ...(options.callTimeoutMs !== undefined ? { callTimeoutMs: options.callTimeoutMs } : {}),
    clientInfo: options.clientInfo ?? { name: "agentkit-acp", version: "0.1.0" },
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.stdioEnv ? { stdioEnv: options.stdioEnv } : {}),
    ...(options.stdioSandbox ? { stdioSandbox: options.stdioSandbox } : {}),
  });
}

/** A one-line warning per skipped server, for the session's user. */
export function mcpFailureWarnings(failures: readonly McpServerFailure[]): string[] {
  return failures.map((f) => `MCP server "${f.server}" was not started, so its tools are unavailable in this session: ${f.reason}`);
}
