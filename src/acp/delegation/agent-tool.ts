import { isAbsolute } from "node:path";
import { z } from "zod";
import type { PermissionTarget, ToolKind, ToolLocation, ToolResult } from "../../core/index.js";
import { ConfigError, raceAbort } from "../../core/index.js";
import type { JsonSchema } from "../../model/types.js";
import type { Tool, ToolContext, ToolTargetContext } from "../../tools/types.js";
import { ToolInputError, toJsonSchema } from "../../tools/define.js";
import { AcpClient } from "../client/client.js";
import { describeCommand, type AcpAgentConfig } from "../client/config.js";
import { delegationPolicy, type OuterApprovalHandler, type OuterCall } from "./approvals.js";
import {
  DEFAULT_MAX_DELEGATION_DEPTH,
  childDelegationEnv,
  delegateId,
  delegationContextFrom,
  delegationRefusal,
  type DelegationContext,
} from "./guard.js";
import { DelegationProgress } from "./report.js";
import { runDelegatedTurn } from "./turn.js";
import { delegationResult, failureResult, type ResultContext } from "./result.js";
import { AgentExitedError, ClientClosedError } from "../client/errors.js";
import type { ClientPermissionPolicy } from "../client/permissions.js";
import { processGroupAlive } from "../../core/process/group.js";
import { proc } from "../../core/process/proc.js";
import type { AcpSession } from "../client/session.js";

/** An `AcpAgentConfig` whose `cwd` (of the process) defaults to the session's working directory. */
export type AcpAgentLaunch = Omit<AcpAgentConfig, "cwd"> & { cwd?: string };

/**
 * Options of `AcpAgentTool`: the tool name and description the model sees, how to start the agent, and its bounds
 * (time, output, permissions, delegation depth).
 */
export interface AcpAgentToolOptions {
  /** The tool name the model calls (letters, digits, `_`, `-`; at most 64). */
  name: string;
  /** What this agent is for; a note on how delegation works is appended for the model. */
  description: string;
  /** How to start the agent. Its stderr is ignored unless `stderr` says otherwise (the tail is always kept for errors). */
  config: AcpAgentLaunch;
  /** Absolute working directory of the delegated sessions (default: the outer session's cwd). */
  workingDirectory?: string;
  /** Answers the delegate's permission questions. Default: deny everything. */
  permissions?: ClientPermissionPolicy;
  /**
   * Forward the delegate's questions to the outer approval flow (the human in front of the
   * outer agent). With `permissions`, its rules decide first and only `ask` goes out.
   */
  askOuter?: OuterApprovalHandler;
  /** Keep one agent process and session per outer loop session (`ctx.sessionId`) across calls. */
  persistent?: boolean;
  /** Per-call limit; the delegated turn is cancelled when it passes (default: none). */
  timeoutMs?: number;
  /** After a cancel, how long the agent has to end its turn before its process is killed (default 5 000). */
  cancelGraceMs?: number;
  /** The delegate's answer is cut to its last this-many characters (default 16 000). */
  maxAnswerChars?: number;
  /** Nested delegations allowed, counting this hop (default 3). */
  maxDepth?: number;
  /** Identity in the delegation chain (default: name plus a hash of the command). */
  agentId?: string;
  /** This process's place in a delegation chain (default: read from the environment at each call). */
  delegation?: DelegationContext;
  /** The tool kind shown to editors and permission policies (default `other`). */
  kind?: ToolKind;
}

/** What the model sends. `fresh` exists on persistent tools only. */
export interface AcpAgentToolInput {
  task: string;
  fresh?: boolean;
}

interface PersistentEntry {
  client: AcpClient;
  session: AcpSession;
  /** The outer call being served (permission questions are attached to it). */
  current: OuterCall | undefined;
  dead: boolean;
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * A loop tool that delegates a task to an external ACP agent: it starts the agent (or reuses
 * the session of this outer session, when persistent), sends the task, streams the agent's
 * work as progress of the outer call, and returns its answer with a summary of tool calls and
 * files. Every outcome is a tool result (errors with `isError`), never an exception.
 * Persistent tools hold processes: the host must call `closeSession(id)` when an outer session
 * ends and `close()` at shutdown (the loop has no session-end hook).
 */
export class AcpAgentTool implements Tool<AcpAgentToolInput> {
  readonly name: string;
  readonly description: string;
  readonly kind: ToolKind;
  readonly inputSchema: JsonSchema;
  readonly persistent: boolean;
  readonly #options: AcpAgentToolOptions;
  readonly #schema: z.ZodType<AcpAgentToolInput>;
  readonly #id: string;
  readonly #entries = new Map<string, PersistentEntry>();
  readonly #locks = new Map<string, Promise<void>>();

