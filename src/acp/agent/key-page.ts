import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { sameOrigin } from "../../core/local-page.js";

/** How the page ended: the human submitted a secret, the lifetime ran out, or it was closed. */
export type KeyPageOutcome = { kind: "secret"; secret: string } | { kind: "expired" } | { kind: "closed" };

/**
 * A one-shot local page (loopback, unguessable path) where a human types a secret that must not travel through the
 * editor.
 */
export interface KeyPage {
  /** `http://127.0.0.1:PORT/key/TOKEN`: only this exact path answers. */
  readonly url: string;
  /** Settles once: a secret arrived, the lifetime passed, or `close()` was called. */
  readonly outcome: Promise<KeyPageOutcome>;
  /** Stops listening (idempotent); `outcome` becomes `closed` unless it already settled. */
  close(): Promise<void>;
}

/** Options of `openKeyPage`: what is asked for, and how long the page lives. */
export interface KeyPageOptions {
  /** What is asked for, e.g. "ANTHROPIC_API_KEY for anthropic:claude-sonnet-4-5". */
  label: string;
  /** The page closes by itself after this long (it is one-shot either way). */
  lifetimeMs: number;
}

const MAX_BODY_BYTES = 16 * 1024;

/**
 * A one-shot page on 127.0.0.1 (random port) where the human pastes a secret, so it reaches the
 * agent without passing through the editor or the model (what URL-mode elicitation is for). The
 * random path token is the only way in: the page reveals nothing and accepts one submission;
 * the Host header must be the loopback address (no DNS rebinding) and a browser-sent Origin must
 * be the page's own (no cross-site posts).
 */
export async function openKeyPage(options: KeyPageOptions): Promise<KeyPage> {
  const token = randomBytes(24).toString("base64url");
  const path = `/key/${token}`;
  let settle: (outcome: KeyPageOutcome) => void = () => undefined;
  const outcome = new Promise<KeyPageOutcome>((resolve) => (settle = resolve));
  let origin = "";
  const server = createServer((req, res) => {
    void handle(req, res).catch(() => reply(res, 500, page("Something went wrong", "<p>Try again.</p>")));
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const host = req.headers.host ?? "";
    if (`http://${host}` !== origin || !samePath(req.url ?? "", path)) return reply(res, 404, page("Not found", "<p>This page does not exist (or has expired).</p>"));
    if (req.method === "GET") return reply(res, 200, form(options.label));
    if (req.method !== "POST") return reply(res, 405, page("Method not allowed", ""), { Allow: "GET, POST" });
    if (!sameOrigin(req)) return reply(res, 403, page("Forbidden", "<p>Submit the form from its own page.</p>"));
    const body = await readBody(req);
    const secret = body === undefined ? undefined : new URLSearchParams(body).get("key")?.trim();
    if (!secret) return reply(res, 400, form(options.label, body === undefined ? "That was too long." : "Paste the key, then save."));
    reply(res, 200, page("Saved", "<p>The key was handed to the agent. You can close this tab.</p>"));
    settle({ kind: "secret", secret });
    void close();
  }
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const timer = setTimeout(() => {
    settle({ kind: "expired" });
    void close();
  }, options.lifetimeMs);
  timer.unref();
  let closing: Promise<void> | undefined;
  function close(): Promise<void> {
    clearTimeout(timer);
    settle({ kind: "closed" });
    closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closing;
  }
  return { url: `${origin}${path}`, outcome, close };
}

function samePath(url: string, path: string): boolean {
  const given = Buffer.from(url.split("?")[0] ?? "");
  const wanted = Buffer.from(path);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      // Too long: answered at once; the reply's "Connection: close" ends the socket after it.
      if (size > MAX_BODY_BYTES) resolve(undefined);
      else chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function reply(res: ServerResponse, status: number, html: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, {
    "Content-Type": "text/html; charset=utf-8",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    Connection: "close",
    ...headers,
  });
  res.end(html);
}

function form(label: string, problem?: string): string {
  return page(
    "API key for the agent",
    `<p>The agent needs <b>${escapeHtml(label)}</b>. Paste it here; it goes straight to the agent on this machine (not through the editor or the model) and is kept in memory until the agent ends or logs out.</p>` +
      (problem ? `<p style="color:#b00">${escapeHtml(problem)}</p>` : "") +
      `<form method="post"><input type="password" name="key" autocomplete="off" autofocus required style="width:100%;padding:6px"><p><button type="submit">Save</button></p></form>`,
  );
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body style="font-family:sans-serif;max-width:36em;margin:3em auto"><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
