import { randomUUID } from "node:crypto";
import type * as acp from "@agentclientprotocol/sdk";
import type { AcpCookieStore } from "@agentclientprotocol/sdk/experimental/http-client";
import { MemoryAcpCookieStore, createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { WebSocket } from "ws";
import type { Logger } from "../../core/logger.js";
import type { AcpAgentConfig } from "./config.js";
import type { AgentEndpoint, AgentEndpoints, ExitInfo } from "./endpoint.js";
import { AgentConnectionError } from "./errors.js";
import { AFFINITY_COOKIE } from "./remote-url.js";

/**
 * A cookie store per client, kept across reconnects: server cookies (a balancer's sticky cookie)
 * and a random affinity cookie a balancer can hash on (`hash $cookie_acp_affinity consistent`).
 */
export function affinityCookieStore(): AcpCookieStore {
  const store = new MemoryAcpCookieStore();
  store.store(new Headers({ "Set-Cookie": `${AFFINITY_COOKIE}=${randomUUID()}` }));
  return store;
}

/**
 * A client's connections to a `url` agent, sharing one cookie store (balancer affinity) across
 * reconnects. Recovery is on by default: a dropped connection is replaced (bounded attempts,
 * backoff), and sessions are re-attached, retried while another instance still holds them.
 */
export function urlEndpoints(config: AcpAgentConfig & { url: string }): AgentEndpoints {
  const cookies = affinityCookieStore();
  const reconnect = config.reconnect;
  return {
    open: () => new RemoteAgent(config, cookies),
    recovery: {
      limit: reconnect?.enabled === false ? 0 : (reconnect?.maxReconnects ?? 10),
      reattachForMs: reconnect?.reattachTimeoutMs ?? 30_000,
      next: (connect, closing, logger) => retried(connect, reconnect?.attempts ?? 5, closing, logger, config.url),
    },
  };
}

/** `attempts` tries of `connect`, backoff 250 ms doubling to 4 s; no further try once `closing`. */
async function retried<T>(connect: () => Promise<T>, attempts: number, closing: () => boolean, logger: Logger, url: string): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await connect();
    } catch (error) {
      if (attempt >= attempts || closing()) throw error;
      logger.info("reconnecting to the ACP agent failed; retrying", { url, attempt, error: String(error) });
      await new Promise((resolve) => setTimeout(resolve, Math.min(4_000, 250 * 2 ** (attempt - 1))));
    }
  }
}

/**
 * Loaded only for `url` agents (it brings in `ws` and the SDK's network transports).
 * One connection to an agent served over the network (`serve --listen`), through the SDK's
 * Streamable HTTP (http/https) or WebSocket (ws/wss, with the `ws` package: Node's built-in
 * WebSocket cannot send an Authorization header) transport. It stands where `AgentProcess`
 * stands for a spawned agent: "exited" here means the connection ended.
 */
export class RemoteAgent implements AgentEndpoint {
  readonly url: string;
  readonly stream: acp.Stream;
  readonly pid: undefined = undefined;
  #exit: ExitInfo | undefined;
  #cause: string | undefined;
  readonly #exited: Promise<ExitInfo>;
  #resolveExited!: (info: ExitInfo) => void;

  constructor(config: AcpAgentConfig & { url: string }, cookieStore: AcpCookieStore) {
    this.url = config.url;
    const headers = { ...(config.headers ?? {}), ...(config.token !== undefined ? { Authorization: `Bearer ${config.token}` } : {}) };
    this.#exited = new Promise((resolve) => (this.#resolveExited = resolve));
    const protocol = new URL(config.url).protocol;
    this.stream =
      protocol === "ws:" || protocol === "wss:"
        ? createWebSocketStream(config.url, { WebSocket, headers, cookieStore })
        : createHttpStream(config.url, { headers, cookieStore, ...(config.maxMessageBytes ? { maxMessageBytes: config.maxMessageBytes } : {}) });
  }

  get exitInfo(): ExitInfo | undefined {
    return this.#exit;
  }

  get exited(): Promise<ExitInfo> {
    return this.#exited;
  }

  get closing(): boolean {
    return this.#exit !== undefined;
  }

  /** Remembers why the transport failed (the first cause wins), for the error reports. */
  noteFailure(error: unknown): void {
    this.#cause ??= describeTransportError(error);
  }

  /** A transport failure (refused, 401, the instance died): say which URL and why. */
  explain(error: unknown, method: string): unknown {
    this.noteFailure(error);
    return this.exitError(`during ${method}`);
  }

  reportLost(logger: Logger): void {
    logger.warn("the connection to the ACP agent dropped", { url: this.url, error: this.exitError().message });
  }

  /** The typed error describing how the connection ended. */
  exitError(detail?: string): AgentConnectionError {
    const how = this.#cause === undefined ? "was closed" : `failed: ${this.#cause}`;
    return new AgentConnectionError(this.url, `${how}${detail ? ` (${detail})` : ""}`);
  }

  /** Marks the connection ended (the SDK connection closes the transport itself). Idempotent. */
  close(): Promise<ExitInfo> {
    if (!this.#exit) {
      this.#exit = { code: null, signal: null };
      this.#resolveExited(this.#exit);
    }
    return this.#exited;
  }

  kill(): Promise<ExitInfo> {
    return this.close();
  }
}

/** What went wrong, in words a user can act on (a refused token says how to set it). */
export function describeTransportError(error: unknown): string {
  const e = error as { status?: unknown; data?: { status?: unknown }; message?: unknown } | undefined;
  const status = typeof e?.status === "number" ? e.status : typeof e?.data?.status === "number" ? e.data.status : /\b(401|403|404|410|503)\b/.exec(String(e?.message ?? ""))?.[1];
  if (String(status) === "401") return "HTTP 401: the bearer token was refused (set AGENTKIT_ACP_TOKEN to the server's token)";
  if (String(status) === "503") return "HTTP 503: the instance is draining or at its connection limit";
  // fetch reports "fetch failed"; the socket's reason (ECONNREFUSED …) is down the cause chain.
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("E")) return `${code} (${cause.message})`;
  }
  return error instanceof Error ? error.message : String(error);
}
