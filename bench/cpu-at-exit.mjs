// Preloaded with `node --import` by bench/client.ts: appends this process's own CPU time
// (user + system, µs; children not included) to $BENCH_CPU_FILE at exit.
import { appendFileSync } from "node:fs";

process.on("exit", () => {
  const { user, system } = process.cpuUsage();
  if (process.env.BENCH_CPU_FILE) appendFileSync(process.env.BENCH_CPU_FILE, `${user + system}\n`);
});
