import type { CreateTerminalRequest, TerminalExitStatus, TerminalOutputResponse, WaitForTerminalExitResponse } from "@agentclientprotocol/sdk";
import { RequestError, methods } from "@agentclientprotocol/sdk/unstable";
import type { Logger } from "../../core/index.js";
import { errorMessage, formatMs, silentLogger } from "../../core/index.js";
import type { CommandRequest, CommandResult, CommandRunner, FileOperations } from "../../tools/index.js";
import { LocalFileOperations } from "../../tools/index.js";
import type { AcpClientHandle } from "./client-handle.js";
import { ClientRequestTimeoutError } from "./client-handle.js";

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
  if (error instanceof ClientRequestTimeoutError) return new Error(`${error.message} (${op} ${path}); the tool call failed, the turn goes on`, { cause: error });
  if (error instanceof RequestError) return new Error(`the editor refused to ${op} ${path}: ${error.message}`, { cause: error });
  return error instanceof Error ? error : new Error(errorMessage(error));
}

function isNotFoundAnswer(error: RequestError): boolean {
  if (error.code === -32002) return true;
  const reason = (error.data as { reason?: unknown } | undefined)?.reason;
  return reason === "not_found" || /\b(ENOENT|no such file|not found)\b/i.test(error.message);
}

/**
 * Options of `ClientTerminalCommandRunner` (and `clientOperations`): how a command line is sent to the client's
 * terminal.
 */
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
  /**
   * After a cancel or timeout: the bound on the kill and exit status together, and again on
   * the final output (default 1000 ms each), so a command's timeout holds within ~2 s however
   * slow the client is. Release is sent without waiting.
   */
  killWaitMs?: number;
  logger?: Logger;
}

