import { DEFAULT_CLIENT_REQUEST_TIMEOUT_MS } from "../acp/agent/client-handle.js";
import { DEFAULT_KEY_PAGE_LIFETIME_MS } from "../acp/agent/credential-elicitation.js";
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_SESSIONS } from "../acp/agent/limits.js";
import { DEFAULT_MAX_MESSAGE_BYTES } from "../acp/agent/line-guard.js";
import { DEFAULT_MCP_CALL_TIMEOUT_MS, DEFAULT_MCP_STARTUP_TIMEOUT_MS } from "../tools/mcp.js";

// The reference agent's defaults, in one place: createServeRuntime applies them and the CLI's
// option schema shows them in `serve --help` (kept light: parsing the flags loads nothing else).

/** Who answers what the session's mode asks about: the client (ask, auto-reads), nobody (auto-all approves, deny refuses). */
export type ApproveMode = "ask" | "auto-reads" | "auto-all" | "deny";
/** The `--approve` choices. */
export const APPROVE_MODES: readonly ApproveMode[] = ["ask", "auto-reads", "auto-all", "deny"];

/** What `createServeRuntime` (and `serve`) use for an option that is not given; `serve --help` shows the same values. */
export const SERVE_DEFAULTS = {
  approve: "ask" as ApproveMode,
  maxSessions: DEFAULT_MAX_SESSIONS,
  mcpStartupTimeoutMs: DEFAULT_MCP_STARTUP_TIMEOUT_MS,
  mcpCallTimeoutMs: DEFAULT_MCP_CALL_TIMEOUT_MS,
  coalesceMs: 0,
  /** 32 MiB (the stdio guard's, also applied to `--listen`: HTTP's own default is 4 MiB). */
  maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES,
  clientTimeoutMs: DEFAULT_CLIENT_REQUEST_TIMEOUT_MS,
  keyPageMs: DEFAULT_KEY_PAGE_LIFETIME_MS,
  maxConnections: DEFAULT_MAX_CONNECTIONS,
  drainTimeoutMs: 30_000,
  /** Audit records older than this are pruned (`--audit-retain`): 30 days. */
  auditRetainMs: 30 * 24 * 3_600_000,
} as const;
