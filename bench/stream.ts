/**
 * Streaming throughput: N model text deltas from a scripted model through `agentkit-acp serve`
 * (loop → AcpIntegration → session/update over stdio) to an official SDK client, against a
 * bare agent written directly on the SDK that sends the same N updates (bench/bare-agent.mjs).
 * Both are spawned over stdio in the same run; only the prompt turn is timed (not start-up).
 *
 * Run: npx tsx bench/stream.ts [N=10000] [runs=5]
 *
 * `protocols` mode: the same N-delta turn through `serve --protocol v1` and `serve --protocol v2`,
 * each with an SDK client of its version, over stdio and Streamable HTTP (`--listen`), both reading
 * the same reply from one loopback mock model (openai-compatible provider): wall and serve's CPU
 * per turn, interleaved, and v2's ratio to v1 per transport (protocols.ts).
 *
 * Run: npm run build && npx tsx bench/stream.ts 2000 7 protocols [stdio,http]
 * (BENCH_CLIENT=raw: over stdio, a line client of the same cost for both versions instead of the SDK clients)
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { compareProtocols } from "./protocols.js";
import { median, startStdioAgent } from "./support.js";

const count = Number(process.argv[2] ?? "10000");
const runs = Number(process.argv[3] ?? "5");
const root = fileURLToPath(new URL("..", import.meta.url));
if (process.argv[4] === "protocols") {
  await compareProtocols(count, runs, (process.argv[5] ?? "stdio,http").split(",") as Array<"stdio" | "http">);
  process.exit(0);
}

/** A spawned agent (from the checkout's root) whose prompt turn is timed. */
async function startAgent(label: string, command: string[], cwd: string) {
  const agent = await startStdioAgent({ label, command, cwd, spawnCwd: root, count });
  return { run: async () => (await agent.run()).seconds, stop: () => agent.stop() };
}

const work = mkdtempSync(join(tmpdir(), "agentkit-bench-"));
try {
  const scriptPath = join(work, "deltas.json");
  writeFileSync(scriptPath, JSON.stringify({ steps: [{ deltas: count, text: "tok " }] }));
  const serve = await startAgent("serve", ["bin/agentkit-acp.js", "serve", "--model", `scripted:${scriptPath}`, "--log-level", "warn"], work);
  const bare = await startAgent("bare", ["bench/bare-agent.mjs", String(count), "tok "], work);
  try {
    await serve.run(); // warm-up
    await bare.run();
    // Interleaved, so load changes on a busy machine hit both sides alike.
    const serveTimes: number[] = [];
    const bareTimes: number[] = [];
    for (let i = 0; i < runs; i++) {
      serveTimes.push(await serve.run());
      bareTimes.push(await bare.run());
    }
    const serveRate = count / median(serveTimes);
    const bareRate = count / median(bareTimes);
    const ratios = serveTimes.map((t, i) => bareTimes[i]! / t);
    process.stdout.write(
      [
        `N = ${count} text deltas per prompt, ${runs} interleaved runs after a warm-up (Node ${process.version})`,
        `agentkit-acp serve (scripted model → loop → AcpIntegration → stdio): ${Math.round(serveRate).toLocaleString("en-US")} deltas/s (median)`,
        `bare SDK agent (same updates, no loop):                         ${Math.round(bareRate).toLocaleString("en-US")} deltas/s (median)`,
        `ratio serve / bare: ${(serveRate / bareRate).toFixed(2)} (per-run ratios ${ratios.map((r) => r.toFixed(2)).join(", ")})`,
        "",
      ].join("\n"),
    );
  } finally {
    await serve.stop();
    await bare.stop();
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
