import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { sandboxMetaText } from "../../core/sandbox.js";
import { conformanceChecks } from "./catalog.js";
import { verdictOf } from "./report.js";
import type { CheckResult, CheckStatus, ConformanceOptions, ConformanceReport } from "./types.js";
import { WireAgent, WireLog, type CallOutcome } from "./wire.js";

// Scratch directories of the runs in progress, removed at process exit as well as by dispose():
// `check` exits on Ctrl-C without awaiting the run, and the exit hook is its last chance.
const liveScratch = new Set<string>();
let scratchExitHook = false;

function makeScratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "agentkit-check-"));
  liveScratch.add(dir);
  if (!scratchExitHook) {
    scratchExitHook = true;
    process.once("exit", () => {
      for (const path of liveScratch) rmSync(path, { recursive: true, force: true });
    });
  }
  return dir;
}

/** Bound for each request and prompt turn of a conformance run unless `timeoutMs` says otherwise (`check --timeout`). */
export const DEFAULT_CHECK_TIMEOUT_MS = 30_000;

/** The prompts a conformance run sends unless `prompts` replaces them (`check --prompt`, `--cancel-prompt`, `--permission-prompt`). */
export const DEFAULT_PROMPTS = {
  text: "Reply with the word ok.",
  cancel: "Count from 1 to 300, one number per line, and add one sentence about each number.",
  permission: "Create a file named acp-check.txt in the current directory containing the word ok.",
} as const;

export const CLIENT_INFO = { name: "agentkit-acp check", version: "1" };

/** State shared by the steps of one conformance run. */
export class Run {
  readonly log = new WireLog();
  readonly agents: WireAgent[] = [];
  readonly stderrTail: string[] = [];
  readonly timeoutMs: number;
  readonly cancelBoundMs: number;
  readonly exitBoundMs: number;
  readonly settleMs: number;
  readonly skipPrompts: boolean;
  /** Run the state-changing checks (logout, providers/set, providers/disable). */
  readonly changeState: boolean;
  readonly prompts: { text: string; cancel: string; permission: string };
  readonly scratch: string;
  readonly cwd: string;
  /** A small text file for resource_link / resource blocks (outside a user-given cwd). */
  readonly notesFile: string;
  readonly command: string;
  /** The initialize result as the agent sent it (unvalidated). */
  init: Record<string, unknown> | undefined;
  /** Whether the v1 initialize got any answer (a result or a JSON-RPC error, e.g. a v2-only agent's -32022). */
  initAnswered = false;
  /** The run's main session, once session/new worked. */
  sessionId: string | undefined;
  /** Prompt turns run in the main session (load must replay them). */
  mainTurns = 0;
  /** Why checks that had no chance to run are skipped. */
  blocked: string | undefined;
  /** Run at dispose (loopback servers the run started). */
  readonly cleanups: (() => Promise<void>)[] = [];
  readonly #options: ConformanceOptions;
  readonly #only: Set<string> | undefined;
  readonly #results = new Map<string, CheckResult>();
  readonly #started = Date.now();

  constructor(options: ConformanceOptions) {
    this.#options = options;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
    this.cancelBoundMs = options.cancelBoundMs ?? 10_000;
    this.exitBoundMs = options.exitBoundMs ?? 5_000;
    this.settleMs = options.settleMs ?? 300;
    this.skipPrompts = options.skipPrompts === true;
    this.changeState = options.changeState === true;
    this.prompts = { ...DEFAULT_PROMPTS, ...definedOnly(options.prompts ?? {}) };
    this.#only = options.only && options.only.length > 0 ? new Set(options.only) : undefined;
    this.scratch = makeScratch();
    const ownCwd = options.cwd === undefined;
    this.cwd = options.cwd ?? join(this.scratch, "workspace");
    mkdirSync(this.cwd, { recursive: true });
    this.notesFile = join(ownCwd ? this.cwd : this.scratch, "acp-check-notes.txt");
    writeFileSync(this.notesFile, "agentkit-acp conformance check: a small text file used as prompt context.\n");
    this.command = options.shellLine ?? [options.command, ...(options.args ?? [])].join(" ");
  }

  get capabilities(): Record<string, unknown> {
    const caps = this.init?.agentCapabilities;
    return typeof caps === "object" && caps !== null ? (caps as Record<string, unknown>) : {};
  }

  /** A capability flag or object (`promptCapabilities.image`, `sessionCapabilities.list`) is on. */
  advertises(path: string): boolean {
    let value: unknown = this.capabilities;
    for (const key of path.split(".")) value = typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
    return value === true || (typeof value === "object" && value !== null);
  }

  /** The auth method to log in with (`--auth-method`), if any. */
  get authMethod(): string | undefined {
    return this.#options.authMethod;
  }

