import { execFile } from "node:child_process";
import { tmpdir } from "node:os";
import { SandboxUnavailableError, type CommandSandbox } from "./sandbox.js";

/** How long the probe may take: an engine that hangs is as unusable as one that fails. */
const PROBE_TIMEOUT_MS = 10_000;

/**
 * Runs one empty command in `sandbox` (`sh -c exit`, no bounds, no network): an engine that is
 * installed but cannot work here fails now, naming why, instead of on every command later. The
 * usual cause is unprivileged user namespaces being refused (Ubuntu 23.10+'s AppArmor
 * restriction, a container without them). Throws `SandboxUnavailableError` with the engine's own
 * error; commands are never run unsandboxed instead. Returns `sandbox`.
 */
export async function verifySandbox(sandbox: CommandSandbox): Promise<CommandSandbox> {
  const cwd = tmpdir();
  const command = sandbox.wrap("/bin/sh", ["-c", "exit 0"], { cwd, writable: [], bounds: false, network: "off" });
  const failure = await new Promise<string | undefined>((resolve) => {
    execFile(command.file, command.args, { cwd, timeout: PROBE_TIMEOUT_MS, killSignal: "SIGKILL", maxBuffer: 64 * 1024 }, (error, _stdout, stderr) => {
      if (!error) return resolve(undefined);
      const said = stderr.trim().split("\n").slice(-3).join(" / ").slice(0, 500);
      const how = error.killed ? `no answer within ${PROBE_TIMEOUT_MS / 1000} s` : `exit ${String(error.code ?? error.signal)}`;
      resolve(said ? `${how}: ${said}` : how);
    });
  });
  command.finish("", { code: failure ? 1 : 0, signal: null });
  if (failure === undefined) return sandbox;
  const hint =
    sandbox.engine === "bubblewrap"
      ? "unprivileged user namespaces are probably refused (Ubuntu 23.10+: sysctl kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap; a container: allow user namespaces)"
      : "sandbox-exec refused the profile";
  throw new SandboxUnavailableError(`the sandbox (${sandbox.engine}) is installed but cannot run a command here (${failure}); ${hint}. Commands never run unsandboxed instead: fix that, or turn the sandbox off (serve --sandbox off; prompt without --sandbox)`);
}
