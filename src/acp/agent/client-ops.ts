import type { CreateTerminalRequest, TerminalExitStatus, TerminalOutputResponse, WaitForTerminalExitResponse } from "@agentclientprotocol/sdk";
import { RequestError, methods } from "@agentclientprotocol/sdk";
import type { Logger } from "../../core/index.js";
import { errorMessage, silentLogger } from "../../core/index.js";
import type { CommandRequest, CommandResult, CommandRunner, FileOperations } from "../../tools/index.js";
import { LocalFileOperations } from "../../tools/index.js";
import type { AcpClientHandle } from "./client-handle.js";

/**
 * File operations over the ACP client's `fs/read_text_file` / `fs/write_text_file` for one
 * session, so the agent reads unsaved editor buffers and the editor sees its writes. Reads and
 * writes go to the client only when it advertised them; the other direction stays local.
 * Path safety is not checked here: the built-in tools check paths before calling.
 */
export class ClientFileOperations implements FileOperations {
  readonly #client: AcpClientHandle;
  readonly #sessionId: string;
  readonly #local: FileOperations;

  constructor(client: AcpClientHandle, sessionId: string, local: FileOperations = new LocalFileOperations()) {
    this.#client = client;
    this.#sessionId = sessionId;
    this.#local = local;
  }

  /** True when at least one direction goes through the client. */
  get usesClient(): boolean {
    return this.#client.canReadFiles || this.#client.canWriteFiles;
  }

