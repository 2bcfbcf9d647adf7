/**
 * The client side: one prompt answered with N one-word updates by the bare SDK agent
 * (bench/bare-agent.mjs), printed to stdout by
 *   - raw-client (bench/raw-client.mjs): a client written directly on the official SDK,
 *   - AcpSession (bench/session-client.mjs): this package's event stream,
 *   - `agentkit-acp prompt` (text mode),
 * spawned afresh each run (start-up included), interleaved. Wall = spawn → exit; CPU = the
 * client process's own user + system time (the agent's is not counted).
 *
 * Run: npm run build && npx tsx bench/client.ts [N=20000] [runs=5]
 * BENCH_BASELINE=DIR adds the AcpSession and `prompt` rows of another built checkout (see
 * bench/agents.ts), interleaved.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { median } from "./support.js";

// Loopback only: a machine-wide extra CA bundle (this sandbox sets one) costs every Node start
// ~50 ms of CPU, the same for each side, and hides start-up differences; measured without it.
delete process.env.NODE_EXTRA_CA_CERTS;

const count = Number(process.argv[2] ?? "20000");
const runs = Number(process.argv[3] ?? "5");
const root = fileURLToPath(new URL("..", import.meta.url));
const agent = [process.execPath, join(root, "bench/bare-agent.mjs"), String(count), "word "];
const clients: Record<string, string[]> = {
  "raw SDK client": [join(root, "bench/raw-client.mjs"), "--", ...agent],
  "AcpSession.stream": [join(root, "bench/session-client.mjs"), "--", ...agent],
  "agentkit-acp prompt": [join(root, "bin/agentkit-acp.js"), "prompt", "--agent", agent.map((a) => JSON.stringify(a)).join(" "), "go"],
};
const baseline = process.env.BENCH_BASELINE;
if (baseline) {
  clients["AcpSession.stream (baseline)"] = [join(baseline, "bench/session-client.mjs"), "--", ...agent];
  clients["agentkit-acp prompt (baseline)"] = [join(baseline, "bin/agentkit-acp.js"), "prompt", "--agent", agent.map((a) => JSON.stringify(a)).join(" "), "go"];
}
const work = mkdtempSync(join(tmpdir(), "agentkit-client-bench-"));
const cpuFile = join(work, "cpu");
const expected = "word ".repeat(count);

async function measure(name: string, command: string[]): Promise<{ wall: number; cpu: number }> {
  writeFileSync(cpuFile, "");
  const started = performance.now();
  const child = spawn(process.execPath, ["--import", join(root, "bench/cpu-at-exit.mjs"), ...command], {
    cwd: work,
    env: { ...process.env, BENCH_CPU_FILE: cpuFile },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => (out += chunk));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  const wall = performance.now() - started;
  if (code !== 0 || !out.includes(expected)) throw new Error(`${name}: exit ${code}, ${out.length} characters of output`);
  // The first line is the client's own (its exit handler runs first; the agent is not preloaded).
  const cpu = Number(readFileSync(cpuFile, "utf8").split("\n")[0]) / 1000;
  return { wall, cpu };
}

try {
  const samples: Record<string, Array<{ wall: number; cpu: number }>> = Object.fromEntries(Object.keys(clients).map((n) => [n, []]));
  for (const [name, command] of Object.entries(clients)) await measure(name, command); // warm-up
  for (let i = 0; i < runs; i++) for (const [name, command] of Object.entries(clients)) samples[name]!.push(await measure(name, command));
  const rows = Object.entries(samples).map(([name, s]) => ({ name, wall: median(s.map((x) => x.wall)), cpu: median(s.map((x) => x.cpu)) }));
  const raw = rows[0]!;
  process.stdout.write(
    [
      `${count} one-word updates, median of ${runs} interleaved fresh processes (Node ${process.version}); start-up included`,
      "",
      "| client | wall | CPU | wall ratio | CPU ratio |",
      "|---|---|---|---|---|",
      ...rows.map((r) => `| ${r.name} | ${r.wall.toFixed(0)} ms | ${r.cpu.toFixed(0)} ms | ${(r.wall / raw.wall).toFixed(2)}× | ${(r.cpu / raw.cpu).toFixed(2)}× |`),
      "",
    ].join("\n"),
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
