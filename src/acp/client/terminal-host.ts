import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { stat } from "node:fs/promises";
import type * as acp from "@agentclientprotocol/sdk/unstable";
import { RequestError } from "@agentclientprotocol/sdk/unstable";
import { errorMessage } from "../../core/errors.js";
import { silentLogger, type Logger } from "../../core/logger.js";
import {
  checkAuthorized,
  notifyObserver,
  refusal,
  refusalReason,
  sessionRoots,
  throwIfAborted,
  type HostAuditEvent,
  type HostAuthorize,
  type HostObserver,
  type HostRootsOption,
  shown,
} from "./host-common.js";
import { canonicalRoots, resolveInsideRoots } from "./host-paths.js";
import type { HostSessionInfo, TerminalHostService } from "./host-services.js";
import { settledWithin, spawnProcessGroup, terminateProcessGroup, untrackProcessGroup } from "../../core/process/group.js";
import type { SandboxPlacement } from "../../core/sandbox.js";
import { OutputBuffer } from "./terminal-output.js";

/** The shell, limits and sandbox of the terminal host service. */
export interface TerminalHostOptions {
  /** Roots a terminal's cwd may be in, added to the session's cwd + additionalDirectories. */
  roots?: HostRootsOption;
  replaceSessionRoots?: boolean;
  /** Unreleased terminals one session may hold (default 8). */
  maxTerminalsPerSession?: number;
  /** Unreleased terminals over all sessions (default 32). */
  maxTerminals?: number;
  /** Output kept when the agent gives no `outputByteLimit` (default 1 MiB). */
  defaultOutputByteLimit?: number;
  /** Upper bound on an agent's `outputByteLimit` (default 16 MiB); larger requests are clamped. */
  maxOutputByteLimit?: number;
  /** Environment the request's `env` is merged over (default `process.env`). */
  baseEnv?: Record<string, string | undefined>;
  /** Shell for a command given without args (default `/bin/sh`, run as `sh -c command`). */
  shell?: string;
  /** Run every terminal's command in this OS sandbox, able to write only `writable` (no network, bounds). */
  sandbox?: SandboxPlacement;
  /** Time between SIGTERM and SIGKILL to the process group (default 2000 ms). */
  killGraceMs?: number;
  /** After the command exits, how long to wait for output still in its pipes (default 500 ms). */
  drainMs?: number;
  authorize?: HostAuthorize;
  onRequest?: HostObserver;
  logger?: Logger;
}

type ExitStatus = { exitCode: number | null; signal: string | null };

interface Terminal {
  id: string;
  sessionId: string;
  child: ChildProcess;
  pgid: number;
  output: OutputBuffer;
  exit: ExitStatus | undefined;
  exited: Promise<ExitStatus>;
  /** Settles when release starts (wakes waiters of a released terminal). */
  released: AbortController;
  ending: Promise<void> | undefined;
}

/** The host's `terminal/*` service: each terminal a process group, output bounded, ended on release. */
export function createTerminalHost(options: TerminalHostOptions = {}): TerminalHost {
  return new TerminalHost(options);
}

/** Terminals the client runs for the agent (`terminal/*`), each command in its own process group. */
export class TerminalHost implements TerminalHostService {
  private readonly terminals = new Map<string, Terminal>();
  private readonly logger: Logger;
  private disposed = false;

  constructor(private readonly options: TerminalHostOptions = {}) {
    this.logger = options.logger ?? silentLogger;
  }

  /** Unreleased terminals (of one session, or all). */
  count(sessionId?: string): number {
    let n = 0;
    for (const t of this.terminals.values()) if (sessionId === undefined || t.sessionId === sessionId) n++;
    return n;
  }

