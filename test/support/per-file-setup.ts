import { appendFileSync } from "node:fs";
import { afterAll, expect } from "vitest";
import { proc } from "../../src/core/process/proc.js";
import { registerAfterEachHooks } from "./after-each.js";
import { removeFileTempDirs } from "./temp.js";

// Runs before every test file (both projects): the helpers' cleanups after each test, and the
// file's scratch directories after the file (registered first, so they run after its own hooks).
afterAll(removeFileTempDirs);
registerAfterEachHooks();

// AGENTKIT_TEST_CPU_LOG=FILE: one JSON line per test file with its wall time and CPU time, from
// before its imports to after its last hook: this worker's own CPU plus that of the processes it
// started and reaped (cutime/cstime; a daemon such as PostgreSQL's server is not counted). Wall
// times swing with the machine's load; CPU times much less, so they compare runs on a shared machine.
const cpuLog = process.env.AGENTKIT_TEST_CPU_LOG;
// AGENTKIT_TEST_PROC_LOG (vitest.config.ts): the processes this file starts name it.
if (process.env.AGENTKIT_TEST_PROC_LOG) process.env.AGENTKIT_TEST_FILE = expect.getState().testPath ?? "";
if (cpuLog) {
  const cpu = (): number => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000 + (proc.reapedChildrenCpuMs() ?? 0);
  };
  const startCpu = cpu();
  const startWall = performance.now();
  const file = expect.getState().testPath ?? "?";
  afterAll(() => {
    appendFileSync(cpuLog, `${JSON.stringify({ file, wallMs: Math.round(performance.now() - startWall), cpuMs: Math.round(cpu() - startCpu) })}\n`);
  });
}
