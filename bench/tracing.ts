/**
 * Tracing overhead: the same N-delta prompt turn through `agentkit-acp serve` built from another
 * checkout (BASE, e.g. the commit before tracing), this build with tracing off, and this build
 * with tracing on (OTLP/HTTP JSON to a loopback sink that accepts and discards), and — when a
 * PREVIOUS checkout is given (e.g. the build before a tracing change) — that build with tracing
 * on too. Interleaved runs; wall time per turn and the serve process's CPU time (user + system,
 * all threads, from /proc: on a loaded machine wall time is mostly waiting) per turn; plus
 * start-up (spawn → initialize answered) for each.
 *
 * Run: npx tsx bench/tracing.ts BASE_CHECKOUT [N=2000] [runs=15] [PREVIOUS_CHECKOUT]
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { median, startStdioAgent } from "./support.js";

const base = process.argv[2];
if (!base) throw new Error("usage: npx tsx bench/tracing.ts BASE_CHECKOUT [N] [runs]");
const count = Number(process.argv[3] ?? "2000");
const runs = Number(process.argv[4] ?? "15");
const previous = process.argv[5];
const root = fileURLToPath(new URL("..", import.meta.url));

function startAgent(label: string, bin: string, args: string[], env: NodeJS.ProcessEnv, cwd: string) {
  return startStdioAgent({ label, command: [bin, "serve", ...args], cwd, env, count });
}

const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0);

const sink = createServer((request, response) => {
  request.resume();
  request.on("end", () => response.writeHead(200, { "content-type": "application/json" }).end("{}"));
});
sink.listen(0, "127.0.0.1");
await new Promise((resolve) => sink.once("listening", resolve));
const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;

const work = mkdtempSync(join(tmpdir(), "agentkit-bench-tracing-"));
try {
  const scriptPath = join(work, "deltas.json");
  writeFileSync(scriptPath, JSON.stringify({ steps: [{ deltas: count, text: "tok " }] }));
  const args = ["--model", `scripted:${scriptPath}`, "--log-level", "warn", "--no-persist"];
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith("OTEL_")) delete env[key];
  const on = { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" };
  const agents = [
    await startAgent("base (before tracing)", join(base, "bin/agentkit-acp.js"), args, env, work),
    await startAgent("this build, tracing off", join(root, "bin/agentkit-acp.js"), args, env, work),
    await startAgent("this build, tracing on", join(root, "bin/agentkit-acp.js"), args, on, work),
    ...(previous ? [await startAgent("previous build, tracing on", join(previous, "bin/agentkit-acp.js"), args, on, work)] : []),
    // The SDK and its context manager loaded, but no span sampled: what the context manager alone costs.
    await startAgent("on, sampler always_off", join(root, "bin/agentkit-acp.js"), args, { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl, OTEL_TRACES_SAMPLER: "always_off" }, work),
  ];
  try {
    for (const agent of agents) await agent.run(); // warm-up
    const results = agents.map(() => ({ seconds: [] as number[], cpu: [] as number[] }));
    for (let i = 0; i < runs; i++) {
      for (const [j, agent] of agents.entries()) {
        const r = await agent.run();
        results[j]!.seconds.push(r.seconds);
        results[j]!.cpu.push(r.cpuMs);
      }
    }
    const lines = [`N = ${count} text deltas per prompt, ${runs} interleaved runs after a warm-up (Node ${process.version})`];
    const baseCpu = sum(results[0]!.cpu) / runs;
    for (const [j, agent] of agents.entries()) {
      const r = results[j]!;
      const cpu = sum(r.cpu) / runs;
      lines.push(
        `${agent.label.padEnd(26)} ${Math.round(count / median(r.seconds)).toLocaleString("en-US").padStart(8)} deltas/s (median)   CPU ${cpu.toFixed(1).padStart(6)} ms/turn (mean, ${j === 0 ? "  base" : `${cpu >= baseCpu ? "+" : "-"}${(Math.abs(cpu / baseCpu - 1) * 100).toFixed(1)} %`})   start-up ${agent.startup.ms.toFixed(0)} ms wall, ${agent.startup.cpuMs.toFixed(0)} ms CPU`,
      );
    }
    process.stdout.write(`${lines.join("\n")}\n`);
  } finally {
    for (const agent of agents) await agent.stop();
  }
} finally {
  sink.close();
  rmSync(work, { recursive: true, force: true });
}
