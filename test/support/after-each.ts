import { afterEach } from "vitest";

// A module-level `afterEach` in a shared helper registers only for the first test file of a
// worker that keeps its module cache (both projects: isolate: false). Helpers register their
// cleanup here once; test/support/per-file-setup.ts (a setup file, run for every test file)
// runs them all after each test.
const hooks = new Set<() => Promise<void> | void>();

export function afterEachTest(hook: () => Promise<void> | void): void {
  hooks.add(hook);
}

/** Every registered cleanup, each even when an earlier one failed; the first failure is rethrown. */
async function runAfterEachHooks(): Promise<void> {
  const failures: unknown[] = [];
  for (const hook of hooks) {
    try {
      await hook();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw failures[0];
}

export function registerAfterEachHooks(): void {
  afterEach(runAfterEachHooks);
}
