import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { TEST_PG_RUN_DIR_ENV, stopSharedPostgres } from "./postgres.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const lock = `${root}/dist/.build-lock`;

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** One build at a time, even when several vitest runs start together. */
function withLock(fn: () => void): void {
  mkdirSync(`${root}/dist`, { recursive: true });
  for (let i = 0; ; i++) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 120_000) rmSync(lock, { recursive: true, force: true });
      sleep(200);
    }
  }
  try {
    fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

// Tests spawn the compiled CLI (dist/); an incremental build keeps it in step with src/.
// tsc emits even with type errors (the typecheck script reports those), so one area's
// unfinished types never block another area's tests.
export default function setup(): () => Promise<void> {
  // `serve` persists sessions and approvals by default: tests (and the serve processes they
  // spawn, which inherit the env) write to a throwaway state dir, never the user's.
  const stateDir = mkdtempSync(join(tmpdir(), "agentkit-test-state-"));
  process.env.AGENTKIT_STATE_DIR = stateDir;
  // The PostgreSQL tests start one shared cluster on first use (test/support/postgres.ts); it is stopped below.
  const pgRunDir = mkdtempSync(join(tmpdir(), "agentkit-test-pg-run-"));
  process.env[TEST_PG_RUN_DIR_ENV] = pgRunDir;
  withLock(() => {
    const r = spawnSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], {
      cwd: root,
      encoding: "utf8",
    });
    if (r.status !== 0) process.stderr.write(`[global-setup] tsc reported errors (build emitted anyway):\n${r.stdout.slice(0, 4000)}\n`);
    // The inspect page bundle (esbuild, ~0.1 s).
    const page = spawnSync(process.execPath, ["scripts/build-page.mjs"], { cwd: root, encoding: "utf8" });
    if (page.status !== 0) process.stderr.write(`[global-setup] the inspect page bundle failed:\n${page.stderr.slice(0, 4000)}\n`);
  });
  return async () => {
    rmSync(stateDir, { recursive: true, force: true });
    await stopSharedPostgres(pgRunDir);
  };
}
