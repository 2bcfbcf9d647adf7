import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * `serve` and the stores persist by default: tests (and the processes they spawn, which
 * inherit the env) write to a throwaway state dir, never the user's.
 */
export default function setup(): () => void {
  const stateDir = mkdtempSync(join(tmpdir(), "agentkit-test-state-"));
  process.env.AGENTKIT_STATE_DIR = stateDir;
  return () => rmSync(stateDir, { recursive: true, force: true });
}
