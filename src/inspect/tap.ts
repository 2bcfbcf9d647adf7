import type { Readable, Writable } from "node:stream";
import { resolveLaunch, settledWithin, spawnProcessGroup, terminateProcessGroup, untrackProcessGroup } from "../core/process/index.js";
import { LineSplitter } from "./lines.js";
import type { Direction } from "./types.js";

export interface TapLaunch {
  /** An executable and its arguments, or `shellLine` run by /bin/sh -c. */
  command?: string;
  args?: string[];
  shellLine?: string;
  cwd: string;
  env?: NodeJS.ProcessEnv;
}

export interface TapOptions extends TapLaunch {
  /** The editor's side: what it writes (our stdin) and where the agent's answers go (our stdout). */
  input: Readable;
  output: Writable;
  /** One call per whole line seen, after the line's bytes were forwarded (keep it cheap: it runs on the relay's thread). */
  onLine: (ts: number, from: Direction, line: string) => void;
  /** After the editor's EOF, how long the agent may take to exit before its group is ended (default 2 000 ms). */
  exitGraceMs?: number;
}

export interface TapEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the agent could not be started at all. */
  spawnError?: Error;
  /** Which side ended first. */
  endedBy: "client" | "agent";
}

export interface Tap {
  readonly pid: number | undefined;
  readonly done: Promise<TapEnd>;
  /** End the agent's process group now (e.g. on SIGINT/SIGTERM). */
  stop(): Promise<void>;
}

/**
 * A transparent relay: every byte from `input` goes to the agent's stdin and every byte of
 * its stdout to `output`, unchanged and in order (forwarded before it is looked at); whole
 * lines are reported to `onMessage`. The agent runs in its own process group, which is
 * ended when either side ends.
 */
export function startTap(options: TapOptions): Tap {
  const { file, args, windowsVerbatimArguments } = resolveLaunch(options.shellLine !== undefined ? { shellLine: options.shellLine } : { command: options.command ?? "", args: options.args ?? [] });
  const child = spawnProcessGroup(file, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ["pipe", "pipe", "inherit"], windowsVerbatimArguments });
  const pid = child.pid;
  let endedBy: TapEnd["endedBy"] | undefined;
  let spawnError: Error | undefined;
  const grace = options.exitGraceMs ?? 2_000;

  const report = (from: Direction) => new LineSplitter((line) => options.onLine(Date.now(), from, line));
  const fromClient = report("client");
  const fromAgent = report("agent");

  // Editor → agent.
  const onInput = (chunk: Buffer): void => {
    if (child.stdin && !child.stdin.destroyed && !child.stdin.write(chunk)) {
      options.input.pause();
      child.stdin.once("drain", () => options.input.resume());
    }
    fromClient.push(chunk);
  };
  options.input.on("data", onInput);
  options.input.once("end", () => {
    fromClient.end();
    endedBy ??= "client";
    child.stdin?.end();
    void settledWithin(exited, grace).then((gone) => {
      if (!gone && pid !== undefined) void terminateProcessGroup(pid, grace);
    });
  });
  child.stdin?.on("error", () => undefined); // EPIPE: the agent's end is reported by its exit

  // Agent → editor.
  child.stdout?.on("data", (chunk: Buffer) => {
    if (!options.output.write(chunk)) {
      child.stdout?.pause();
      options.output.once("drain", () => child.stdout?.resume());
    }
    fromAgent.push(chunk);
  });
  options.output.on("error", () => undefined); // the editor went away: its stdin end follows

  child.on("error", (e) => {
    if (child.pid === undefined) spawnError = e;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("close", (code, signal) => resolve({ code, signal }));
  });
  const done = exited.then(async ({ code, signal }) => {
    fromAgent.end();
    endedBy ??= "agent";
    options.input.off("data", onInput);
    options.input.pause();
    if (pid !== undefined) {
      await terminateProcessGroup(pid, grace); // survivors of the agent's group
      untrackProcessGroup(pid);
    }
    return { code, signal, endedBy: endedBy ?? "agent", ...(spawnError ? { spawnError } : {}) } satisfies TapEnd;
  });

  return {
    pid,
    done,
    async stop() {
      endedBy ??= "client";
      child.stdin?.end();
      if (pid !== undefined) await terminateProcessGroup(pid, grace);
      await settledWithin(done, grace * 2);
    },
  };
}
