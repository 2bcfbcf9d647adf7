import { randomBytes, timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { hostAllowed, sameOrigin } from "../core/local-page.js";
import { builtFile } from "../core/package-files.js";
import type { Analyzer } from "./analyze.js";
import type { PendingAsk, ReplayDiffLine, ServerEvent, StatusInfo } from "./types.js";

/** Drive-mode actions the page may post (`POST /api/<action>`). */
export type DriveAction = (action: string, body: Record<string, unknown>) => Promise<unknown>;

export interface PageServerOptions {
  analyzer: Analyzer;
  status: StatusInfo;
  host?: string;
  /** 0 (default) = a random free port. */
  port?: number;
  drive?: DriveAction;
  /** The access token (default: a random one); a page handed over to another process keeps its URL. */
  token?: string;
}

export class PortInUseError extends Error {
  constructor(readonly host: string, readonly port: number) {
    super(`port ${port} on ${host} is in use`);
  }
}

const ASSETS: Record<string, string> = { "/assets/app.js": "text/javascript; charset=utf-8", "/assets/app.css": "text/css; charset=utf-8" };
const assetDir = (): string => builtFile("inspect", "page-dist");

function html(title: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><link rel="stylesheet" href="/assets/app.css"></head>
<body><div id="app"></div><script type="module" src="/assets/app.js"></script></body></html>`;
}

/**
 * The page's server: plain node:http on 127.0.0.1 (default), a random token required for
 * everything that carries traffic (in a header for every action), `Host` and `Origin` checked
 * against other web sites (core/local-page.ts), live updates over SSE. Serves only the bundled assets.
 */
export class PageServer {
  readonly token: string;
  #status: StatusInfo;
  #asks: PendingAsk[] = [];
  #replay: ReplayDiffLine[] | undefined;
  readonly #clients = new Set<ServerResponse>();
  readonly #server = createServer((req, res) => void this.#handle(req, res));
  #port = 0;
  readonly #host: string;
  #heartbeat: NodeJS.Timeout | undefined;

  private constructor(private readonly options: PageServerOptions) {
    this.#status = options.status;
    this.token = options.token ?? randomBytes(18).toString("base64url");
    if (!/^[\w-]{16,}$/.test(this.token)) throw new Error("the page token must be 16 or more of A-Z a-z 0-9 _ -");
    this.#host = options.host ?? "127.0.0.1";
    options.analyzer.onEvent((e) => this.#broadcast(e));
  }

  static async start(options: PageServerOptions): Promise<PageServer> {
    const server = new PageServer(options);
    await server.#listen(options.port ?? 0);
    return server;
  }

  get url(): string {
    const host = this.#host.includes(":") ? `[${this.#host}]` : this.#host;
    return `http://${host}:${this.#port}/?t=${this.token}`;
  }

  /**
   * Resolves once a page was open and then none has been for `graceMs` (a reload reconnects
   * within it): the user closed the page.
   */
  closedByUser(graceMs: number): Promise<void> {
    return new Promise((resolve) => {
      let seen = this.#clients.size > 0;
      let timer: NodeJS.Timeout | undefined;
      const check = (): void => {
        clearTimeout(timer);
        if (this.#clients.size > 0) seen = true;
        else if (seen) timer = setTimeout(() => (this.#watchers.delete(check), resolve()), graceMs);
      };
      this.#watchers.add(check);
    });
  }

  readonly #watchers = new Set<() => void>();

  #clientsChanged(): void {
    for (const watcher of [...this.#watchers]) watcher();
  }

  setStatus(status: Partial<StatusInfo>): void {
    this.#status = { ...this.#status, ...status };
    this.#broadcast({ type: "status", status: this.#status });
  }

  get status(): StatusInfo {
    return this.#status;
  }

  setAsks(asks: PendingAsk[]): void {
    this.#asks = asks;
    this.#broadcast({ type: "asks", asks });
  }

  setReplay(diff: ReplayDiffLine[]): void {
    this.#replay = diff;
    this.#broadcast({ type: "replay", diff });
  }

  async close(): Promise<void> {
    clearInterval(this.#heartbeat);
    for (const res of this.#clients) res.end();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #hello(): ServerEvent {
    const a = this.options.analyzer;
    return { type: "hello", status: this.#status, entries: a.entries, notes: a.notes, asks: this.#asks, spans: a.spans, ...(this.#replay ? { replay: this.#replay } : {}) };
  }

  async #listen(port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const onError = (e: NodeJS.ErrnoException): void => reject(e.code === "EADDRINUSE" ? new PortInUseError(this.#host, port) : e);
      this.#server.once("error", onError);
      this.#server.listen(port, this.#host, () => {
        this.#server.off("error", onError);
        resolve();
      });
    });
    this.#port = (this.#server.address() as AddressInfo).port;
    this.#heartbeat = setInterval(() => {
      for (const res of this.#clients) res.write(": keep-alive\n\n");
    }, 15_000).unref();
  }

  /** Reading may carry the token in the URL (EventSource cannot send headers); a change needs the header, which no form or link can send. */
  #authorized(req: IncomingMessage, url: URL, change: boolean): boolean {
    const given = change ? req.headers["x-inspect-token"] : (url.searchParams.get("t") ?? req.headers["x-inspect-token"]);
    if (typeof given !== "string") return false;
    const a = Buffer.from(given);
    const b = Buffer.from(this.token);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  #broadcast(e: ServerEvent): void {
    const data = `data: ${JSON.stringify(e)}\n\n`;
    for (const res of this.#clients) res.write(data);
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    res.setHeader("cache-control", "no-store");
    res.setHeader("x-content-type-options", "nosniff");
    if (!hostAllowed(req.headers.host, this.#port)) {
      res.writeHead(403, { "content-type": "text/plain" }).end("open the page by its IP address or localhost (the Host header named another server)\n");
      return;
    }
    // Browsers ask for it on every page load, without the token: answered empty, not 403 (which each load logged as an error).
    if (req.method === "GET" && url.pathname === "/favicon.ico") {
      res.writeHead(204).end();
      return;
    }
    const type = ASSETS[url.pathname];
    if (req.method === "GET" && type) {
      try {
        const body = await readFile(join(assetDir(), url.pathname.slice("/assets/".length)));
        res.writeHead(200, { "content-type": type }).end(body);
      } catch {
        res.writeHead(500, { "content-type": "text/plain" }).end("the page bundle is missing: run `npm run build`\n");
      }
      return;
    }
    const change = req.method !== "GET" && req.method !== "HEAD";
    if (change && !sameOrigin(req)) {
      res.writeHead(403, { "content-type": "text/plain" }).end("actions are taken from the inspect page itself (the Origin header named another page)\n");
      return;
    }
    if (!this.#authorized(req, url, change)) {
      res.writeHead(403, { "content-type": "text/plain" }).end(change ? "an action needs the access token in the X-Inspect-Token header\n" : "open the URL printed by agentkit-acp inspect (it carries the access token)\n");
      return;
    }
    if (req.method === "GET" && url.pathname === "/") {
      res.setHeader("content-security-policy", "default-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'");
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html(`ACP inspect — ${this.#status.agent}`));
    } else if (req.method === "GET" && url.pathname === "/events") {
      res.writeHead(200, { "content-type": "text/event-stream", connection: "keep-alive" });
      res.write(`data: ${JSON.stringify(this.#hello())}\n\n`);
      this.#clients.add(res);
      this.#clientsChanged();
      req.on("close", () => {
        this.#clients.delete(res);
        this.#clientsChanged();
      });
    } else if (req.method === "GET" && url.pathname === "/api/state") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(this.#hello()));
    } else if (req.method === "POST" && url.pathname.startsWith("/api/") && this.options.drive) {
      await this.#drive(req, res, url.pathname.slice("/api/".length));
    } else {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
    }
  }

  async #drive(req: IncomingMessage, res: ServerResponse, action: string): Promise<void> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > 1_000_000) {
        res.writeHead(413).end();
        return;
      }
      chunks.push(chunk);
    }
    let body: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
      body = typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : {};
    } catch {
      res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: "the body must be JSON" }));
      return;
    }
    try {
      const result = await this.options.drive?.(action, body);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true, result: result ?? null }));
    } catch (e) {
      res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: e instanceof Error ? e.message : String(e) }));
    }
  }
}
