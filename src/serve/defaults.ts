import { DEFAULT_CLIENT_REQUEST_TIMEOUT_MS } from "../acp/agent/client-handle.js";
import { DEFAULT_KEY_PAGE_LIFETIME_MS } from "../acp/agent/credential-elicitation.js";

// The reference agent's defaults, in one place: createServeRuntime applies them and the CLI's
// option schema shows them in `serve --help` (kept light: parsing the flags loads nothing else).

/** Who answers what the session's mode asks about: the client (ask, auto-reads), nobody (auto-all approves, deny refuses). */
export type ApproveMode = "ask" | "auto-reads" | "auto-all" | "deny";
/** The `--approve` choices. */
export const APPROVE_MODES: readonly ApproveMode[] = ["ask", "auto-reads", "auto-all", "deny"];

/** What `createServeRuntime` (and `serve`) use for an option that is not given; `serve --help` shows the same values. */
export const SERVE_DEFAULTS = {
  approve: "ask" as ApproveMode,
  maxSessions: 32,
  mcpStartupTimeoutMs: 10_000,
  mcpCallTimeoutMs: 600_000,
  coalesceMs: 0,
  /** 32 MiB. */
  maxMessageBytes: 33_554_432,
  clientTimeoutMs: DEFAULT_CLIENT_REQUEST_TIMEOUT_MS,
  keyPageMs: DEFAULT_KEY_PAGE_LIFETIME_MS,
  maxConnections: 256,
  drainTimeoutMs: 30_000,
} as const;
