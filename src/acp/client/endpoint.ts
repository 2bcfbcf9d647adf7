import type * as acp from "@agentclientprotocol/sdk";
import type { Logger } from "../../core/logger.js";
import type { AgentConnectionError, AgentExitedError, AgentSpawnError } from "./errors.js";

/** How an agent's end came: the process's exit code and signal (both null for a connection). */
export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The typed error a client reports when its agent is gone. */
export type AgentEndError = AgentExitedError | AgentSpawnError | AgentConnectionError;

/**
 * Where a client's agent runs, for one connection: a local process it spawned (process.ts) or an
 * agent served at a URL (remote.ts). The client and its `Link` speak only to this; each kind
 * says in its own words why it ended, and brings its own recovery (`AgentEndpoints`).
 */
export interface AgentEndpoint {
  /** The ndjson stream to the agent. */
  readonly stream: acp.Stream;
  /** A local agent's process id (= its process group id); undefined for a URL. */
  readonly pid: number | undefined;
  /** Set once the agent ended (the process exited, the connection closed). */
  readonly exitInfo: ExitInfo | undefined;
  readonly exited: Promise<ExitInfo>;
  /** Being closed by us (an end now is no surprise). */
  readonly closing: boolean;
  /** The SDK connection over `stream` ended with `reason`: remembered where it explains the end. */
  noteFailure(reason: unknown): void;
  /** The error to report for `error`, raised by a request of `method` (the typed end where there is one). */
  explain(error: unknown, method: string): unknown;
  /** The typed error describing this end. */
  exitError(detail?: string): AgentEndError;
  /** Logs the unexpected end, in this kind's words. */
  reportLost(logger: Logger): void;
  /** Graceful end (a process: stdin EOF → SIGTERM → SIGKILL of its group). Idempotent. */
  close(): Promise<ExitInfo>;
  /** Immediate end (a process: SIGKILL of its group). */
  kill(): Promise<ExitInfo>;
}

/** What a client does when its agent ends unexpectedly: the kind's own policy. */
export interface EndpointRecovery {
  /** How many times a client may replace its endpoint (0: never). */
  readonly limit: number;
  /** How long a refused re-attach of a session is retried (another instance may hold its lease). */
  readonly reattachForMs: number;
  /** Connects again through `connect`: once (a respawn) or with bounded backoff (a URL). */
  next<T>(connect: () => Promise<T>, closing: () => boolean, logger: Logger): Promise<T>;
}

/** Opens one client's endpoints: the first, and each replacement after an end. */
export interface AgentEndpoints {
  open(): AgentEndpoint;
  readonly recovery: EndpointRecovery;
}
