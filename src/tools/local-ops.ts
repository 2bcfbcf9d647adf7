import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { StringDecoder } from "node:string_decoder";
import type { CommandRequest, CommandResult, CommandRunner, FileOperations } from "./types.js";
import { sliceLines } from "./text-window.js";
import { spawnProcessGroup, terminateProcessGroup } from "../core/process/group.js";
import { refusals, type SandboxPlacement } from "../core/sandbox.js";

/**
 * Local file operations. No path checks here: tools check paths (resolveInsideRoots) before
 * calling, so these stay plain and interchangeable with an ACP client's fs/*.
 */
export class LocalFileOperations implements FileOperations {
  async readTextFile(file: string, options: { line?: number; limit?: number; signal?: AbortSignal } = {}): Promise<string> {
    const content = await readFile(file, { encoding: "utf8", signal: options.signal });
    return sliceLines(content, options.line, options.limit);
  }

  /** Creates missing parent directories, like an editor saving a new file. */
  async writeTextFile(file: string, content: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content, { encoding: "utf8", signal: options.signal });
  }
}

/** Options of `LocalCommandRunner`: the shell, the kill grace period and the optional command sandbox. */
export interface LocalCommandRunnerOptions {
  /** Shell used as `<shell> -c command`. Default `/bin/sh`. */
  shell?: string;
  /** Time between SIGTERM and SIGKILL to the process group. Default 1000 ms. */
  killGraceMs?: number;
  /** How long to wait for output to drain after the command ends or is killed. Default 100 ms. */
  drainMs?: number;
  /** The environment commands start from (then `request.env` over it). Default: this process's. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Run every command in this OS sandbox, able to write only `writable` (the session's roots). */
  sandbox?: SandboxPlacement;
}

/**
 * Runs commands with `/bin/sh -c` in their own process group. Timeout and cancellation kill
 * the whole group; when the shell exits, anything it left running in the background is
 * ended too, so no process outlives its command.
 */
export class LocalCommandRunner implements CommandRunner {
  readonly #shell: string;
  readonly #killGraceMs: number;
  readonly #drainMs: number;
  readonly #env: Readonly<Record<string, string | undefined>> | undefined;
  readonly #sandbox: LocalCommandRunnerOptions["sandbox"];

  constructor(options: LocalCommandRunnerOptions = {}) {
    this.#shell = options.shell ?? "/bin/sh";
    this.#killGraceMs = options.killGraceMs ?? 1000;
    this.#drainMs = options.drainMs ?? 100;
    this.#env = options.env;
    this.#sandbox = options.sandbox;
  }

  run(request: CommandRequest): Promise<CommandResult> {
    const started = performance.now();
    const output = new TailBuffer(request.outputByteLimit);
    if (request.signal.aborted) return Promise.resolve({ ...output.result(), exitCode: null, signal: null, timedOut: false, cancelled: true, durationMs: 0 });

    return new Promise<CommandResult>((resolve, reject) => {
      // Every exit path below ends in terminateProcessGroup, which untracks the group.
      const sandboxed = this.#sandbox?.sandbox.wrap(this.#shell, ["-c", request.command], { cwd: request.cwd, writable: this.#sandbox.writable, ...refusals(this.#sandbox) });
      const child = spawnProcessGroup(sandboxed?.file ?? this.#shell, sandboxed?.args ?? ["-c", request.command], {
        cwd: request.cwd,
        env: { ...(this.#env ?? process.env), ...request.env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let timedOut = false;
      let cancelled = false;
      let exit: { code: number | null; signal: string | null } | undefined;
      let settled = false;
      let drainTimer: NodeJS.Timeout | undefined;

      const onChunk = (decoder: StringDecoder) => (chunk: Buffer) => {
        const text = decoder.write(chunk);
        if (text.length === 0) return;
        output.append(text);
        request.onOutput?.(text);
      };
      const stdoutDecoder = new StringDecoder("utf8");
      const stderrDecoder = new StringDecoder("utf8");
      child.stdout?.on("data", onChunk(stdoutDecoder));
      child.stderr?.on("data", onChunk(stderrDecoder));

      const killGroup = (): void => {
        if (child.pid !== undefined) void terminateProcessGroup(child.pid, this.#killGraceMs);
      };
      const finish = (): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timeoutTimer);
        clearTimeout(drainTimer);
        request.signal.removeEventListener("abort", onAbort);
        for (const decoder of [stdoutDecoder, stderrDecoder]) {
          const rest = decoder.end();
          if (rest.length > 0) output.append(rest);
        }
        const durationMs = Math.round(performance.now() - started);
        const result: CommandResult = { ...output.result(), exitCode: exit?.code ?? null, signal: exit?.signal ?? null, timedOut, cancelled, durationMs };
        const notes = sandboxed?.finish(result.output, { code: result.exitCode, signal: result.signal });
        if (notes && notes.length > 0) result.notes = notes;
        resolve(result);
      };
      /** Resolve once the pipes close, or after a short drain even if a straggler holds them. */
      const finishSoon = (): void => {
        drainTimer ??= setTimeout(finish, this.#drainMs);
      };
      const onAbort = (): void => {
        if (exit === undefined && !timedOut) cancelled = true;
        killGroup();
        finishSoon();
      };

      const timeoutTimer = setTimeout(() => {
        timedOut = true;
        killGroup();
        finishSoon();
      }, Math.min(Math.max(0, request.timeoutMs), maxTimerMs));
      request.signal.addEventListener("abort", onAbort, { once: true });

      child.on("error", (error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timeoutTimer);
        request.signal.removeEventListener("abort", onAbort);
        sandboxed?.finish("", { code: null, signal: null });
        reject(new Error(`cannot run command in ${request.cwd}: ${error.message}`, { cause: error }));
      });
      child.on("exit", (code, signal) => {
        exit = { code, signal };
        // The shell is gone; end whatever it left running in its group (no orphans).
        killGroup();
        finishSoon();
      });
      child.on("close", finish);
    });
  }
}

/** setTimeout fires at once for delays beyond a signed 32-bit int; longer timeouts are capped (~24.8 days). */
const maxTimerMs = 2_147_483_647;

/** Keeps the last `limit` bytes of a text stream; cuts on a UTF-8 character boundary. */
class TailBuffer {
  readonly #limit: number;
  #chunks: Buffer[] = [];
  #kept = 0;
  #total = 0;

  constructor(limit: number) {
    this.#limit = Math.max(0, limit);
  }

  append(text: string): void {
    const bytes = Buffer.from(text, "utf8");
    this.#chunks.push(bytes);
    this.#kept += bytes.length;
    this.#total += bytes.length;
    // Drop whole chunks from the front while the rest still covers the limit.
    while (this.#chunks.length > 1 && this.#kept - (this.#chunks[0]?.length ?? 0) >= this.#limit) {
      this.#kept -= this.#chunks.shift()?.length ?? 0;
    }
  }

  result(): { output: string; truncated: boolean } {
    const all = Buffer.concat(this.#chunks);
    if (this.#total <= this.#limit) return { output: all.toString("utf8"), truncated: false };
    let start = all.length - this.#limit;
    // Skip UTF-8 continuation bytes (10xxxxxx) so the tail starts at a character.
    while (start < all.length && ((all[start] ?? 0) & 0xc0) === 0x80) start += 1;
    return { output: all.subarray(start).toString("utf8"), truncated: true };
  }
}
