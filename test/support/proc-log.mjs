// AGENTKIT_TEST_PROC_LOG=FILE (measurement only; vitest.config.ts preloads this into every node
// process the run starts, through NODE_OPTIONS=--import): one JSON line per node process at start
// (the test file that started it, from AGENTKIT_TEST_FILE, and its first arguments) and one at exit
// (its CPU). A process that is SIGKILLed logs only its start. Summary per file and kind:
// `node test/support/proc-log-summary.mjs FILE`.
import { appendFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const log = process.env.AGENTKIT_TEST_PROC_LOG;
if (log) {
  const root = fileURLToPath(new URL("../../", import.meta.url));
  const argv = process.argv.slice(1, 3).map((a) => a.replace(root, "").replace(/\/tmp\/\S+/, "TMP").slice(0, 80));
  const write = (record) => {
    try {
      appendFileSync(log, `${JSON.stringify(record)}\n`);
    } catch {
      // measurement only
    }
  };
  write({ pid: process.pid, file: process.env.AGENTKIT_TEST_FILE ?? "", argv });
  process.on("exit", () => {
    const u = process.resourceUsage();
    write({ pid: process.pid, exit: true, cpuMs: Math.round((u.userCPUTime + u.systemCPUTime) / 1000) });
  });
}