  /** Whether a check is selected and can run in this mode (prompt checks need prompts). */
  wants(id: string): boolean {
    if (this.#only && !this.#only.has(id)) return false;
    return !this.#results.has(id);
  }

  wantsAny(...ids: string[]): boolean {
    return ids.some((id) => this.wants(id));
  }

  promptsAllowed(id: string): boolean {
    if (!this.skipPrompts) return true;
    this.record(id, "skip", "--skip-prompts: no prompt turns are run");
    return false;
  }

  /** Records a result; an info check never fails: a miss is recorded as `warn` (informational). */
  record(id: string, observed: CheckStatus, detail: string): void {
    const check = conformanceChecks.find((c) => c.id === id);
    if (!check) throw new Error(`unknown conformance check ${id}`);
    if ((this.#only && !this.#only.has(id)) || this.#results.has(id)) return;
    const status = observed === "fail" && check.severity === "info" ? "warn" : observed;
    const result: CheckResult = { id, group: check.group, severity: check.severity, title: check.title, status, verdict: verdictOf(check.severity, status), detail, spec: check.spec };
    if (status === "fail" || status === "warn") result.fix = check.fix;
    this.#results.set(id, result);
    this.#options.onResult?.(result);
  }

  pass(id: string, detail: string): void {
    this.record(id, "pass", detail);
  }
  fail(id: string, detail: string): void {
    this.record(id, "fail", detail);
  }
  warn(id: string, detail: string): void {
    this.record(id, "warn", detail);
  }
  skip(id: string, detail: string): void {
    this.record(id, "skip", detail);
  }

  launch(): WireAgent {
    const env = { ...(this.#options.env ?? {}) };
    const spec = this.#options.shellLine !== undefined
      ? { shellLine: this.#options.shellLine }
      : { command: this.#options.command, args: this.#options.args ?? [] };
    const agent = new WireAgent({ ...spec, cwd: this.#options.agentCwd ?? process.cwd(), env, ...(this.#options.onStderr ? { onStderr: this.#options.onStderr } : {}) }, this.log, this.agents.length, this.stderrTail);
    this.agents.push(agent);
    return agent;
  }

  initialize(agent: WireAgent): Promise<CallOutcome> {
    return agent.call(
      acp.methods.agent.initialize,
      { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false }, clientInfo: CLIENT_INFO },
      this.timeoutMs,
    );
  }

  /** A fresh launch, initialized (and authenticated when asked); undefined when that fails. */
  async launchReady(): Promise<WireAgent | undefined> {
    const agent = this.launch();
    const init = await this.initialize(agent);
    if (init.kind !== "result") return undefined;
    if (!(await this.authenticate(agent))) return undefined;
    return agent;
  }

  async authenticate(agent: WireAgent): Promise<boolean> {
    const methodId = this.#options.authMethod;
    if (methodId === undefined) return true;
    const outcome = await agent.call(acp.methods.agent.authenticate, { methodId }, this.timeoutMs);
    return outcome.kind === "result";
  }

  newSessionParams(mcpServers: acp.McpServer[] = []): acp.NewSessionRequest {
    return { cwd: this.cwd, mcpServers };
  }

  /** Records `skip` (with the blocked reason) for every selected check without a result. */
  finish(): ConformanceReport {
    for (const check of conformanceChecks) {
      if (this.wants(check.id)) this.skip(check.id, this.blocked ?? "not reached");
    }
    const results = conformanceChecks.flatMap((c) => this.#results.get(c.id) ?? []);
    const count = (status: CheckStatus): number => results.filter((r) => r.status === status).length;
    const withVerdict = (verdict: CheckResult["verdict"]): string[] => results.filter((r) => r.verdict === verdict).map((r) => r.id);
    const violations = withVerdict("violation");
    const authMethods = this.init?.authMethods;
    const sandbox = sandboxMetaText(this.init?._meta);
    return {
      agent: {
        command: this.command,
        info: (this.init?.agentInfo as acp.Implementation | undefined) ?? null,
        protocolVersion: this.init?.protocolVersion,
        capabilities: (this.init?.agentCapabilities as acp.AgentCapabilities | undefined) ?? null,
        ...(Array.isArray(authMethods) ? { authMethods } : {}),
        ...(sandbox !== undefined ? { sandbox } : {}),
      },
      cwd: this.cwd,
      skipPrompts: this.skipPrompts,
      results,
      summary: {
        pass: count("pass"),
        fail: count("fail"),
        warn: count("warn"),
        skip: count("skip"),
        violations,
        recommendations: withVerdict("recommendation"),
        informational: withVerdict("informational"),
      },
      ok: violations.length === 0,
      stderrTail: [...this.stderrTail],
      durationMs: Date.now() - this.#started,
    };
  }

  /** Ends every launched process group and removes the scratch directory. */
  async dispose(): Promise<void> {
    await Promise.all(this.agents.map((a) => a.kill()));
    await Promise.allSettled(this.cleanups.map((cleanup) => cleanup()));
    rmSync(this.scratch, { recursive: true, force: true });
    liveScratch.delete(this.scratch);
  }
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