  async readTextFile(path: string, options: { line?: number; limit?: number; signal?: AbortSignal } = {}): Promise<string> {
    if (!this.#client.canReadFiles) return this.#local.readTextFile(path, options);
    try {
      const params = { sessionId: this.#sessionId, path, ...(options.line !== undefined ? { line: options.line } : {}), ...(options.limit !== undefined ? { limit: options.limit } : {}) };
      const response = await this.#client.readTextFile(params, options.signal);
      return response.content;
    } catch (error) {
      throw clientFsError("read", path, error);
    }
  }

  async writeTextFile(path: string, content: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    if (!this.#client.canWriteFiles) return this.#local.writeTextFile(path, content, options);
    try {
      await this.#client.writeTextFile({ sessionId: this.#sessionId, path, content }, options.signal);
    } catch (error) {
      throw clientFsError("write", path, error);
    }
  }
}

/** A not-found answer keeps the `ENOENT` code the tools look for; anything else says the editor refused. */
function clientFsError(op: "read" | "write", path: string, error: unknown): Error {
  if (error instanceof RequestError && isNotFoundAnswer(error)) {
    return Object.assign(new Error(`file not found: ${path}`, { cause: error }), { code: "ENOENT" });
  }
  if (error instanceof RequestError) return new Error(`the editor refused to ${op} ${path}: ${error.message}`, { cause: error });
  return error instanceof Error ? error : new Error(errorMessage(error));
}

function isNotFoundAnswer(error: RequestError): boolean {
  if (error.code === -32002) return true;
  const reason = (error.data as { reason?: unknown } | undefined)?.reason;
  return reason === "not_found" || /\b(ENOENT|no such file|not found)\b/i.test(error.message);
}

export interface ClientTerminalCommandRunnerOptions {
  /**
   * Send `shell -c line` (command + args) instead of the bare command line. By default the
   * line goes as `command` without `args`, which clients (Zed, kimi-cli's convention, our
   * terminal host) run through a shell — and their command-prefix rules then see the real command.
   */
  shell?: string;
  /**
   * Poll `terminal/output` this often while the command runs and pass new output to
   * `onOutput` (progress for loop observers). Off by default: the editor already shows the
   * embedded terminal live, and each poll copies the whole output.
   */
  outputPollMs?: number;
  /** Bound on each client answer after a cancel or timeout (kill, exit status, output) and on release (default 10 000 ms). */
  killWaitMs?: number;
  logger?: Logger;
}

/**
 * Runs the shell tool's commands in the ACP client's terminals for one session:
 * `terminal/create` (the command line, the cwd, the byte limit) → `terminal/wait_for_exit`
 * raced with the abort signal and the timeout (then `terminal/kill`) → `terminal/output` →
 * `terminal/release`, always. `onTerminal` reports the id so the tool call embeds the terminal.
 */
export class ClientTerminalCommandRunner implements CommandRunner {
  readonly #client: AcpClientHandle;
  readonly #sessionId: string;
  readonly #shell: string | undefined;
  readonly #pollMs: number | undefined;
  readonly #killWaitMs: number;
  readonly #logger: Logger;

  constructor(client: AcpClientHandle, sessionId: string, options: ClientTerminalCommandRunnerOptions = {}) {
    this.#client = client;
    this.#sessionId = sessionId;
    this.#shell = options.shell;
    this.#pollMs = options.outputPollMs;
    this.#killWaitMs = options.killWaitMs ?? 10_000;
    this.#logger = options.logger ?? silentLogger;
  }

  async run(request: CommandRequest): Promise<CommandResult> {
    const started = performance.now();
    const notRun = (): CommandResult => ({ output: "", truncated: false, exitCode: null, signal: null, timedOut: false, cancelled: true, durationMs: Math.round(performance.now() - started) });
    if (request.signal.aborted) return notRun();
    const params: CreateTerminalRequest = {
      sessionId: this.#sessionId,
      ...(this.#shell === undefined ? { command: request.command } : { command: this.#shell, args: ["-c", request.command] }),
      cwd: request.cwd,
      env: Object.entries(request.env ?? {}).map(([name, value]) => ({ name, value })),
      outputByteLimit: request.outputByteLimit,
    };
    const created = this.#client.context.request(methods.client.terminal.create, params);
    const aborted = abortPromise(request.signal);
    try {
      const first = await Promise.race([created.then((r) => ({ terminalId: r.terminalId })), aborted.promise.then(() => undefined)]);
      if (first === undefined) {
        // Cancelled while the client was creating it: release it once it exists.
        created.then((r) => this.#release(r.terminalId), () => undefined).catch(() => undefined);
        return notRun();
      }
      const { terminalId } = first;
      try {
        request.onTerminal?.(terminalId);
        return await this.#follow(terminalId, request, aborted.promise, started);
      } finally {
        await this.#release(terminalId);
      }
    } finally {
      aborted.dispose();
    }
  }

  async #follow(terminalId: string, request: CommandRequest, aborted: Promise<void>, started: number): Promise<CommandResult> {
    const ids = { sessionId: this.#sessionId, terminalId };
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), Math.min(Math.max(0, request.timeoutMs), maxTimerMs));
    });
    const poller = this.#pollMs !== undefined && request.onOutput ? this.#startPolling(terminalId, this.#pollMs, request.onOutput) : undefined;
    const exited: Promise<WaitForTerminalExitResponse> = this.#client.context.request(methods.client.terminal.waitForExit, ids);
    try {
      const outcome = await Promise.race([exited.then((status) => ({ status })), aborted.then(() => "abort" as const), timedOut]);
      let status: TerminalExitStatus | undefined;
      let output: TerminalOutputResponse | undefined;
      if (typeof outcome === "object") {
        status = outcome.status;
        poller?.stop();
        output = await this.#client.context.request(methods.client.terminal.output, ids);
      } else {
        // Cancel or timeout: every answer from here on is bounded, so a stuck client cannot hold the turn.
        exited.catch(() => undefined);
        const killed = this.#client.context.request(methods.client.terminal.kill, ids);
        await this.#bounded(killed, "terminal/kill");
        status = await this.#bounded(exited, "terminal/wait_for_exit");
        poller?.stop();
        output = await this.#bounded(this.#client.context.request(methods.client.terminal.output, ids), "terminal/output");
      }
      output ??= { output: "", truncated: false };
      if (poller) poller.flush(output.output);
      const exit = output.exitStatus ?? status;
      return {
        output: output.output,
        truncated: output.truncated,
        exitCode: exit?.exitCode ?? null,
        signal: exit?.signal ?? null,
        timedOut: outcome === "timeout",
        cancelled: outcome === "abort",
        durationMs: Math.round(performance.now() - started),
        terminalId,
      };
    } finally {
      clearTimeout(timer);
      poller?.stop();
    }
  }

  /** Emits output that is new since the last poll; after truncation moved the window it resyncs without repeating. */
  #startPolling(terminalId: string, everyMs: number, onOutput: (chunk: string) => void): { stop(): void; flush(latest: string): void } {
    let seen = "";
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    const emit = (latest: string): void => {
      if (latest.startsWith(seen)) {
        if (latest.length > seen.length) onOutput(latest.slice(seen.length));
      }
      seen = latest;
    };
    const tick = (): void => {
      this.#client.context
        .request(methods.client.terminal.output, { sessionId: this.#sessionId, terminalId })
        .then((r) => {
          if (!stopped) emit(r.output);
        })
        .catch(() => undefined)
        .finally(() => {
          if (!stopped) timer = setTimeout(tick, everyMs);
        });
    };
    timer = setTimeout(tick, everyMs);
    return {
      stop: () => {
        stopped = true;
        clearTimeout(timer);
      },
      flush: emit,
    };
  }

  async #release(terminalId: string): Promise<void> {
    await this.#bounded(this.#client.context.request(methods.client.terminal.release, { sessionId: this.#sessionId, terminalId }), "terminal/release");
  }

  /** The answer, or undefined when it fails or does not come within `killWaitMs` (logged). */
  async #bounded<T>(request: Promise<T>, what: string): Promise<T | undefined> {
    const late = Symbol("late");
    try {
      const answer = await Promise.race([request, delay(this.#killWaitMs).then(() => late)]);
      if (answer === late) {
        request.catch(() => undefined);
        this.#logger.warn(`${what}: no answer from the client within ${this.#killWaitMs} ms; going on`);
        return undefined;
      }
      return answer as T;
    } catch (error) {
      this.#logger.debug(`${what} failed`, { error: errorMessage(error) });
      return undefined;
    }
  }
}

/** setTimeout fires at once for delays beyond a signed 32-bit int. */
const maxTimerMs = 2_147_483_647;

function abortPromise(signal: AbortSignal): { promise: Promise<void>; dispose(): void } {
  let onAbort: (() => void) | undefined;
  const promise = new Promise<void>((resolve) => {
    onAbort = () => resolve();
    signal.addEventListener("abort", onAbort, { once: true });
  });
  return { promise, dispose: () => onAbort && signal.removeEventListener("abort", onAbort) };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

export interface ClientOperationsChoice {
  files?: ClientFileOperations;
  commands?: ClientTerminalCommandRunner;
}

/**
 * The client-backed operations for a session, for what the client advertised: file
 * operations when it offers fs read or write, a terminal runner when it offers terminals.
 * Wire them with `Agent.builder().fileOperations(...)` / `.commandRunner(...)`.
 */
export function clientOperations(client: AcpClientHandle, sessionId: string, options: ClientTerminalCommandRunnerOptions = {}): ClientOperationsChoice {
  const choice: ClientOperationsChoice = {};
  if (client.canReadFiles || client.canWriteFiles) choice.files = new ClientFileOperations(client, sessionId);
  if (client.hasTerminal) choice.commands = new ClientTerminalCommandRunner(client, sessionId, options);
  return choice;
}
