import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

const STATE_DIR_ENV = "AGENTKIT_STATE_DIR";

/**
 * Where sessions and approval memory live: `$AGENTKIT_STATE_DIR`, else
 * `$XDG_STATE_HOME/agentkit-acp`, else `~/.local/state/agentkit-acp`. A relative
 * `XDG_STATE_HOME` is ignored, as the XDG spec requires.
 */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  const explicit = env[STATE_DIR_ENV];
  if (explicit !== undefined && explicit.length > 0) return resolve(explicit);
  const xdg = env.XDG_STATE_HOME;
  if (xdg !== undefined && xdg.length > 0 && isAbsolute(xdg)) return join(xdg, "agentkit-acp");
  return join(home, ".local", "state", "agentkit-acp");
}
