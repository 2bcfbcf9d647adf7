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

/**
 * The environment an agent launched by the command gets: the process's plus `extra` for the
 * bin; for an in-process run exactly `io.env` plus `extra` (`inheritEnv: false`).
 */
export function agentEnvFor(io: CliIo, extra?: Record<string, string>): { env?: Record<string, string>; inheritEnv?: false } {
  if (io.env === process.env) return extra ? { env: extra } : {};
  const own = Object.fromEntries(Object.entries(io.env).filter((e): e is [string, string] => e[1] !== undefined));
  return { env: { ...own, ...extra }, inheritEnv: false };
}
