import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Stream } from "@agentclientprotocol/sdk";
import { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } from "@agentclientprotocol/sdk/experimental/node";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { WebSocketServer } from "ws";
import type { Logger } from "../../core/index.js";
import { ConfigError, errorMessage } from "../../core/index.js";
import type { JwtVerifier } from "./jwt.js";
import { looksLikeJwt } from "./jwt.js";
import { DEFAULT_IDLE_CONNECTION_MS, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_MESSAGE_BYTES } from "./limits.js";
import { DEFAULT_PRINCIPAL } from "./principal.js";
import { BearerTokens } from "./principals.js";
import type { AcpHeadlessRuntime } from "./runtime.js";
import { SOCKET_OUTPUT_BYTES } from "./output-budget.js";
import { ServiceMetrics } from "./service-metrics.js";
import { SocketGuard, answerClientError, guardedServerOptions } from "./socket-guard.js";

/** The ACP endpoint's path (HTTP and WebSocket). */
export const ACP_PATH = "/acp";
const DRAIN_LINGER_MS = 500;
const READY_PROBE_TIMEOUT_MS = 2_000;

/**
 * Options of `AcpHttpService`: the runtime to serve, who may connect (token, token file, JWTs), where to listen, and
 * the service's bounds.
 */
export interface AcpHttpServiceOptions {
  runtime: AcpHeadlessRuntime;
  /** A single bearer token (principal `default`); or `tokens` / `jwt`. */
  token?: string;
  /** Named static bearer tokens (e.g. a token file); `tokens.replace` rotates them at once. */
  tokens?: BearerTokens;
  /** Verifies bearer JWTs (`--jwks`); a verified token acts for the principal it names. */
  jwt?: JwtVerifier;
  /** Interface to bind (default 127.0.0.1). */
  host?: string;
  /** 0 picks a free port (read it from `address`). */
  port: number;
  /** Open ACP connections allowed at once; more get HTTP 503 (default {@link DEFAULT_MAX_CONNECTIONS}). */
  maxConnections?: number;
  /** Largest HTTP request body / WebSocket message accepted (default {@link DEFAULT_MAX_MESSAGE_BYTES}); larger: 413 / close 1009. */
  maxMessageBytes?: number;
  /**
   * A Streamable HTTP connection with no open event stream and no request for this long is
   * closed (its sessions closed, their leases released): a client that vanished without
   * `DELETE` must not hold its sessions (default 30 s). WebSocket connections end with their socket.
   */
  idleConnectionMs?: number;
  /**
   * Raw sockets open at once, authenticated or not (default 4 × maxConnections, lowered to the
   * open-file limit less 64); unauthenticated ones are capped at a quarter of it, the oldest
   * closed first. See `socket-guard.ts`.
   */
  maxSockets?: number;
  /** `/readyz`: throws (or rejects) while the store cannot be reached. Default: always ready. */
  ready?: () => Promise<void>;
  /** Shared with the agents' loops (as their observer) for model errors and tokens. */
  metrics?: ServiceMetrics;
  logger: Logger;
}

/** The address was taken, not ours, or not valid: the message names it (the CLI exits 2). */
export class ListenError extends ConfigError {
  override readonly name = "ListenError";
}

/**
 * `serve --listen`: the runtime served over the SDK's Streamable HTTP and WebSocket transports
 * at `/acp`, each accepted connection a runtime connection of its own. What the SDK leaves to
 * the application lives here: bearer auth (constant time), `/healthz`, `/readyz`, `/metrics`,
 * connection and message limits, and draining.
 */
export class AcpHttpService {
  readonly metrics: ServiceMetrics;
  readonly #options: AcpHttpServiceOptions;
  readonly #server: Server;
  readonly #acp: AcpServer;
  readonly #ws: WebSocketServer;
  readonly #tokens: BearerTokens;
  /** The principal of each open ACP connection: a request naming it is accepted only from that principal. */
  readonly #owners = new Map<string, string>();
  readonly #maxConnections: number;
  readonly #sockets: SocketGuard;
  #connections = 0;
  /** Per HTTP connection id: open SSE streams and the idle timer running while there are none. */
  readonly #httpConnections = new Map<string, { streams: number; idle: NodeJS.Timeout | undefined }>();
  #draining = false;
  #closing: Promise<void> | undefined;

