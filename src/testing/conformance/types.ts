import type * as acp from "@agentclientprotocol/sdk";

/**
 * The level of a check, taken from the RFC 2119 keyword of the sentence it enforces: `must`
 * (MUST / MUST NOT binding the agent) failures make the run fail; `should` (SHOULD) failures are
 * recommendations; `info` checks report behaviour the spec leaves open (a rule that binds the
 * client, a definition without a keyword, or common practice) and never count against the agent.
 */
export type CheckSeverity = "must" | "should" | "info";

/**
 * What a result means for the agent: `violation` a MUST check failed; `recommendation` a SHOULD
 * check failed; `informational` an info check differed from the reference behaviour, or a check
 * was inconclusive (warn); `ok` passed; `skipped` not applicable.
 */
export type CheckVerdict = "ok" | "violation" | "recommendation" | "informational" | "skipped";

/** `warn`: inconclusive or heuristic finding (e.g. a race); `skip`: not applicable, with the reason. */
export type CheckStatus = "pass" | "fail" | "skip" | "warn";

/** The part of the protocol a conformance check covers; reports group their checks by it. */
export type CheckGroup = "initialize" | "json-rpc" | "session" | "prompt" | "cancel" | "capabilities" | "mcp" | "process";

/** The sentence of the ACP spec (or JSON-RPC 2.0) a check enforces, with its page and link. */
export interface SpecReference {
  /** Spec page and section, e.g. "prompt-turn#cancellation". */
  section: string;
  url: string;
  /** The sentence the check enforces, quoted verbatim from the ACP v1 docs (or JSON-RPC 2.0). */
  text: string;
  /** Why the check has its level, when that is not simply the sentence's own MUST / SHOULD. */
  rating?: string;
}

/** One named conformance check (metadata; the runner produces a `CheckResult` for it). */
export interface ConformanceCheck {
  id: string;
  group: CheckGroup;
  severity: CheckSeverity;
  title: string;
  spec: SpecReference;
  /** What an agent author should change when the check fails. */
  fix: string;
  /** Sends session/prompt (a real model spends tokens); skipped with `skipPrompts`. */
  prompts?: boolean;
}

/** One check's outcome in a `ConformanceReport`: its status, what was seen, and the spec sentence behind it. */
export interface CheckResult {
  id: string;
  group: CheckGroup;
  severity: CheckSeverity;
  title: string;
  status: CheckStatus;
  /** What the result means: spec violation, recommendation not followed, informational, ok, skipped. */
  verdict: CheckVerdict;
  /** What was observed (for a skip: why it was skipped). */
  detail: string;
  spec: SpecReference;
  /** Present when the status is fail or warn. */
  fix?: string;
}

/** How the agent under test is launched: a whole shell command line, or a command with arguments. */
export type AgentLaunch =
  | { shellLine: string; command?: undefined; args?: undefined }
  | { command: string; args?: string[]; shellLine?: undefined };

/** The prompts a conformance run sends; each one not given is `DEFAULT_PROMPTS`'. */
export interface ConformancePrompts {
  /** A harmless prompt that should end with end_turn. */
  text?: string;
  /** A prompt that keeps the agent busy long enough to be cancelled. */
  cancel?: string;
  /** A prompt that makes the agent ask permission for a tool call. */
  permission?: string;
}

/**
 * Options of `runConformance`: how the agent is launched, where its session runs, the prompts, bounds and which
 * checks run.
 */
export type ConformanceOptions = AgentLaunch & {
  /**
   * The session's working directory. Default: a fresh temporary directory (removed
   * afterwards), so an agent that acts on the permission prompt changes nothing of yours.
   */
  cwd?: string;
  /** The directory the agent process starts in (default: this process's cwd); sessions use `cwd`. */
  agentCwd?: string;
  /** Extra environment for the agent (added to this process's environment). */
  env?: Record<string, string>;
  /** Bound for each request and prompt turn (default `DEFAULT_CHECK_TIMEOUT_MS`, 30 s). */
  timeoutMs?: number;
  /** How long a cancelled turn may take to answer `cancelled` (default 10000 ms). */
  cancelBoundMs?: number;
  /** How long the agent may take to exit after stdin EOF (default 5000 ms). */
  exitBoundMs?: number;
  /** Quiet time after each response in which late updates are still caught (default 300 ms). */
  settleMs?: number;
  /** Run no check that sends session/prompt (no tokens spent). */
  skipPrompts?: boolean;
  /**
   * Also run the checks that change the agent's state (logout, providers/set, providers/disable),
   * last and in a launch of their own; otherwise they are skipped, saying so. Signing out may
   * need a new login afterwards.
   */
  changeState?: boolean;
  /** Run only these check ids (prerequisites still run, unreported). */
  only?: string[];
  prompts?: ConformancePrompts;
  /** Calls `authenticate` with this method id before creating sessions. */
  authMethod?: string;
  /** Called as each result is known (progress display). */
  onResult?: (result: CheckResult) => void;
  /** Each line the agent writes to stderr (default: kept only as a tail for the report). */
  onStderr?: (line: string) => void;
};

/** The counts of a report, and the verdict a CI job can act on. */
export interface ConformanceSummary {
  pass: number;
  fail: number;
  warn: number;
  skip: number;
  /** Spec violations: failed MUST checks. */
  violations: string[];
  /** Recommendations not followed: failed SHOULD checks. */
  recommendations: string[];
  /** Informational findings: info checks that differed from the reference behaviour, and inconclusive results. */
  informational: string[];
}

/** What `runConformance` returns: the agent as it introduced itself, every check's result and the summary. */
export interface ConformanceReport {
  agent: {
    command: string;
    info?: acp.Implementation | null;
    protocolVersion?: unknown;
    capabilities?: acp.AgentCapabilities | null;
    authMethods?: unknown[];
    /** What the agent's initialize `_meta` says about a sandbox for its commands (serve's `agentkit.sandbox`): informational, not a check. */
    sandbox?: string;
  };
  cwd: string;
  skipPrompts: boolean;
  results: CheckResult[];
  summary: ConformanceSummary;
  /** True when no `must` check failed. */
  ok: boolean;
  /** The last lines the agent wrote to stderr (for diagnosis). */
  stderrTail: string[];
  durationMs: number;
}
