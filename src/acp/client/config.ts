import type { SessionMcpServer } from "./mcp-over-acp.js";
import { isAbsolute } from "node:path";
import type * as acp from "@agentclientprotocol/sdk/unstable";
import { ConfigError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { CommandSandbox } from "../../core/sandbox.js";
import type { NetAllowEntry } from "../../core/sandbox-net.js";

/** How `AcpAgentConfig.sandbox` runs the agent process. */
export interface AgentSandbox {
  sandbox: CommandSandbox;
  readOnly?: string[];
  writable?: string[];
  home?: string;
  network?: "host" | readonly NetAllowEntry[];
}
import type { HostServices } from "./host-services.js";

/**
 * What to do with the agent's stderr. The last `stderrTailLines` lines are always kept
 * (for `AgentExitedError`), whatever the mode.
 * - `inherit`: copy to this process's stderr (default);
 * - `log`: one `logger.info` per line;
 * - `ignore`: keep only the tail;
 * - a function: called once per line.
 */
export type StderrMode = "inherit" | "log" | "ignore" | ((line: string) => void);

/** Bounds of the client's waits on the agent (each in ms). */
export interface AcpTimeouts {
  /** Spawn → `initialize` answered (default 30 000 ms; `npx` may download first). */
  initializeMs?: number;
  /** Every other request except `session/prompt` (default 120 000 ms; 0 = none). */
  requestMs?: number;
  /** `session/prompt` (default none). */
  promptMs?: number;
  /** `close()`: after stdin EOF, how long to wait before SIGTERM (default 2 000 ms). */
  exitGraceMs?: number;
  /** `close()`: after SIGTERM, how long to wait before SIGKILL (default 2 000 ms). */
  termGraceMs?: number;
}

/** Opt-in respawn of a local agent that died, with its open sessions re-attached. */
export interface AcpRecoveryOptions {
  /** Respawn the agent when it dies and reattach open sessions (`session/resume`, else `session/load`). */
  enabled: boolean;
  /** Give up after this many restarts (default 3). */
  maxRestarts?: number;
}

/** For a `url` agent: how a dropped connection is re-established (bounded). */
export interface AcpReconnectOptions {
  /** Reconnect and re-attach open sessions when the connection drops (default true for `url`). */
  enabled?: boolean;
  /** Connection attempts per drop before giving up (default 5; backoff 250 ms doubling to 4 s). */
  attempts?: number;
  /**
   * How long re-attaching a session (session/resume, else session/load) is retried while the
   * agent refuses it, e.g. because the dead instance's lease has not expired yet (default 30 000 ms).
   */
  reattachTimeoutMs?: number;
  /** Drops survived over the client's life before it gives up for good (default 10). */
  maxReconnects?: number;
}

/** How to launch and talk to one ACP agent. */
export type AcpElicitationHandler = (request: acp.CreateElicitationRequest, signal: AbortSignal) => Promise<acp.CreateElicitationResponse>;

/** A URL-mode `elicitation/create` handed to `AcpAgentConfig.urlElicitation`. */
export interface AcpUrlElicitation {
  /** The agent's request: `message`, the `url` to show in full, `elicitationId`, and `sessionId` (optionally `toolCallId`) or `requestId`. */
  request: acp.CreateElicitationRequest & { mode: "url"; url: string; elicitationId: string };
  /** Aborts when the agent withdraws the request (e.g. the turn was cancelled). */
  signal: AbortSignal;
  /**
   * Resolves when the agent sends `elicitation/complete` for this id (the out-of-band part is
   * done). Never rejects; it may never resolve (the agent MAY not send it).
   */
  completed: Promise<void>;
}

/**
 * Answers a URL-mode elicitation: show the whole URL, ask the human's consent to open it, and
 * answer `accept` (consent — not completion), `decline` or `cancel`. Never open it without consent.
 */
export type AcpUrlElicitationHandler = (elicitation: AcpUrlElicitation) => Promise<acp.CreateElicitationResponse>;

/** Which agent to run (a command, a shell line or a URL) and how the client talks to it. */
export interface AcpAgentConfig {
  /** The executable (looked up on PATH). Use with `args`; or give `shellLine` instead. */
  command?: string;
  args?: string[];
  /** A whole command line run through `/bin/sh -c` (quotes, `npx …`, env expansion). */
  shellLine?: string;
  /**
   * Or an agent served over the network (`serve --listen`): `http(s)://host:port/acp`
   * (Streamable HTTP) or `ws(s)://host:port/acp` (WebSocket). Nothing is spawned.
   */
  url?: string;
  /** The bearer token sent with every request to a `url` agent. */
  token?: string;
  /** Further headers for a `url` agent's requests. */
  headers?: Record<string, string>;
  /** Largest message accepted from a `url` agent over HTTP (the SDK's default otherwise). */
  maxMessageBytes?: number;
  /** Reconnecting to a `url` agent (on by default). */
  reconnect?: AcpReconnectOptions;
  /** Absolute working directory of the agent process and default session cwd (for a `url` agent: a directory on its machine). */
  cwd: string;
  /** Extra environment for the agent. Values are never logged. */
  env?: Record<string, string>;
  /** Start from this process's environment (default true). */
  inheritEnv?: boolean;
  /**
   * Run the agent process in this OS sandbox (docs/sandbox.md): `cwd`, `additionalDirectories`
   * and `writable` writable, system directories and `readOnly` read-only, nothing else; `home`:
   * a scratch HOME at that path (its config directories bound in it through `readOnly`/`writable`).
   * `network`: an allow-list (its model provider's hosts, through the sandbox's proxy; empty = no
   * network) or "host" (the default: the host's network, not limited). Not for `url` agents.
   */
  sandbox?: AgentSandbox;
  /** MCP servers handed to every session/new, load and resume (in-process ones too: see `SessionOptions.mcpServers`). */
  mcpServers?: SessionMcpServer[];
  /** Further workspace roots for sessions (needs `sessionCapabilities.additionalDirectories`). */
  additionalDirectories?: string[];
  /** File-system / terminal services offered to the agent; nothing is offered by default. */
  hostServices?: HostServices;
  /**
   * Answers the agent's `elicitation/create` in form mode (advertised as `elicitation.form` only
   * when set): show `request.message` and the form of `request.requestedSchema`, return accept
   * with the answers, decline or cancel. `signal` aborts when the agent withdraws the question.
   */
  elicitation?: AcpElicitationHandler;
  /**
   * Answers `elicitation/create` in URL mode (advertised as `elicitation.url` only when set); an
   * http(s) URL only — anything else is refused with -32602 before the handler sees it.
   */
  urlElicitation?: AcpUrlElicitationHandler;
  timeouts?: AcpTimeouts;
  stderr?: StderrMode;
  /** How many stderr lines to keep for error reports (default 40). */
  stderrTailLines?: number;
  /** Authenticate with this method id right after `initialize` (when the agent offers it). */
  authMethodId?: string;
  clientInfo?: { name: string; version: string; title?: string };
  /**
   * ACP version to speak (default `v1`). `v2`: the v2 draft (initialize asks for 2); an agent
   * that answers another version fails start-up with `ProtocolVersionError`. A v2 agent runs its
   * own tools, so `hostServices` (fs/terminal) are not offered over v2.
   */
  protocol?: "v1" | "v2";
  logger?: Logger;
  recovery?: AcpRecoveryOptions;
  /**
   * Sees the raw bytes on the agent's stdio as they pass: `client` = written to the agent,
   * `agent` = read from it (an inspector records them; must not throw or block).
   */
  wireObserver?: (from: "client" | "agent", chunk: Uint8Array) => void;
}

export interface ResolvedTimeouts {
  initializeMs: number;
  requestMs: number;
  promptMs: number;
  exitGraceMs: number;
  termGraceMs: number;
}

export function resolveTimeouts(t: AcpTimeouts | undefined): ResolvedTimeouts {
  return {
    initializeMs: t?.initializeMs ?? 30_000,
    requestMs: t?.requestMs ?? 120_000,
    promptMs: t?.promptMs ?? 0,
    exitGraceMs: t?.exitGraceMs ?? 2_000,
    termGraceMs: t?.termGraceMs ?? 2_000,
  };
}

/** A printable description of the launch command (never includes env values). */
export function describeCommand(config: AcpAgentConfig): string {
  if (config.url !== undefined) return config.url;
  if (config.shellLine !== undefined) return config.shellLine;
  return [config.command ?? "", ...(config.args ?? [])].join(" ");
}

export function validateConfig(config: AcpAgentConfig): void {
  const hasCommand = config.command !== undefined && config.command !== "";
  const hasShell = config.shellLine !== undefined && config.shellLine.trim() !== "";
  const hasUrl = config.url !== undefined;
  if (Number(hasCommand) + Number(hasShell) + Number(hasUrl) !== 1) throw new ConfigError("AcpAgentConfig needs exactly one of `command`, `shellLine` or `url`");
  if (hasUrl && !/^(https?|wss?):\/\//i.test(config.url ?? "")) throw new ConfigError(`AcpAgentConfig.url must be an http(s):// or ws(s):// URL, got "${config.url}"`);
  if (hasUrl && !URL.canParse(config.url ?? "")) throw new ConfigError(`AcpAgentConfig.url is not a valid URL: "${config.url}"`);
  if (hasUrl && config.sandbox) throw new ConfigError("AcpAgentConfig.sandbox runs a local agent process; a `url` agent runs elsewhere");
  if (config.protocol !== undefined && config.protocol !== "v1" && config.protocol !== "v2") throw new ConfigError(`AcpAgentConfig.protocol must be "v1" or "v2", got "${String(config.protocol)}"`);
  if (!isAbsolute(config.cwd)) throw new ConfigError(`AcpAgentConfig.cwd must be absolute, got "${config.cwd}"`);
  for (const dir of config.additionalDirectories ?? []) {
    if (!isAbsolute(dir)) throw new ConfigError(`additional directory must be absolute, got "${dir}"`);
  }
}
