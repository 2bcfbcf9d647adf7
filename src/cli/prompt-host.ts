import type { AcpAgentConfig, ClientPermissionPolicy } from "../acp/client/index.js";
import { UsageError, type PromptArgs } from "./prompt-args.js";

/**
 * The place where `prompt`'s host-service flags become client config: `--add-dir DIR`
 * (repeatable) adds session roots; `--fs off|read|read-write` and `--terminal on|off` are
 * parsed but wired by the host-services work (their hosts take `policy.hostAuthorizer()`).
 */
export function hostOptionsFromArgs(args: PromptArgs, _policy: ClientPermissionPolicy): Pick<AcpAgentConfig, "additionalDirectories" | "hostServices"> {
  const dirs = args.extra.get("--add-dir") ?? [];
  for (const flag of ["--fs", "--terminal"]) {
    const values = args.extra.get(flag);
    if (values && values.some((v) => v !== "off")) throw new UsageError(`${flag} is not available in this build yet`);
  }
  return dirs.length > 0 ? { additionalDirectories: dirs.map((d) => (d.startsWith("/") ? d : `${args.cwd}/${d}`)) } : {};
}
