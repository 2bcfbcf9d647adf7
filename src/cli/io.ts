/**
 * Where a CLI command reads its input, writes its output and finds its environment. The bin
 * passes the process's own (`processIo`); a program or test can run a command in-process with
 * its own streams. Only a command that owns the process installs signal handlers, reroutes
 * `console`, starts the orphan watchdog or calls `process.exit`.
 */
export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
  ownsProcess: boolean;
}

export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd(), ownsProcess: true };
}

/** The environment to give an agent on top of this process's: `extra`, and all of `io.env` when it is not the process's own. */
export function agentEnvFor(io: CliIo, extra?: Record<string, string>): Record<string, string> | undefined {
  if (io.env === process.env) return extra;
  const own = Object.fromEntries(Object.entries(io.env).filter((e): e is [string, string] => e[1] !== undefined));
  return { ...own, ...extra };
}
