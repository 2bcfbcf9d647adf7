import { proc } from "../../core/process/proc.js";
import type { ServerOptions } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";

/**
 * How long a client may take to send a request's headers. Node checks it (and
 * `REQUEST_TIMEOUT_MS`) every `connectionsCheckingInterval`, 30 s by default, which is why that
 * interval is shortened too: a slow-header socket is answered 408 and closed within
 * HEADERS_TIMEOUT_MS + CONNECTIONS_CHECK_MS.
 */
export const HEADERS_TIMEOUT_MS = 10_000;
/** The whole request, body included (a 32 MiB body needs ≥ 280 KB/s); SSE answers are not limited by it. */
export const REQUEST_TIMEOUT_MS = 120_000;
/** An idle keep-alive socket between two requests. */
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;
export const CONNECTIONS_CHECK_MS = 1_000;
/** Request line + headers; more is answered 431 (Node's default size, stated here). */
export const MAX_HEADER_BYTES = 16 * 1024;
/** File descriptors kept for everything but sockets (store files, tools' pipes, the watchdog). */
const FD_RESERVE = 64;

/** The node:http options carrying the timeouts above. */
export function guardedServerOptions(): ServerOptions {
  return {
    headersTimeout: HEADERS_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
    maxHeaderSize: MAX_HEADER_BYTES,
  };
}

/**
 * Caps raw sockets (authenticated or not) so that they cannot use up the process's file
 * descriptors. A socket counts as unauthenticated until one of its requests passes the bearer
 * check (`trust`); those are capped at a quarter of the sockets, and a new socket past either
 * cap first closes the oldest unauthenticated one — so slow or idle strangers cannot keep
 * authenticated ACP traffic (which sends its headers at once) out.
 */
export class SocketGuard {
  readonly maxSockets: number;
  readonly maxUntrusted: number;
  #open = 0;
  /** Insertion-ordered: the first is the oldest. */
  readonly #untrusted = new Set<Socket>();

  constructor(wanted: number, fdLimit: number | undefined = openFileLimit()) {
    this.maxSockets = Math.max(8, fdLimit === undefined ? wanted : Math.min(wanted, fdLimit - FD_RESERVE));
    this.maxUntrusted = Math.max(4, Math.floor(this.maxSockets / 4));
  }

  get open(): number {
    return this.#open;
  }

  get untrusted(): number {
    return this.#untrusted.size;
  }

  /** The server's `connection` listener. */
  admit(socket: Socket): void {
    if (this.#untrusted.size >= this.maxUntrusted || this.#open >= this.maxSockets) {
      const oldest = this.#untrusted.values().next();
      if (!oldest.done) this.#drop(oldest.value);
      else if (this.#open >= this.maxSockets) {
        socket.destroy();
        return;
      }
    }
    this.#open += 1;
    this.#untrusted.add(socket);
    socket.once("close", () => {
      this.#open -= 1;
      this.#untrusted.delete(socket);
    });
  }

  /** The socket carried a request with the right bearer token. */
  trust(socket: Socket | Duplex): void {
    this.#untrusted.delete(socket as Socket);
  }

  #drop(socket: Socket): void {
    this.#untrusted.delete(socket);
    socket.destroy();
  }
}

/**
 * The server's `clientError` listener: a status line instead of a silent reset where nothing
 * was written on the socket yet (431 for oversized headers, 408 for the header timeout, else
 * 400), then the socket is closed.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  const net = socket as Socket;
  if (error.code === "ECONNRESET" || !net.writable || net.bytesWritten > 0) {
    net.destroy();
    return;
  }
  const status =
    error.code === "HPE_HEADER_OVERFLOW" ? "431 Request Header Fields Too Large" : error.code === "ERR_HTTP_REQUEST_TIMEOUT" ? "408 Request Timeout" : "400 Bad Request";
  net.once("finish", () => net.destroy());
  net.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  // A peer that never reads cannot keep it: the answer is a few bytes, the close comes regardless.
  setTimeout(() => net.destroy(), 1_000).unref();
}

/** The soft RLIMIT_NOFILE (Linux /proc), undefined where it cannot be read or is unlimited. */
export function openFileLimit(): number | undefined {
  return proc.openFileLimit();
}
