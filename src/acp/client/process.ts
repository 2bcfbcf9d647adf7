import type { ChildProcess } from "node:child_process";
import * as acp from "@agentclientprotocol/sdk/unstable";
import type { Logger } from "../../core/logger.js";
import { describeCommand, type AcpAgentConfig, type ResolvedTimeouts } from "./config.js";
import type { AgentEndpoint, AgentEndpoints, ExitInfo } from "./endpoint.js";
import { AgentExitedError, AgentSpawnError } from "./errors.js";
import { pullStream } from "./pull-stream.js";
import { resolveLaunch, settledWithin as within, signalProcessGroup, spawnProcessGroup, terminateProcessGroup, untrackProcessGroup } from "../../core/process/index.js";

/** A client's local agents: a process per connection; recovery (opt-in) respawns it, once per end. */
export function processEndpoints(config: AcpAgentConfig, timeouts: ResolvedTimeouts, logger: Logger): AgentEndpoints {
  const recovery = config.recovery;
  return {
    open: () => new AgentProcess(config, timeouts, logger),
    recovery: {
      limit: recovery?.enabled === true ? (recovery.maxRestarts ?? 3) : 0,
      reattachForMs: 0,
      next: (connect) => connect(),
    },
  };
}

/**
 * One spawned ACP agent in its own process group, with an ndjson stream over its stdio.
 * The host never crashes on EPIPE; `close()` ends stdin, waits, then SIGTERM and SIGKILL
 * the whole group (so `npx` / shell wrappers leave no orphans).
 */
export class AgentProcess implements AgentEndpoint {
  readonly stream: acp.Stream;
  readonly command: string;
  readonly #child: ChildProcess;
  readonly #logger: Logger;
  readonly #timeouts: ResolvedTimeouts;
  readonly #tail: string[] = [];
  readonly #tailMax: number;
  #partialLine = "";
  #spawnError: unknown;
  #exit: ExitInfo | undefined;
  #closing = false;
  #closePromise: Promise<ExitInfo> | undefined;
  readonly #exited: Promise<ExitInfo>;
  readonly #leaderExited: Promise<void>;
  #observe: AcpAgentConfig["wireObserver"];