  private constructor(options: AcpHttpServiceOptions) {
    if (options.token === "") throw new ConfigError("AcpHttpService needs a non-empty token");
    this.#tokens = options.tokens ?? new BearerTokens(options.token === undefined ? [] : [{ principal: DEFAULT_PRINCIPAL, token: options.token }]);
    if (this.#tokens.size === 0 && options.jwt === undefined) throw new ConfigError("AcpHttpService needs a token, tokens or a JWT verifier");
    this.#options = options;
    this.metrics = options.metrics ?? new ServiceMetrics();
    this.#maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
    const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    // Output held per connection, whatever --max-message-bytes is (a client that stops reading
    // must not grow the instance); see output-budget.ts for what else it bounds. Every connection
    // is opened through #scoped with its principal; this default connector is never used.
    this.#acp = new AcpServer({ agent: { connect: () => Promise.reject(new Error("no principal")) }, maxBufferedBytes: SOCKET_OUTPUT_BYTES });
    this.#ws = new WebSocketServer({ noServer: true, maxPayload: maxMessageBytes });
    const handleAcp = (principal: string): ((req: IncomingMessage, res: ServerResponse) => void) => createNodeHttpHandler(this.#scoped(principal), { maxRequestBodyBytes: maxMessageBytes });
    const upgradeAcp = (principal: string): ((req: IncomingMessage, socket: Duplex, head: Buffer) => void) => createNodeWebSocketUpgradeHandler(this.#scoped(principal), this.#ws);
    this.#sockets = new SocketGuard(options.maxSockets ?? 4 * this.#maxConnections);
    this.#server = createServer(guardedServerOptions(), (req, res) => void this.#route(req, res, handleAcp));
    this.#server.on("connection", (socket: Socket) => this.#sockets.admit(socket));
    this.#server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.#upgrade(req, socket, head, upgradeAcp));
    this.#server.on("clientError", answerClientError);
  }

  /** Binds and starts serving; a taken or invalid address rejects with a `ListenError` naming it. */
  static async listen(options: AcpHttpServiceOptions): Promise<AcpHttpService> {
    const service = new AcpHttpService(options);
    const host = options.host ?? "127.0.0.1";
    await new Promise<void>((resolve, reject) => {
      const onError = (error: NodeJS.ErrnoException): void => reject(new ListenError(listenFailure(host, options.port, error)));
      service.#server.once("error", onError);
      service.#server.listen({ host, port: options.port }, () => {
        service.#server.off("error", onError);
        resolve();
      });
    });
    service.#server.on("error", (error) => options.logger.error("HTTP server error", { error: errorMessage(error) }));
    return service;
  }

  /** Where it listens (the real port when 0 was asked for). */
  get address(): { host: string; port: number } {
    const info = this.#server.address() as AddressInfo;
    return { host: info.address, port: info.port };
  }

  /** `http://host:port/acp` (IPv6 hosts in brackets). */
  get url(): string {
    const { host, port } = this.address;
    return `http://${host.includes(":") ? `[${host}]` : host}:${port}${ACP_PATH}`;
  }

  get connectionCount(): number {
    return this.#connections;
  }

  get draining(): boolean {
    return this.#draining;
  }

  /**
   * Stops taking new connections and sessions (503 / -32600), lets running turns finish for up
   * to `timeoutMs`, then closes everything (turns still running are cancelled). Resolves with
   * whether every turn finished in time.
   */
  async drain(timeoutMs: number): Promise<boolean> {
    this.#draining = true;
    this.#options.runtime.refuseNewSessions("this agent instance is shutting down; open or load the session on another instance");
    const finished = await this.metrics.whenIdle(timeoutMs);
    // The last answers are handed to the SDK's transport but may still sit in its per-session
    // queues; a short bounded linger lets them reach the clients before the streams close.
    await new Promise((resolve) => setTimeout(resolve, DRAIN_LINGER_MS));
    await this.close();
    return finished;
  }

  /** Cancels running turns, closes every connection and the listener. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#draining = true;
      for (const id of [...this.#httpConnections.keys()]) this.#forget(id);
      await this.#options.runtime.shutdown();
      await this.#acp.close();
      for (const client of this.#ws.clients) client.terminate();
      await new Promise<void>((resolve) => this.#ws.close(() => resolve()));
      const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
      this.#server.closeAllConnections();
      await closed;
    })();
    return this.#closing;
  }

  /** The bearer tokens (rotate with `tokens.replace`). */
  get tokens(): BearerTokens {
    return this.#tokens;
  }

  /**
   * The SDK server as one request's principal uses it (the node adapters call only these two
   * methods): a connection it opens is served for that principal and remembered as its own.
   */
  #scoped(principal: string): AcpServer {
    const owners = this.#owners;
    const acp = this.#acp;
    const holder: { id?: string } = {};
    const agent = { connect: (stream: Stream) => this.#serve(stream, principal, holder) };
    const scoped: Pick<AcpServer, "handleRequest" | "prepareWebSocketUpgrade"> = {
      async handleRequest(request) {
        const response = await acp.handleRequest(request, { agent });
        const opened = request.headers.get("acp-connection-id") === null ? response.headers.get("acp-connection-id") : null;
        if (opened !== null) {
          holder.id = opened;
          owners.set(opened, principal);
        }
        return response;
      },
      prepareWebSocketUpgrade() {
        const upgrade = acp.prepareWebSocketUpgrade({ agent });
        holder.id = upgrade.connectionId;
        owners.set(upgrade.connectionId, principal);
        return {
          connectionId: upgrade.connectionId,
          accept: (socket) => upgrade.accept(socket),
          reject: () => {
            owners.delete(upgrade.connectionId);
            upgrade.reject();
          },
        };
      },
    };
    return scoped as AcpServer;
  }

  #serve(stream: Stream, principal: string, holder: { id?: string }): { closed: Promise<void> } {
    this.#connections += 1;
    const tapped = this.metrics.tap(stream, principal);
    const served = this.#options.runtime.serve(tapped.stream, { principal });
    void served.closed.finally(() => {
      this.#connections -= 1;
      if (holder.id !== undefined) this.#owners.delete(holder.id);
      tapped.end();
    });
    return served;
  }

