import { spawn } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "../acp/client/helpers.js";

const bin = join(repoRoot, "bin/agentkit-acp.js");

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `agentkit-acp prompt ARGS` to completion (no stdin, no colours) and collects its output. */
export function runPrompt(args: readonly string[], cwd: string): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, "prompt", ...args], { cwd, env: { ...process.env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
