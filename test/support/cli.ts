import { spawn } from "node:child_process";
import { once } from "node:events";
import { PassThrough } from "node:stream";
import { main } from "../../src/cli/main.js";

export const cliBin = new URL("../../bin/agentkit-acp.js", import.meta.url).pathname;

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout's NDJSON lines (one JSON object each), parsed. */
  lines: Record<string, unknown>[];
}

export interface CliRunOptions {
  cwd: string;
  /** stdin's whole content (then EOF); empty by default. */
  input?: string;
  /** The command's whole environment, which its agents inherit (default: this process's); NO_COLOR is always set. */
  env?: NodeJS.ProcessEnv;
  /** Each NDJSON line as it arrives. */
  onLine?: (line: Record<string, unknown>) => void;
  /** stdout so far, after each chunk (text mode: wait for something to be shown). */
  onStdout?: (stdout: string) => void;
}

function collector(onLine?: (line: Record<string, unknown>) => void): { write(chunk: Buffer | string): void; lines: Record<string, unknown>[]; text(): string } {
  let all = "";
  let partial = "";
  const lines: Record<string, unknown>[] = [];
  return {
    lines,
    text: () => all,
    write(chunk) {
      all += chunk.toString();
      partial += chunk.toString();
      const parts = partial.split("\n");
      partial = parts.pop() ?? "";
      for (const part of parts) {
        if (!part.startsWith("{")) continue;
        let line: Record<string, unknown>;
        try {
          line = JSON.parse(part) as Record<string, unknown>;
        } catch {
          continue; // part of a multi-line document (check --json), not an NDJSON line
        }
        lines.push(line);
        onLine?.(line);
      }
    },
  };
}

/**
 * Runs `agentkit-acp ARGS` inside this test process (the CLI's own code, with in-memory
 * streams): argument handling, output and exit codes without a node start-up per run. The
 * agents it launches are still real processes. Process behaviour (signals, stdout purity,
 * exit) is tested with `runCliProcess`.
 */
export async function runCli(args: string[], options: CliRunOptions): Promise<CliRun> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const stdin = new PassThrough();
  const out = collector(options.onLine);
  let err = "";
  stdout.on("data", (chunk: Buffer) => {
    out.write(chunk);
    options.onStdout?.(out.text());
  });
  stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  stdin.end(options.input ?? "");
  const code = await main(args, { stdout, stderr, stdin, env: { ...(options.env ?? process.env), NO_COLOR: "1" }, cwd: options.cwd, ownsProcess: false });
  // Read everything written (the streams buffer); a write after the command returned is dropped, as it would be after an exit.
  for (const stream of [stdout, stderr]) stream.on("error", () => undefined).end();
  await Promise.all([once(stdout, "end"), once(stderr, "end")]);
  return { code, stdout: out.text(), stderr: err, lines: out.lines };
}

/** Runs the real bin as a child process; `onLine` also gets its pid (to signal it). */
export function runCliProcess(args: string[], options: Omit<CliRunOptions, "onLine"> & { onLine?: (line: Record<string, unknown>, pid: number) => void }): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliBin, ...args], { cwd: options.cwd, env: { ...(options.env ?? process.env), NO_COLOR: "1" }, stdio: ["pipe", "pipe", "pipe"] });
    const out = collector((line) => options.onLine?.(line, child.pid as number));
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => out.write(chunk));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout: out.text(), stderr, lines: out.lines }));
    child.stdin.end(options.input ?? "");
  });
}

/** A command running in this test process with live streams (`startCli`): `serve` in-process. */
export interface LiveCli {
  /** The command's stdin: write to it, `end()` it (for serve: the client went away). */
  readonly stdin: PassThrough;
  /** The command's stdout, unread: attach a reader (an SDK stream) or a listener. */
  readonly stdout: PassThrough;
  /** stderr so far. */
  stderr(): string;
  /** Calls `listener` with stderr so far after each chunk written to it. */
  onStderr(listener: (stderr: string) => void): void;
  /** The exit code, once the command returned. */
  readonly exited: Promise<number>;
}

/**
 * Starts `agentkit-acp ARGS` inside this test process with live stdin/stdout (no process
 * start-up): `serve` there speaks ACP on them until stdin ends. What is about the process itself
 * (signals, exit, stdout purity of the real bin, the orphan watchdog) needs the bin: spawn it.
 */
export function startCli(args: string[], options: Omit<CliRunOptions, "input" | "onLine" | "onStdout">): LiveCli {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderrStream = new PassThrough();
  let err = "";
  const listeners: Array<(stderr: string) => void> = [];
  stderrStream.on("data", (chunk: Buffer) => {
    err += chunk.toString();
    for (const listener of listeners) listener(err);
  });
  const exited = main(args, { stdout, stderr: stderrStream, stdin, env: { ...(options.env ?? process.env), NO_COLOR: "1" }, cwd: options.cwd, ownsProcess: false }).finally(async () => {
    stdout.end();
    stderrStream.end();
    await once(stderrStream, "end"); // read to its end: stderr() is complete once the command returned
  });
  return { stdin, stdout, stderr: () => err, onStderr: (listener) => void listeners.push(listener), exited };
}