  async #route(req: IncomingMessage, res: ServerResponse, handleAcp: (principal: string) => (req: IncomingMessage, res: ServerResponse) => void): Promise<void> {
    const path = pathOf(req);
    if (path === "/healthz" && isRead(req)) return plain(res, 200, "ok\n");
    if (path === "/readyz" && isRead(req)) {
      void this.#ready().then((problem) => (problem === undefined ? plain(res, 200, "ready\n") : plain(res, 503, `not ready: ${problem}\n`)));
      return;
    }
    if (path === "/metrics" && isRead(req)) {
      if ((await this.#principal(req)) === undefined) return unauthorized(res);
      void this.#ready().then((problem) => {
        const { runtime } = this.#options;
        const body = this.metrics.render({ openSessions: runtime.sessionCount, connections: this.#connections, ready: problem === undefined });
        plain(res, 200, body, "text/plain; version=0.0.4; charset=utf-8");
      });
      return;
    }
    if (path !== ACP_PATH) return plain(res, 404, "not found\n");
    const principal = await this.#principal(req);
    if (principal === undefined) return unauthorized(res);
    this.#sockets.trust(req.socket);
    const given = req.headers["acp-connection-id"];
    // A POST without a connection id opens a new connection (initialize); the rest belong to open ones.
    if (req.method === "POST" && given === undefined) {
      const refusal = this.#admission();
      if (refusal !== undefined) return plain(res, 503, `${refusal}\n`, undefined, { "Retry-After": "1" });
    }
    // Another principal's connection id answers exactly as an unknown one (the SDK's own 404).
    if (given !== undefined && this.#owners.get(String(given)) !== principal) return plain(res, 404, "Unknown Acp-Connection-Id", "text/plain", {}, false);
    this.#trackHttpConnection(req, res);
    handleAcp(principal)(req, res);
  }

  /** Follows each HTTP connection's event streams, so that an abandoned connection is closed. */
  #trackHttpConnection(req: IncomingMessage, res: ServerResponse): void {
    const header = req.headers["acp-connection-id"];
    const given = typeof header === "string" ? header : undefined;
    if (given !== undefined) this.#touch(given, 0);
    if (req.method === "GET" && given !== undefined) {
      this.#touch(given, +1);
      res.once("close", () => this.#touch(given, -1));
    } else if (given === undefined && req.method === "POST") {
      // initialize: the new connection's id is on the answer.
      res.once("finish", () => {
        const id = res.getHeader("acp-connection-id");
        if (typeof id === "string") this.#touch(id, 0);
      });
    } else if (req.method === "DELETE" && given !== undefined) {
      res.once("finish", () => this.#forget(given));
    }
  }

  #touch(id: string, streamDelta: number): void {
    const entry = this.#httpConnections.get(id) ?? { streams: 0, idle: undefined };
    this.#httpConnections.set(id, entry);
    entry.streams += streamDelta;
    clearTimeout(entry.idle);
    entry.idle = undefined;
    if (entry.streams > 0) return;
    const idleMs = this.#options.idleConnectionMs ?? DEFAULT_IDLE_CONNECTION_MS;
    entry.idle = setTimeout(() => {
      this.#forget(id);
      this.#options.logger.info("closing an HTTP connection whose client went away", { connectionId: id, idleMs });
      // The SDK's own DELETE: the connection ends and the runtime closes its sessions.
      void this.#acp.handleRequest(new Request(`http://localhost${ACP_PATH}`, { method: "DELETE", headers: { "Acp-Connection-Id": id } })).catch(() => undefined);
    }, idleMs);
    entry.idle.unref();
  }

  #forget(id: string): void {
    clearTimeout(this.#httpConnections.get(id)?.idle);
    this.#httpConnections.delete(id);
  }

  async #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, upgradeAcp: (principal: string) => (req: IncomingMessage, socket: Duplex, head: Buffer) => void): Promise<void> {
    socket.on("error", () => socket.destroy());
    if (pathOf(req) !== ACP_PATH) return rejectUpgrade(socket, 404, "Not Found");
    const principal = await this.#principal(req);
    if (principal === undefined) return rejectUpgrade(socket, 401, "Unauthorized", { "WWW-Authenticate": 'Bearer realm="agentkit-acp"' });
    const refusal = this.#admission();
    if (refusal !== undefined) return rejectUpgrade(socket, 503, "Service Unavailable", { "Retry-After": "1" });
    this.#sockets.trust(socket);
    upgradeAcp(principal)(req, socket, head);
  }

  /** Why a new connection is refused now, if it is. */
  #admission(): string | undefined {
    if (this.#draining) return "this agent instance is shutting down; connect to another one";
    if (this.#connections >= this.#maxConnections) return `too many connections (the limit is ${this.#maxConnections})`;
    return undefined;
  }

  /**
   * Who the request is from: a static token (compared in constant time with every entry, also
   * when the header is missing or malformed), else a verified JWT; undefined → 401.
   */
  async #principal(req: IncomingMessage): Promise<string | undefined> {
    const header = req.headers.authorization;
    const match = typeof header === "string" ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    const token = match?.[1] ?? "";
    const listed = this.#tokens.principalOf(token);
    if (match === null) return undefined;
    if (listed !== undefined) return listed;
    const jwt = this.#options.jwt;
    return jwt !== undefined && looksLikeJwt(token) ? jwt(token) : undefined;
  }

  /** undefined when ready, else what is wrong (bounded: a hung store counts as not ready). */
  async #ready(): Promise<string | undefined> {
    const probe = this.#options.ready;
    if (probe === undefined) return undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        probe(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`the store did not answer within ${READY_PROBE_TIMEOUT_MS} ms`)), READY_PROBE_TIMEOUT_MS);
        }),
      ]);
      return undefined;
    } catch (error) {
      return errorMessage(error);
    } finally {
      clearTimeout(timer);
    }
  }
}

