import { defineConfig } from "vitest/config";

// Two projects, each runnable alone (`npx vitest run --project unit`):
//   unit  in-process tests (real files, local processes, loopback mock servers), in one module
//         cache per worker (isolate: false; they keep no global state and register hooks only
//         in the test files themselves): half the run time, mostly imports;
//   e2e   tests that need the built package in dist/ (the spawned CLI, agents and fixtures):
//         `*.e2e.test.ts`, and the conformance suite; also one module cache per worker
//         (measured on test/acp/agent's 27 files: 117 -> 95 CPU-seconds, the SDK and src are
//         no longer re-imported for every file).
const e2e = ["test/**/*.e2e.test.ts", "test/testing/conformance/**/*.test.ts"];
// Run for every test file, also with a shared module cache: the helpers' cleanups (test/support/after-each.ts).
const setupFiles = ["test/support/per-file-setup.ts"];
// The suite talks to nothing but loopback, over plain HTTP: a machine-wide extra CA bundle (this
// sandbox sets one for its outbound proxy) would only cost every Node process the suite starts
// about 50 ms of CPU to load it (measured: `node -e 0` 80 ms with it, 28 ms without). Dropped
// here, before the workers and everything they spawn inherit the environment.
delete process.env.NODE_EXTRA_CA_CERTS;
// AGENTKIT_TEST_PROC_LOG=FILE (measurement only): every node process the run starts logs its test
// file, arguments and CPU (test/support/proc-log.mjs; summary: test/support/proc-log-summary.mjs).
// A process that cannot read the preload (a sandboxed one) does not start: test/core/sandbox-bridge
// fails under it.
if (process.env.AGENTKIT_TEST_PROC_LOG) {
  const preload = new URL("test/support/proc-log.mjs", import.meta.url).pathname;
  process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ""} --import ${preload}`.trim();
}

export default defineConfig({
  test: {
    // Once per run, for both projects: state dir, PostgreSQL run dir, dist/ (transpiled, no type check).
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Bounded parallelism keeps process-heavy tests deterministic on a busy 2-core machine. Four
    // workers, not two: many e2e files mostly wait (lease expiries, start-up bounds, the processes
    // they start). The whole suite side by side under the bench lock: 4 workers 120 s (load
    // 3.4 → 4.8), 3 workers 131 s (load 0.1 → 3.0), the same ~166 CPU-seconds. Lower it with
    // --maxWorkers=2 on a slower machine.
    maxWorkers: 4,
    projects: [
      { test: { name: "unit", include: ["test/**/*.test.ts"], exclude: e2e, setupFiles, testTimeout: 30_000, hookTimeout: 30_000, pool: "forks", isolate: false } },
      { test: { name: "e2e", include: e2e, setupFiles, testTimeout: 30_000, hookTimeout: 30_000, pool: "forks", isolate: false } },
    ],
  },
});