/**
 * Runs the shell tool's commands in the ACP client's terminals for one session:
 * `terminal/create` (the command line, the cwd, the byte limit) → `terminal/wait_for_exit`
 * raced with the abort signal and the timeout (then `terminal/kill`) → `terminal/output` →
 * `terminal/release`, always. `onTerminal` reports the id so the tool call embeds the terminal.
 * Every wait on the client is bounded: creation by the command's timeout and the handle's
 * request bound, the rest as `killWaitMs` says.
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
    this.#killWaitMs = options.killWaitMs ?? 1_000;
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
    const deadline = Date.now() + Math.max(0, request.timeoutMs);
    // Bounded by the client request bound (then cancelled); the command's timeout may end the wait sooner.
    const created = this.#client.bounded(methods.client.terminal.create, (o) => this.#client.context.request(methods.client.terminal.create, params, o));
    created.catch(() => undefined);
    const aborted = abortPromise(request.signal);
    // Creation counts against the command's timeout and is bounded by the client request bound.
    const createBound = Math.min(Math.max(0, request.timeoutMs), this.#client.requestTimeoutMs);
    try {
      const first = await Promise.race([
        created.then((r) => ({ terminalId: r.terminalId }), (error: unknown) => ({ error })),
        aborted.promise.then(() => "abort" as const),
        delay(createBound).then(() => "late" as const),
      ]);
      if (typeof first === "string") {
        // Cancelled or late while the client was creating it: release it once it exists.
        created.then((r) => this.#releaseLater(r.terminalId), () => undefined).catch(() => undefined);
        if (first === "abort") return notRun();
        if (createBound >= request.timeoutMs) {
          return { ...notRun(), cancelled: false, timedOut: true, output: `(the editor did not start the terminal within the command's ${formatMs(request.timeoutMs)} timeout)` };
        }
        throw new ClientRequestTimeoutError(methods.client.terminal.create, createBound);
      }
      if ("error" in first) {
        if (request.signal.aborted) return notRun();
        throw first.error instanceof Error ? first.error : new Error(errorMessage(first.error));
      }
      const { terminalId } = first;
      let releaseWithin = this.#killWaitMs;
      try {
        request.onTerminal?.(terminalId);
        const followed = await this.#follow(terminalId, request, aborted.promise, deadline, started);
        releaseWithin = followed.releaseWithin;
        return followed.result;
      } finally {
        await this.#release(terminalId, releaseWithin);
      }
    } finally {
      aborted.dispose();
    }
  }

  /** The result, and how long the release may then take (what is left of the grace after a cancel or timeout). */
  async #follow(terminalId: string, request: CommandRequest, aborted: Promise<void>, deadline: number, started: number): Promise<{ result: CommandResult; releaseWithin: number }> {
    const ids = { sessionId: this.#sessionId, terminalId };
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), Math.min(Math.max(0, deadline - Date.now()), maxTimerMs));
    });
    const poller = this.#pollMs !== undefined && request.onOutput ? this.#startPolling(terminalId, this.#pollMs, request.onOutput) : undefined;
    // Aborted when we stop following: every request still unanswered is cancelled and settles.
    const gone = new AbortController();
    const cancel = { cancellationSignal: gone.signal, stopWaitingOnCancel: true } as const;
    const exited: Promise<WaitForTerminalExitResponse> = this.#client.context.request(methods.client.terminal.waitForExit, ids, cancel);
    exited.catch(() => undefined);
    try {
      const outcome = await Promise.race([exited.then((status) => ({ status })), aborted.then(() => "abort" as const), timedOut]);
      let status: TerminalExitStatus | undefined;
      let output: TerminalOutputResponse | undefined;
      let releaseWithin = this.#killWaitMs;
      if (typeof outcome === "object") {
        status = outcome.status;
        poller?.stop();
        output = await this.#bounded(this.#client.context.request(methods.client.terminal.output, ids, cancel), "terminal/output", this.#client.requestTimeoutMs);
      } else {
        // Cancel or timeout: kill + exit status share one short bound, output + release another,
        // so a stuck client cannot stretch the command's timeout by more than ~2 s.
        const grace = Date.now() + this.#killWaitMs;
        const killed = this.#client.context.request(methods.client.terminal.kill, ids, cancel);
        await this.#bounded(killed, "terminal/kill", grace - Date.now());
        status = await this.#bounded(exited, "terminal/wait_for_exit", grace - Date.now());
        poller?.stop();
        const second = Date.now() + this.#killWaitMs;
        output = await this.#bounded(this.#client.context.request(methods.client.terminal.output, ids, cancel), "terminal/output", this.#killWaitMs);
        releaseWithin = Math.max(MIN_RELEASE_WAIT_MS, second - Date.now());
      }
      output ??= { output: "", truncated: false };
      if (poller) poller.flush(output.output);
      const exit = output.exitStatus ?? status;
      const result: CommandResult = {
        output: output.output,
        truncated: output.truncated,
        exitCode: exit?.exitCode ?? null,
        signal: exit?.signal ?? null,
        timedOut: outcome === "timeout",
        cancelled: outcome === "abort",
        durationMs: Math.round(performance.now() - started),
        terminalId,
      };
      return { result, releaseWithin };
    } finally {
      clearTimeout(timer);
      poller?.stop();
      gone.abort();
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
      this.#client
        .bounded(methods.client.terminal.output, (o) => this.#client.context.request(methods.client.terminal.output, { sessionId: this.#sessionId, terminalId }, o))
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

  /** Waits at most `ms` for the answer (not cancelled: the client ends the command on release). */
  async #release(terminalId: string, ms: number): Promise<void> {
    await this.#bounded(this.#client.context.request(methods.client.terminal.release, { sessionId: this.#sessionId, terminalId }), "terminal/release", ms);
  }

  /** For a terminal we no longer follow (cancelled while being created): bounded, not awaited. */
  #releaseLater(terminalId: string): void {
    this.#client
      .bounded(methods.client.terminal.release, (o) => this.#client.context.request(methods.client.terminal.release, { sessionId: this.#sessionId, terminalId }, o))
      .catch((error: unknown) => this.#logger.warn(`terminal/release: ${errorMessage(error)}`));
  }

  /** The answer, or undefined when it fails or does not come within `ms` (logged). */
  async #bounded<T>(request: Promise<T>, what: string, ms: number): Promise<T | undefined> {
    const late = Symbol("late");
    try {
      const answer = await Promise.race([request, delay(Math.max(0, ms)).then(() => late)]);
      if (answer === late) {
        request.catch(() => undefined);
        this.#logger.warn(`${what}: no answer from the client within ${formatMs(Math.max(0, ms))}; going on`);
        return undefined;
      }
      return answer as T;
    } catch (error) {
      this.#logger.debug(`${what} failed`, { error: errorMessage(error) });
      return undefined;
    }
  }
}

/** A release always gets this long, even when the grace was used up. */
const MIN_RELEASE_WAIT_MS = 250;

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

/**
 * What `clientOperations` found the client offers: file operations, a terminal runner, both or neither (then use
 * local ones).
 */
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