function pathOf(req: IncomingMessage): string {
  const url = req.url ?? "/";
  const end = url.search(/[?#]/);
  return end === -1 ? url : url.slice(0, end);
}

function isRead(req: IncomingMessage): boolean {
  return req.method === "GET" || req.method === "HEAD";
}

function plain(res: ServerResponse, status: number, body: string, type = "text/plain; charset=utf-8", headers: Record<string, string> = {}, noStore = true): void {
  res.writeHead(status, { "Content-Type": type, ...(noStore ? { "Cache-Control": "no-store" } : {}), ...headers });
  res.end(body);
}

/** 401 with an empty body: nothing about the service leaks to an unauthenticated caller. */
function unauthorized(res: ServerResponse): void {
  res.writeHead(401, { "WWW-Authenticate": 'Bearer realm="agentkit-acp"', "Content-Length": "0" });
  res.end();
}

function rejectUpgrade(socket: Duplex, status: number, text: string, headers: Record<string, string> = {}): void {
  const lines = [`HTTP/1.1 ${status} ${text}`, "Connection: close", "Content-Length: 0", ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  socket.end(`${lines.join("\r\n")}\r\n\r\n`);
}

function listenFailure(host: string, port: number, error: NodeJS.ErrnoException): string {
  const where = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  switch (error.code) {
    case "EADDRINUSE":
      return `--listen ${where}: the port is already in use; stop the other server or pick another port`;
    case "EACCES":
      return `--listen ${where}: not allowed to bind this port (ports below 1024 need privileges); pick a port above 1023`;
    case "EADDRNOTAVAIL":
      return `--listen ${where}: ${host} is not an address of this machine`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `--listen ${where}: cannot resolve the host "${host}"`;
    default:
      return `--listen ${where}: ${error.message}`;
  }
}
