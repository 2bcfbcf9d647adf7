// MCP over ACP, client side: MCP servers built with the official MCP SDK, living in this
// process, served to the agent through the ACP connection (unstable `mcp/message`). The ACP
// SDK's McpOverAcpProvider does the binding and `fromMcpServer` runs each request through the
// MCP SDK's own pipeline; this keeps one stable serverId per server across reconnects.
import { randomUUID } from "node:crypto";
import type { McpServerFactory } from "@modelcontextprotocol/server";
import type { McpServerAdapter } from "@agentclientprotocol/sdk/experimental/mcp-server";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { ConfigError } from "../../core/index.js";
import { CapabilityError } from "./errors.js";

/**
 * An MCP server built with `@modelcontextprotocol/server`, served to the agent over the ACP
 * connection (needs the agent's unstable `mcpCapabilities.acp`). `server` returns a fresh
 * `McpServer` for each MCP request: MCP 2026-07-28 serves one request per instance.
 */
export interface AcpInProcessMcpServer {
  name: string;
  server: McpServerFactory;
}

/** What a session's `mcpServers` may hold: wire declarations (stdio/http/sse/acp) or in-process servers. */
export type SessionMcpServer = acp.McpServer | AcpInProcessMcpServer;

export function isInProcessMcpServer(entry: SessionMcpServer): entry is AcpInProcessMcpServer {
  return typeof entry === "object" && entry !== null && "server" in entry;
}

interface Entry {
  readonly name: string;
  readonly serverId: string;
  readonly adapter: McpServerAdapter;
}

/** The in-process MCP servers of one AcpClient, registered on each of its connections. */
export class InProcessMcpServers {
  readonly #provider = new acp.McpOverAcpProvider();
  readonly #entries = new Map<AcpInProcessMcpServer, Entry>();
  #connection: { context: acp.HasConnectionContext; registrations: acp.McpServerRegistration[] } | undefined;

  /** Answers the agent's `mcp/message` requests on this app (unknown servers: -33001). */
  serve(app: acp.ClientApp): void {
    app.onRequest(acp.methods.client.mcp.message, this.#provider.handleRequest);
  }

  /** A new connection (start, recovery, reconnect): every server known so far is registered on it, under its old id. */
  attach(context: acp.HasConnectionContext): void {
    // The old connection is gone: its registrations only end their in-flight handlers.
    void Promise.allSettled((this.#connection?.registrations ?? []).map((r) => r.dispose()));
    this.#connection = { context, registrations: [] };
    for (const entry of this.#entries.values()) this.#register(entry);
  }

  /**
   * The wire `mcpServers` of a session: in-process servers become `acp` declarations (started
   * and registered on first use). Throws CapabilityError when the agent does not take `acp`.
   */
  async declare(servers: readonly SessionMcpServer[], capabilities: acp.AgentCapabilities | undefined, method: string): Promise<acp.McpServer[]> {
    const out: acp.McpServer[] = [];
    for (const server of servers) {
      if (!isInProcessMcpServer(server)) {
        out.push(server);
        continue;
      }
      if (typeof server.name !== "string" || server.name.trim().length === 0) throw new ConfigError("an in-process MCP server needs a non-empty name");
      if (typeof server.server !== "function") {
        throw new ConfigError(`in-process MCP server "${server.name}": \`server\` must be a function returning a fresh McpServer per request, e.g. () => buildServer()`);
      }
      if (capabilities?.mcpCapabilities?.acp !== true) {
        throw new CapabilityError(method, "mcpCapabilities.acp", `MCP server "${server.name}" is served over the ACP connection (MCP over ACP)`);
      }
      const entry = this.#entries.get(server) ?? (await this.#start(server));
      out.push({ type: "acp", name: entry.name, serverId: entry.serverId });
    }
    return out;
  }

  /** Ends every registration (their requests are cancelled) and the MCP handlers. Idempotent. */
  async close(): Promise<void> {
    const registrations = this.#connection?.registrations ?? [];
    this.#connection = undefined;
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    await Promise.allSettled([...registrations.map((r) => r.dispose()), ...entries.map((e) => e.adapter.close())]);
  }

  async #start(server: AcpInProcessMcpServer): Promise<Entry> {
    // Loaded on first use: it brings in the MCP server SDK.
    const { fromMcpServer } = await import("@agentclientprotocol/sdk/experimental/mcp-server");
    const existing = this.#entries.get(server);
    if (existing) return existing;
    const entry: Entry = { name: server.name, serverId: `${server.name}:${randomUUID()}`, adapter: fromMcpServer(server.server) };
    this.#entries.set(server, entry);
    this.#register(entry);
    return entry;
  }

  #register(entry: Entry): void {
    if (!this.#connection) return;
    this.#connection.registrations.push(this.#provider.registerServer(this.#connection.context, { name: entry.name, serverId: entry.serverId, handler: entry.adapter.handler }));
  }
}
