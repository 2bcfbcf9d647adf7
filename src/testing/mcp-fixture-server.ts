import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { builtFile } from "../core/package-files.js";

/** What the fixture server has seen; shared by every McpServer built with the same state. */
export interface McpFixtureState {
  /** `slow` calls that ended because the client cancelled them. */
  cancelledCalls: number;
  /** Pids of helper processes the stdio entry point started (reported by the `status` tool). */
  childPids: number[];
}

/** @internal A fresh state for a fixture server (the stdio fixture makes its own). */
export function createMcpFixtureState(): McpFixtureState {
  return { cancelledCalls: 0, childPids: [] };
}

/**
 * A small MCP server (official SDK) with tools for tests:
 * `echo {text}`, `add {a, b}` (text + structuredContent `{sum}`), `fail` (an isError result),
 * `slow {ms}` (sends a "started" progress notification, then waits; honours cancellation),
 * `status` (`{pid, cancelledCalls, childPids}` as JSON text).
 */
export function createMcpFixtureServer(state: McpFixtureState = createMcpFixtureState(), name = "fixture"): McpServer {
  const server = new McpServer({ name, version: "1.0.0" });
  server.registerTool("echo", { description: "Echo the text back", inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: "text", text }],
  }));
  server.registerTool(
    "add",
    { description: "Add two numbers", inputSchema: { a: z.number(), b: z.number() }, outputSchema: { sum: z.number() } },
    ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }], structuredContent: { sum: a + b } }),
  );
  server.registerTool("fail", { description: "Always fails (an isError result)" }, () => ({
    content: [{ type: "text", text: "fixture failure on purpose" }],
    isError: true,
  }));
  server.registerTool("slow", { description: "Wait ms milliseconds (cancellable)", inputSchema: { ms: z.number() } }, async ({ ms }, extra) => {
    const token = extra._meta?.progressToken;
    if (token !== undefined) {
      await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: 0, message: "started" } });
    }
    const finished = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(true), ms);
      extra.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve(false);
      }, { once: true });
    });
    if (!finished) state.cancelledCalls += 1;
    return { content: [{ type: "text", text: finished ? `waited ${ms} ms` : "cancelled" }] };
  });
  server.registerTool("status", { description: "Fixture process facts" }, () => ({
    content: [{ type: "text", text: JSON.stringify({ pid: process.pid, cancelledCalls: state.cancelledCalls, childPids: state.childPids }) }],
  }));
  return server;
}

/**
 * A running MCP fixture server over HTTP (Streamable HTTP and legacy SSE endpoints) and its state, for tests of MCP
 * clients.
 */
export interface McpFixtureHttpServer {
  /** Streamable HTTP endpoint (`transport: "http"`). */
  url: string;
  /** Legacy HTTP+SSE endpoint (`transport: "sse"`). */
  sseUrl: string;
  state: McpFixtureState;
  /** Open MCP sessions (Streamable HTTP and SSE). */
  sessionCount(): number;
  close(): Promise<void>;
}

/** Serves the fixture on 127.0.0.1 (random port) over Streamable HTTP (`/mcp`) and SSE (`/sse`). */
export async function startMcpFixtureHttpServer(): Promise<McpFixtureHttpServer> {
  const state = createMcpFixtureState();
  const streamable = new Map<string, StreamableHTTPServerTransport>();
  const sse = new Map<string, SSEServerTransport>();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname === "/mcp") {
      const sessionId = req.headers["mcp-session-id"];
      let transport = typeof sessionId === "string" ? streamable.get(sessionId) : undefined;
      const body = req.method === "POST" ? await readJson(req) : undefined;
      if (transport === undefined && req.method === "POST" && sessionId === undefined && isInitializeRequest(body)) {
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void streamable.set(id, created),
          onsessionclosed: (id) => void streamable.delete(id),
        });
        created.onclose = () => {
          if (created.sessionId !== undefined) streamable.delete(created.sessionId);
        };
        await createMcpFixtureServer(state).connect(created);
        transport = created;
      }
      if (transport === undefined) return sendError(res, 404, "unknown or missing MCP session");
      return transport.handleRequest(req, res, body);
    }
    if (url.pathname === "/sse" && req.method === "GET") {
      const transport = new SSEServerTransport("/messages", res);
      sse.set(transport.sessionId, transport);
      res.on("close", () => sse.delete(transport.sessionId));
      await createMcpFixtureServer(state).connect(transport);
      return;
    }
    if (url.pathname === "/messages" && req.method === "POST") {
      const transport = sse.get(url.searchParams.get("sessionId") ?? "");
      if (transport === undefined) return sendError(res, 404, "unknown SSE session");
      return transport.handlePostMessage(req, res);
    }
    sendError(res, 404, "not found");
  };

  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 500, error instanceof Error ? error.message : String(error));
      else res.end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const address = http.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    sseUrl: `http://127.0.0.1:${port}/sse`,
    state,
    sessionCount: () => streamable.size + sse.size,
    async close() {
      await Promise.allSettled([...streamable.values(), ...sse.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** How the stdio MCP fixture misbehaves on purpose, to test start-up bounds, stderr reporting and process clean-up. */
export interface McpFixtureStdioOptions {
  /** The server starts a long-running helper process (to check that close ends it too). */
  spawnChild?: boolean;
  /** The process starts but never answers (to check the start-up bound). */
  hang?: boolean;
  /** The process writes to stderr and exits with code 3 at once. */
  fail?: boolean;
}

/** `{command, args}` that run the fixture over stdio: `node dist/testing/mcp-fixture-stdio.js [flags]`. */
export function mcpFixtureStdioCommand(options: McpFixtureStdioOptions = {}): { command: string; args: string[] } {
  const entry = builtFile("testing", "mcp-fixture-stdio.js");
  const flags: string[] = [];
  if (options.spawnChild === true) flags.push("--spawn-child");
  if (options.hang === true) flags.push("--hang");
  if (options.fail === true) flags.push("--fail");
  return { command: process.execPath, args: [entry, ...flags] };
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("error", reject);
    req.on("end", () => {
      try {
        resolve(chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });
}

function sendError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}