  async create(params: acp.CreateTerminalRequest, session: HostSessionInfo, signal: AbortSignal): Promise<acp.CreateTerminalResponse> {
    const args = params.args ?? [];
    const event: HostAuditEvent = { kind: "terminal_create", sessionId: session.sessionId, command: params.command, args, verdict: "allowed" };
    return this.observed(event, async () => {
      const what = "terminal/create";
      if (this.disposed) throw refusal("disposed", `${what}: the terminal host has been shut down`);
      checkSession(params.sessionId, session, what);
      checkCommand(params, args, what);
      const roots = await canonicalRoots(await sessionRoots(session, this.options.roots, this.options.replaceSessionRoots ?? false));
      const requestedCwd = params.cwd ?? session.cwd;
      event.path = requestedCwd;
      const cwd = await resolveCwd(requestedCwd, roots, what);
      event.resolvedPath = cwd;
      await checkAuthorized(this.options.authorize, { kind: "terminal", sessionId: session.sessionId, command: params.command, args, cwd, roots }, what);
      throwIfAborted(signal);
      if (this.disposed) throw refusal("disposed", `${what}: the terminal host has been shut down`);
      this.checkCaps(session.sessionId, what);
      const terminal = this.spawn(params, args, cwd, session.sessionId);
      event.terminalId = terminal.id;
      await this.started(terminal, what);
      return { terminalId: terminal.id };
    });
  }

  async output(params: acp.TerminalOutputRequest, session: HostSessionInfo): Promise<acp.TerminalOutputResponse> {
    return this.observed(this.event("terminal_output", params, session), () => {
      const terminal = this.lookup(params, session, "terminal/output");
      const response: acp.TerminalOutputResponse = { output: terminal.output.text(terminal.exit !== undefined), truncated: terminal.output.truncated };
      if (terminal.exit) response.exitStatus = { ...terminal.exit };
      return Promise.resolve(response);
    });
  }

  async waitForExit(params: acp.WaitForTerminalExitRequest, session: HostSessionInfo, signal: AbortSignal): Promise<acp.WaitForTerminalExitResponse> {
    return this.observed(this.event("terminal_wait", params, session), async () => {
      const terminal = this.lookup(params, session, "terminal/wait_for_exit");
      if (terminal.exit) return { ...terminal.exit };
      throwIfAborted(signal);
      return { ...(await exitOrStop(terminal, signal, params.terminalId)) };
    });
  }

  async kill(params: acp.KillTerminalRequest, session: HostSessionInfo): Promise<acp.KillTerminalResponse> {
    return this.observed(this.event("terminal_kill", params, session), async () => {
      const terminal = this.lookup(params, session, "terminal/kill");
      await this.end(terminal);
      return {};
    });
  }

  async release(params: acp.ReleaseTerminalRequest, session: HostSessionInfo): Promise<acp.ReleaseTerminalResponse> {
    return this.observed(this.event("terminal_release", params, session), async () => {
      const terminal = this.lookup(params, session, "terminal/release");
      await this.releaseTerminal(terminal);
      return {};
    });
  }

  async releaseSession(sessionId: string): Promise<void> {
    const mine = [...this.terminals.values()].filter((t) => t.sessionId === sessionId);
    await Promise.all(mine.map((t) => this.releaseTerminal(t)));
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await Promise.all([...this.terminals.values()].map((t) => this.releaseTerminal(t)));
  }

