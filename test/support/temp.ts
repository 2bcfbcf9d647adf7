import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onTestFinished } from "vitest";

// The suite's one way to get a scratch directory. Made inside a test (or its beforeEach), it is
// removed when that test has finished — after the afterEach hooks, which end the processes that
// may still write in it; made outside a test (module level, beforeAll), when the file has
// finished (test/support/per-file-setup.ts). Before this, several helpers never removed theirs:
// one full run left ~150 directories in /tmp.
const fileScoped: string[] = [];

/** A new directory under the OS temp dir, by its real path (macOS's /var is /private/var). */
export function tempDir(prefix = "agentkit-test-"): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const remove = (): void => rmSync(dir, { recursive: true, force: true });
  try {
    onTestFinished(remove);
  } catch {
    fileScoped.push(dir); // "can only be called inside a test": the file owns it
  }
  return dir;
}

/** Removes the directories made outside a test; called once per test file. */
export function removeFileTempDirs(): void {
  for (const dir of fileScoped.splice(0)) rmSync(dir, { recursive: true, force: true });
}
