import { runCli, runCliProcess, type CliRun } from "../support/cli.js";

export type { CliRun };

/** Runs `agentkit-acp prompt ARGS` in-process to completion (empty stdin, no colours) and collects its output. */
export function runPrompt(args: readonly string[], cwd: string): Promise<CliRun> {
  return runCli(["prompt", ...args], { cwd });
}

/** The same as the real bin, for what only a process shows (its whole stderr, e.g. an agent's inherited under --raw). */
export function runPromptProcess(args: readonly string[], cwd: string): Promise<CliRun> {
  return runCliProcess(["prompt", ...args], { cwd });
}