  constructor(options: AcpAgentToolOptions) {
    if (!NAME.test(options.name)) throw new ConfigError(`AcpAgentTool name must match ${NAME} (got "${options.name}")`);
    if (options.workingDirectory !== undefined && !isAbsolute(options.workingDirectory)) {
      throw new ConfigError(`AcpAgentTool workingDirectory must be absolute (got "${options.workingDirectory}")`);
    }
    this.#options = options;
    this.name = options.name;
    this.persistent = options.persistent === true;
    this.kind = options.kind ?? "other";
    this.#id = options.agentId ?? delegateId(options.name, describeCommand({ ...options.config, cwd: "/" }));
    const task = z.string().trim().min(1).describe("The complete, self-contained task for this agent: what to do, where, and what to report back.");
    this.#schema = this.persistent
      ? z.object({ task, fresh: z.boolean().optional().describe("Start a new session, forgetting earlier tasks (default false).") })
      : z.object({ task });
    this.inputSchema = toJsonSchema(this.#schema);
    this.description = `${options.description.trim()}\n\n${usageNote(this.persistent)}`;
  }

  /** The same tool keeping one process and session per outer session. */
  static persistent(options: Omit<AcpAgentToolOptions, "persistent">): AcpAgentTool {
    return new AcpAgentTool({ ...options, persistent: true });
  }

  /** Outer sessions that currently hold an agent process (persistent tools). */
  get openSessions(): string[] {
    return [...this.#entries.keys()];
  }

  parse(input: unknown): AcpAgentToolInput {
    const parsed = this.#schema.safeParse(input);
    if (!parsed.success) throw new ToolInputError(this.name, z.prettifyError(parsed.error));
    return parsed.data;
  }

  title(input: AcpAgentToolInput): string {
    const task = input.task.replace(/\s+/g, " ");
    return `${this.name}: ${task.length > 60 ? `${task.slice(0, 60)}…` : task}`;
  }

  locations(): ToolLocation[] {
    return [];
  }

  target(_input: AcpAgentToolInput, context: ToolTargetContext): PermissionTarget {
    return { paths: [this.#options.workingDirectory ?? context.cwd], server: this.name };
  }

  async execute(input: AcpAgentToolInput, ctx: ToolContext): Promise<ToolResult> {
    const delegation = this.#options.delegation ?? delegationContextFrom(process.env);
    const refusal = delegationRefusal(delegation, this.#id, this.#options.maxDepth ?? DEFAULT_MAX_DELEGATION_DEPTH);
    if (refusal) return { text: refusal, isError: true, data: { delegate: this.name, refused: true, chain: delegation.chain, depth: delegation.depth } };
    const cwd = this.#options.workingDirectory ?? ctx.cwd;
    const progress = new DelegationProgress(this.name, (p) => ctx.progress(p));
    const result: ResultContext = {
      delegate: this.name,
      cwd,
      timeoutMs: this.#options.timeoutMs,
      cancelGraceMs: this.#cancelGraceMs,
      maxAnswerChars: this.#options.maxAnswerChars ?? 16_000,
    };
    try {
      return this.persistent
        ? await this.#runPersistent(input, ctx, cwd, delegation, progress, result)
        : await this.#runOnce(input, ctx, cwd, delegation, progress, result);
    } finally {
      progress.stop();
    }
  }

  /** Ends the agent process kept for this outer session (persistent tools). */
  async closeSession(sessionId: string): Promise<void> {
    const entry = this.#entries.get(sessionId);
    if (!entry) return;
    this.#entries.delete(sessionId);
    await entry.client.close().catch(() => undefined);
  }

  /** Ends every kept agent process. */
  async close(): Promise<void> {
    await Promise.all([...this.#entries.keys()].map((id) => this.closeSession(id)));
  }

  get #cancelGraceMs(): number {
    return this.#options.cancelGraceMs ?? 5_000;
  }

  #launchConfig(cwd: string, delegation: DelegationContext): AcpAgentConfig {
    const config = this.#options.config;
    return {
      ...config,
      cwd: config.cwd ?? cwd,
      stderr: config.stderr ?? "ignore",
      env: { ...config.env, ...childDelegationEnv(delegation, this.#id) },
    };
  }

  async #runOnce(input: AcpAgentToolInput, ctx: ToolContext, cwd: string, delegation: DelegationContext, progress: DelegationProgress, rc: ResultContext): Promise<ToolResult> {
    const outer: OuterCall = { sessionId: ctx.sessionId, callId: ctx.callId };
    const policy = delegationPolicy(this.#options.permissions, this.#options.askOuter, this.name, () => outer);
    let client: AcpClient | undefined;
    let kill = false;
    try {
      client = await startAbortable(this.#launchConfig(cwd, delegation), policy, ctx.signal);
      if (!client) return failureResult(rc, progress, undefined, "outer_cancel");
      const session = await client.newSession({ cwd, signal: ctx.signal });
      progress.started({ pid: client.pid, sessionId: session.sessionId, cwd, resumed: false });
      const outcome = await runDelegatedTurn(session, progress, this.#turnSettings(input, ctx));
      kill = outcome.kind === "unresponsive";
      return delegationResult(rc, outcome, progress, session.sessionId);
    } catch (error) {
      return failureResult(rc, progress, error, ctx.signal.aborted ? "outer_cancel" : undefined);
    } finally {
      if (client) await (kill ? client.kill() : client.close()).catch(() => undefined);
    }
  }

  async #runPersistent(input: AcpAgentToolInput, ctx: ToolContext, cwd: string, delegation: DelegationContext, progress: DelegationProgress, rc: ResultContext): Promise<ToolResult> {
    const key = ctx.sessionId;
    return this.#exclusive(key, ctx.signal, async () => {
      let entry = this.#entries.get(key);
      let note: string | undefined;
      if (entry && !entry.dead && !leaderRunning(entry.client.pid)) entry.dead = true;
      if (entry && (input.fresh === true || entry.dead)) {
        if (entry.dead) note = `(The previous ${this.name} process had ended; this task ran in a new session without its earlier context.)`;
        await this.closeSession(key);
        entry = undefined;
      }
      const resumed = entry !== undefined;
      try {
        entry ??= await this.#openEntry(key, cwd, delegation, ctx.signal);
        if (!entry) return failureResult(rc, progress, undefined, "outer_cancel");
      } catch (error) {
        return failureResult(rc, progress, error, ctx.signal.aborted ? "outer_cancel" : undefined);
      }
      progress.started({ pid: entry.client.pid, sessionId: entry.session.sessionId, cwd: entry.session.info.cwd, resumed });
      entry.current = { sessionId: ctx.sessionId, callId: ctx.callId };
      let outcome;
      try {
        outcome = await runDelegatedTurn(entry.session, progress, this.#turnSettings(input, ctx));
      } finally {
        entry.current = undefined;
      }
      const broken =
        outcome.kind === "unresponsive" ||
        entry.dead ||
        (outcome.kind === "failed" && (outcome.error instanceof AgentExitedError || outcome.error instanceof ClientClosedError));
      if (broken && this.#entries.get(key) === entry) {
        this.#entries.delete(key);
        await (outcome.kind === "unresponsive" ? entry.client.kill() : entry.client.close()).catch(() => undefined);
      }
      const result = delegationResult(rc, outcome, progress, entry.session.sessionId);
      return note ? { ...result, text: `${note}\n${result.text}` } : result;
    });
  }

  async #openEntry(key: string, cwd: string, delegation: DelegationContext, signal: AbortSignal): Promise<PersistentEntry | undefined> {
    const holder: { entry?: PersistentEntry } = {};
    const policy = delegationPolicy(this.#options.permissions, this.#options.askOuter, this.name, () => holder.entry?.current);
    const client = await startAbortable(this.#launchConfig(cwd, delegation), policy, signal);
    if (!client) return undefined;
    try {
      const session = await client.newSession({ cwd, signal });
      const entry: PersistentEntry = { client, session, current: undefined, dead: false };
      holder.entry = entry;
      client.onLifecycle((event) => {
        if (event.type === "agent_exited") entry.dead = true;
      });
      this.#entries.set(key, entry);
      return entry;
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
  }

  #turnSettings(input: AcpAgentToolInput, ctx: ToolContext): Parameters<typeof runDelegatedTurn>[2] {
    return { task: input.task, outerSignal: ctx.signal, timeoutMs: this.#options.timeoutMs, cancelGraceMs: this.#cancelGraceMs };
  }

  /** One call at a time per outer session; a call cancelled while waiting returns at once. */
  async #exclusive(key: string, signal: AbortSignal, run: () => Promise<ToolResult>): Promise<ToolResult> {
    const previous = this.#locks.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const chained = previous.then(() => mine);
    this.#locks.set(key, chained);
    try {
      if ((await raceAbort(previous, signal)).aborted) {
        return { text: `The ${this.name} task was cancelled before it started.`, isError: true, data: { delegate: this.name, stopReason: null } };
      }
      return await run();
    } finally {
      release();
      if (this.#locks.get(key) === chained) this.#locks.delete(key);
    }
  }
}

function usageNote(persistent: boolean): string {
  const memory = persistent
    ? "It keeps its session across calls in this conversation, so it remembers earlier tasks; pass fresh: true to start over."
    : "Each call starts a fresh agent that has not seen this conversation.";
  return (
    `This tool hands the task to a separate ACP coding agent. ${memory} Give a complete, self-contained task. ` +
    "It returns the agent's answer followed by a summary of its tool calls and the files it changed."
  );
}

/** Whether the agent process itself still runs (a zombie does not); its exit event may not have arrived yet. */
function leaderRunning(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  const state = proc.state(pid);
  return state === undefined ? processGroupAlive(pid) : state === "running";
}

/** Starts the client unless `signal` aborts first; a client that arrives after the abort is closed. */
async function startAbortable(config: AcpAgentConfig, policy: ClientPermissionPolicy, signal: AbortSignal): Promise<AcpClient | undefined> {
  if (signal.aborted) return undefined;
  const starting = AcpClient.start(config, policy);
  if (!(await raceAbort(starting, signal)).aborted) return starting;
  void starting.then(
    (client) => client.close(),
    () => undefined,
  );
  return undefined;
}