  private spawn(params: acp.CreateTerminalRequest, args: string[], cwd: string, sessionId: string): Terminal {
    const env: Record<string, string | undefined> = { ...(this.options.baseEnv ?? process.env) };
    for (const variable of params.env ?? []) env[variable.name] = variable.value;
    // With args, run the program directly (no shell parsing); a bare command line goes through sh -c.
    const [file, argv] = args.length > 0 ? [params.command, args] : [this.options.shell ?? "/bin/sh", ["-c", params.command]];
    // Tracked at once: the command runs before the "spawn" event arrives.
    const boxed = this.options.sandbox?.sandbox.wrap(file, argv, { cwd, writable: this.options.sandbox.writable });
    const child = spawnProcessGroup(boxed?.file ?? file, boxed?.args ?? argv, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    if (boxed) child.once("close", (code, signal) => void boxed.finish("", { code, signal }));
    const output = new OutputBuffer(this.outputLimit(params.outputByteLimit));
    const terminal: Terminal = {
      id: `term_${randomUUID()}`,
      sessionId,
      child,
      pgid: child.pid ?? -1,
      output,
      exit: undefined,
      exited: watchExit(child, this.options.drainMs ?? 500),
      released: new AbortController(),
      ending: undefined,
    };
    child.stdout?.on("data", (chunk: Buffer) => output.append(chunk));
    child.stderr?.on("data", (chunk: Buffer) => output.append(chunk));
    void terminal.exited.then((status) => {
      terminal.exit = status;
      const exit: HostAuditEvent = { kind: "terminal_exit", sessionId, terminalId: terminal.id, command: params.command, args, path: cwd, verdict: "allowed", exitCode: status.exitCode ?? null, signal: status.signal ?? null };
      notifyObserver(this.options.onRequest, exit, this.logger);
    });
    this.terminals.set(terminal.id, terminal);
    return terminal;
  }

  /** Resolves once the process is running; a spawn failure (e.g. no such program) becomes a clear error. */
  private async started(terminal: Terminal, what: string): Promise<void> {
    const { child } = terminal;
    const failure = await new Promise<Error | undefined>((resolve) => {
      child.once("spawn", () => resolve(undefined));
      child.once("error", (error) => resolve(error));
    });
    child.on("error", (error) => this.logger.debug("terminal process error", { terminalId: terminal.id, error: errorMessage(error) }));
    if (failure) {
      this.terminals.delete(terminal.id);
      untrackProcessGroup(terminal.pgid);
      throw refusal("spawn_failed", `${what}: could not start ${shown(terminal.child.spawnfile)}: ${errorMessage(failure)}`);
    }
    terminal.pgid = child.pid ?? -1;
  }

  /** Kills the whole group (also leftovers of a command that already exited); the terminal stays readable. */
  private end(terminal: Terminal): Promise<void> {
    terminal.ending ??= (async () => {
      const grace = this.options.killGraceMs ?? 2000;
      await terminateProcessGroup(terminal.pgid, { graceMs: grace, leader: terminal.child });
      // The group is gone; let Node report the leader's exit so output() shows the exit status.
      await settledWithin(terminal.exited, grace + (this.options.drainMs ?? 500) + 2000);
    })().finally(() => {
      terminal.ending = undefined;
    });
    return terminal.ending;
  }

  private async releaseTerminal(terminal: Terminal): Promise<void> {
    if (!this.terminals.delete(terminal.id)) return;
    terminal.released.abort();
    try {
      await this.end(terminal);
    } finally {
      untrackProcessGroup(terminal.pgid);
      terminal.output.clear();
      terminal.child.stdout?.destroy();
      terminal.child.stderr?.destroy();
    }
  }

  private lookup(params: { sessionId: string; terminalId: string }, session: HostSessionInfo, what: string): Terminal {
    checkSession(params.sessionId, session, what);
    const terminal = this.terminals.get(params.terminalId);
    // Another session's terminal looks exactly like an unknown one.
    if (!terminal || terminal.sessionId !== session.sessionId) throw unknownTerminal(params.terminalId, what, "is not a live terminal of this session");
    return terminal;
  }

  private checkCaps(sessionId: string, what: string): void {
    const perSession = this.options.maxTerminalsPerSession ?? 8;
    const overall = this.options.maxTerminals ?? 32;
    if (this.count(sessionId) >= perSession) {
      throw refusal("limit_reached", `${what}: this session already has ${perSession} terminals (the limit); release one first`, { limit: perSession });
    }
    if (this.count() >= overall) {
      throw refusal("limit_reached", `${what}: the client already runs ${overall} terminals (the limit); release one first`, { limit: overall });
    }
  }

  private outputLimit(requested: number | null | undefined): number {
    const max = this.options.maxOutputByteLimit ?? 16 * 1024 * 1024;
    const wanted = requested ?? this.options.defaultOutputByteLimit ?? 1024 * 1024;
    return Math.max(0, Math.min(Math.floor(wanted), max));
  }

  private event(kind: HostAuditEvent["kind"], params: { terminalId: string }, session: HostSessionInfo): HostAuditEvent {
    return { kind, sessionId: session.sessionId, terminalId: params.terminalId, verdict: "allowed" };
  }

  private async observed<T>(event: HostAuditEvent, run: () => Promise<T>): Promise<T> {
    try {
      const result = await run();
      notifyObserver(this.options.onRequest, event, this.logger);
      return result;
    } catch (error) {
      const reason = refusalReason(error);
      const refused = reason !== "error" && reason !== "cancelled";
      notifyObserver(this.options.onRequest, { ...event, verdict: refused ? "refused" : "failed", reason, message: errorMessage(error) }, this.logger);
      throw error;
    }
  }
}

/** Exit status once the command has exited and its output drained (bounded: a background child may hold the pipes). */
function watchExit(child: ChildProcess, drainMs: number): Promise<ExitStatus> {
  return new Promise<ExitStatus>((resolve) => {
    let status: ExitStatus | undefined;
    let openStreams = 2;
    let timer: NodeJS.Timeout | undefined;
    const finish = (): void => {
      if (!status) return;
      clearTimeout(timer);
      resolve(status);
    };
    const streamClosed = (): void => {
      openStreams -= 1;
      if (openStreams === 0) finish();
    };
    child.stdout?.once("close", streamClosed);
    child.stderr?.once("close", streamClosed);
    child.once("exit", (code, sig) => {
      status = { exitCode: code, signal: sig };
      if (openStreams === 0) finish();
      else timer = setTimeout(finish, drainMs);
    });
  });
}

function checkSession(requested: string, session: HostSessionInfo, what: string): void {
  if (requested !== session.sessionId) throw refusal("invalid_argument", `${what}: sessionId "${requested}" does not match this session`);
}

function checkCommand(params: acp.CreateTerminalRequest, args: string[], what: string): void {
  if (typeof params.command !== "string" || params.command.trim() === "") throw refusal("invalid_argument", `${what}: command is empty`);
  if ([params.command, ...args].some((a) => a.includes("\0"))) throw refusal("invalid_argument", `${what}: command or args contain a NUL byte`);
  for (const variable of params.env ?? []) {
    if (variable.name === "" || /[=\0]/.test(variable.name) || variable.value.includes("\0")) {
      throw refusal("invalid_argument", `${what}: invalid environment variable name or value "${variable.name}"`);
    }
  }
  const limit = params.outputByteLimit;
  if (limit !== undefined && limit !== null && (!Number.isFinite(limit) || limit < 0)) {
    throw refusal("invalid_argument", `${what}: outputByteLimit must be a non-negative number`);
  }
}

async function resolveCwd(cwd: string, roots: string[], what: string): Promise<string> {
  const target = await resolveInsideRoots(cwd, roots, `${what} cwd`, "directory");
  if (target.missing.length > 0) throw refusal("not_a_directory", `${what}: cwd ${shown(cwd)} does not exist`, { path: cwd });
  if (!(await stat(target.resolved)).isDirectory()) throw refusal("not_a_directory", `${what}: cwd ${shown(cwd)} is not a directory`, { path: cwd });
  return target.resolved;
}

/** The exit status, unless the request is cancelled or the terminal released first. */
async function exitOrStop(terminal: Terminal, signal: AbortSignal, terminalId: string): Promise<ExitStatus> {
  const stop = AbortSignal.any([signal, terminal.released.signal]);
  let onStop: (() => void) | undefined;
  try {
    return await new Promise<ExitStatus>((resolve, reject) => {
      onStop = () =>
        reject(
          signal.aborted
            ? RequestError.requestCancelled(undefined, "terminal/wait_for_exit was cancelled")
            : unknownTerminal(terminalId, "terminal/wait_for_exit", "was released while waiting"),
        );
      if (stop.aborted) onStop();
      else stop.addEventListener("abort", onStop, { once: true });
      terminal.exited.then(resolve, reject);
    });
  } finally {
    if (onStop) stop.removeEventListener("abort", onStop);
  }
}

function unknownTerminal(terminalId: string, what: string, why: string): RequestError {
  return refusal("unknown_terminal", `${what}: terminal ${shown(terminalId)} ${why} (released, never created, or another session's)`, { terminalId });
}

/**
 * Wraps a terminal host so each terminal's last output is kept in `outputs` when it is
 * released (agents release before their tool call completes; a UI may still want it).
 */
export function keepReleasedOutput(host: TerminalHostService, outputs: Map<string, string>): TerminalHostService {
  return {
    create: (params, session, signal) => host.create(params, session, signal),
    output: (params, session) => host.output(params, session),
    waitForExit: (params, session, signal) => host.waitForExit(params, session, signal),
    kill: (params, session) => host.kill(params, session),
    async release(params, session) {
      const last = await host.output(params, session).catch(() => undefined);
      if (last) outputs.set(params.terminalId, last.output);
      return host.release(params, session);
    },
    releaseSession: (sessionId) => host.releaseSession(sessionId),
    dispose: () => host.dispose(),
  };
}
