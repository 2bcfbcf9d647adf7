import { defineConfig } from "vitest/config";

// Two projects, each runnable alone (`npx vitest run --project unit`):
//   unit  in-process tests (real files, local processes, loopback mock servers), in one module
//         cache per worker (isolate: false; they keep no global state and register hooks only
//         in the test files themselves): half the run time, mostly imports;
//   e2e   tests that need the built package in dist/ (the spawned CLI, agents and fixtures):
//         `*.e2e.test.ts`, and the conformance suite.
const e2e = ["test/**/*.e2e.test.ts", "test/testing/conformance/**/*.test.ts"];

export default defineConfig({
  test: {
    // Once per run, for both projects: state dir, PostgreSQL run dir, dist/ (transpiled, no type check).
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // A busy 2-core machine: bounded parallelism keeps process-heavy tests deterministic.
    maxWorkers: 2,
    projects: [
      { test: { name: "unit", include: ["test/**/*.test.ts"], exclude: e2e, testTimeout: 30_000, hookTimeout: 30_000, pool: "forks", isolate: false } },
      { test: { name: "e2e", include: e2e, testTimeout: 30_000, hookTimeout: 30_000, pool: "forks" } },
    ],
  },
});