  constructor(config: AcpAgentConfig, timeouts: ResolvedTimeouts, logger: Logger) {
    this.command = describeCommand(config);
    this.#logger = logger;
    this.#timeouts = timeouts;
    this.#tailMax = Math.max(1, config.stderrTailLines ?? 40);
    const env = { ...(config.inheritEnv === false ? {} : process.env), ...(config.env ?? {}) };
    const { file, args, windowsVerbatimArguments } = resolveLaunch(config.shellLine !== undefined ? { shellLine: config.shellLine } : { command: config.command ?? "", args: config.args ?? [] }, { env });
    // Env values can hold secrets: log only the command and the names of extra variables.
    logger.debug("spawning ACP agent", { command: this.command, cwd: config.cwd, extraEnv: Object.keys(config.env ?? {}) });
    const box = config.sandbox;
    const writable = [config.cwd, ...(config.additionalDirectories ?? []), ...(box?.writable ?? [])];
    const network = box?.network === undefined || box.network === "host" ? "host" : { allow: box.network };
    const boxed = box?.sandbox.wrap(file, args, { cwd: config.cwd, writable, readOnly: box.readOnly ?? [], network, bounds: false, ...(box.home !== undefined ? { home: box.home } : {}) });
    this.#child = spawnProcessGroup(boxed?.file ?? file, boxed?.args ?? args, { cwd: config.cwd, env, stdio: ["pipe", "pipe", "pipe"], windowsVerbatimArguments });
    const child = this.#child;

    // EPIPE / ECONNRESET on a dead child must never become an uncaught exception.
    child.stdin?.on("error", (e) => logger.debug("agent stdin error", { error: String(e) }));
    child.stdout?.on("error", (e) => logger.debug("agent stdout error", { error: String(e) }));
    child.stderr?.on("error", (e) => logger.debug("agent stderr error", { error: String(e) }));
    child.on("error", (e) => {
      if (child.pid === undefined) this.#spawnError = e;
      logger.debug("agent process error", { error: String(e) });
    });
    this.#handleStderr(config);

    this.#leaderExited = new Promise((resolve) => child.once("exit", () => resolve()));
    this.#exited = new Promise((resolve) => {
      child.once("close", (code: number | null, signal: NodeJS.Signals | null) => {
        this.#flushPartialLine(config);
        this.#exit = { code, signal };
        boxed?.finish("", { code, signal }); // closes the sandbox's network proxy
        if (child.pid !== undefined) untrackProcessGroup(child.pid);
        resolve(this.#exit);
      });
    });
    // Unexpected death: reap whatever the agent left behind in its group.
    void this.#leaderExited.then(() => {
      if (!this.#closing) void this.#reapGroup();
    });
    this.#observe = config.wireObserver;
    this.stream = acp.ndJsonStream(this.#writable(), this.#readable());
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Set once the process has exited and its stdio is closed. */
  get exitInfo(): ExitInfo | undefined {
    return this.#exit;
  }

  get exited(): Promise<ExitInfo> {
    return this.#exited;
  }

  get closing(): boolean {
    return this.#closing;
  }

  stderrTail(): string[] {
    return [...this.#tail];
  }

  /** A process's end is its exit: the connection's reason adds nothing. */
  noteFailure(): void {}

  /** The SDK reports a dead peer as a plain "ACP connection closed": say why it closed. */
  explain(error: unknown, method: string): unknown {
    return this.#exit ? this.exitError(`during ${method}`) : error;
  }

  reportLost(logger: Logger): void {
    logger.warn("the ACP agent exited unexpectedly", { exitCode: this.#exit?.code, signal: this.#exit?.signal });
  }

  /** The typed error describing this process's end (spawn failure or exit). */
  exitError(detail?: string): AgentSpawnError | AgentExitedError {
    if (this.#spawnError !== undefined) return new AgentSpawnError(this.command, this.#spawnError);
    return new AgentExitedError(this.#exit?.code ?? null, this.#exit?.signal ?? null, this.stderrTail(), detail);
  }

  /** Graceful shutdown: stdin EOF → wait → SIGTERM group → wait → SIGKILL group. Idempotent. */
  close(): Promise<ExitInfo> {
    this.#closePromise ??= this.#shutdown();
    return this.#closePromise;
  }

  /** Immediate SIGKILL of the whole group (e.g. a second Ctrl-C). */
  kill(): Promise<ExitInfo> {
    this.#closing = true;
    const pid = this.#child.pid;
    if (pid !== undefined) signalProcessGroup(pid, "SIGKILL", this.#child);
    return this.#exited;
  }

  async #shutdown(): Promise<ExitInfo> {
    this.#closing = true;
    this.#child.stdin?.end();
    const pid = this.#child.pid;
    if (pid === undefined) return this.#exited;
    const leaderGone = await within(this.#leaderExited, this.#timeouts.exitGraceMs);
    if (!leaderGone) {
      this.#logger.debug("agent did not exit on stdin EOF; sending SIGTERM to its process group", { pid });
      signalProcessGroup(pid, "SIGTERM", this.#child);
      if (!(await within(this.#leaderExited, this.#timeouts.termGraceMs))) signalProcessGroup(pid, "SIGKILL", this.#child);
    }
    await this.#reapGroup();
    // A survivor outside the group may still hold our pipes open: stop waiting for it.
    if (!(await within(this.#exited, this.#timeouts.termGraceMs))) {
      this.#child.stdout?.destroy();
      this.#child.stderr?.destroy();
    }
    return this.#exited;
  }

  /** After the leader is gone, end any survivors of its group (wrapped agents, grandchildren). */
  async #reapGroup(): Promise<void> {
    const pid = this.#child.pid;
    if (pid !== undefined) await terminateProcessGroup(pid, this.#timeouts.termGraceMs);
  }

  #readable(): ReadableStream<Uint8Array> {
    // Pull-based so that the stream only ends after every byte the agent wrote was read.
    const stream = pullStream();
    this.#child.stdout?.on("data", (chunk: Buffer) => {
      const bytes = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      this.#observe?.("agent", bytes);
      stream.push(bytes);
    });
    void this.#exited.then(() => stream.end());
    return stream.readable;
  }

  #writable(): WritableStream<Uint8Array> {
    const stdin = this.#child.stdin;
    return new WritableStream<Uint8Array>({
      write: (chunk) =>
        new Promise<void>((resolve) => {
          // A message to a dead agent is dropped: pending calls settle via the exit path.
          if (!stdin || stdin.destroyed || stdin.writableEnded || this.#exit) return resolve();
          this.#observe?.("client", chunk);
          stdin.write(chunk, (error) => {
            if (error) void this.#stdinClosed(error);
            resolve();
          });
        }),
    });
  }

  /**
   * EPIPE: the agent can no longer hear us. End it, so pending calls settle. An agent that is
   * exiting anyway (a command not found, a crash at start) closed its stdin first: its exit is
   * the report, so the warning is only for one still running.
   */
  async #stdinClosed(error: Error): Promise<void> {
    const exiting = await within(this.#exited, 500);
    if (!exiting && this.#spawnError === undefined) this.#logger.warn("the agent stopped reading its stdin; ending it", { error: String(error) });
    await this.close();
  }

  #handleStderr(config: AcpAgentConfig): void {
    const mode = config.stderr ?? "inherit";
    this.#child.stderr?.on("data", (chunk: Buffer) => {
      if (mode === "inherit") process.stderr.write(chunk);
      const text = this.#partialLine + chunk.toString("utf8");
      const lines = text.split("\n");
      this.#partialLine = lines.pop() ?? "";
      for (const line of lines) this.#stderrLine(line.replace(/\r$/, ""), config);
    });
  }

  #flushPartialLine(config: AcpAgentConfig): void {
    if (this.#partialLine !== "") this.#stderrLine(this.#partialLine, config);
    this.#partialLine = "";
  }

  #stderrLine(line: string, config: AcpAgentConfig): void {
    this.#tail.push(line);
    if (this.#tail.length > this.#tailMax) this.#tail.shift();
    const mode = config.stderr ?? "inherit";
    if (mode === "log") this.#logger.info(`agent stderr: ${line}`);
    else if (typeof mode === "function") mode(line);
  }
}

