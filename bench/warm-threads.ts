/**
 * Where a prompt's CPU goes, thread by thread: the main thread (JavaScript, I/O) against V8's
 * worker threads (optimising compilation, concurrent GC). `serve` (openai-compatible) and its
 * floor (bench/bare-openai.mjs, sending the history too) each run PROMPTS 2000-delta prompts in
 * one process, fresh processes interleaved; per prompt it prints the median CPU of each.
 * The warm prompt (p2) of serve spent most of its excess over the floor in the compiler threads:
 * `node --no-concurrent-recompilation` moves that work to the main thread (try it with FLAGS).
 *
 * Run: npm run build && npx tsx bench/warm-threads.ts [runs=5]
 * BENCH_BASELINE=DIR adds another built checkout's serve as a row; PROMPTS=N (default 3);
 * PROVIDER=openai|anthropic (default openai-compatible) and its floor's wire format;
 * Also the CPU from spawn to session/new answered (start-up).
 * FLAGS="--no-concurrent-recompilation" passes node flags to every agent; SERVE_FLAGS="A|B" adds a
 * serve row per variant (node flags, space-separated) beside the plain one, in the same run.
 * Every serve row has a code cache of its own (V8 refuses a cache made under other V8 flags: its
 * flag hash), written by an uncounted warm-up run (run -1) of each agent.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { clientOn, median, providerAgents, startMockModel } from "./support.js";

delete process.env.NODE_EXTRA_CA_CERTS; // as bench/agents.ts: each start would pay for it
const runs = Number(process.argv[2] ?? "5");
const prompts = Number(process.env.PROMPTS ?? "3");
const flags = process.env.FLAGS ? process.env.FLAGS.split(" ") : [];
const root = fileURLToPath(new URL("..", import.meta.url));
const model = await startMockModel(2000);
const work = mkdtempSync(join(tmpdir(), "agentkit-threads-"));
const env = { ...process.env, AGENTKIT_STATE_DIR: join(work, "state"), OPENAI_API_KEY: "test", ANTHROPIC_API_KEY: "test" };
const provider = process.env.PROVIDER ?? "openai-compatible";
const agents = providerAgents(root, model.baseUrl, provider);
for (const variant of (process.env.SERVE_FLAGS ?? "").split("|").filter(Boolean)) agents[`serve ${variant}`] = [...variant.split(" "), ...(agents.serve ?? [])];
const rowEnv = (name: string): NodeJS.ProcessEnv => (name.startsWith("serve") ? { ...env, NODE_COMPILE_CACHE: join(work, "code-cache", name.replace(/[^a-z0-9-]+/g, "_")) } : env);

/** CPU ms per thread: "main", and V8's workers summed under "workers". */
function threadCpu(pid: number): { main: number; workers: number } {
  const cpu = { main: 0, workers: 0 };
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const ms = Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]) / 1e6;
      if (task === String(pid)) cpu.main += ms;
      else cpu.workers += ms;
    } catch {
      // the thread ended meanwhile
    }
  }
  return cpu;
}

const samples: Record<string, Array<{ main: number; workers: number }>> = {};
try {
  for (let run = -1; run < runs; run++) {
    for (const [name, command] of Object.entries(agents)) {
      const child = spawn(process.execPath, [...flags, ...command], { env: rowEnv(name), stdio: ["pipe", "pipe", "inherit"] });
      const { client, exited } = clientOn(child);
      try {
        await client.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
        const { sessionId } = await client.agent.request(acp.methods.agent.session.new, { cwd: work, mcpServers: [] });
        if (run >= 0) (samples[`${name} start-up`] ??= []).push(threadCpu(child.pid ?? 0));
        for (let i = 1; i <= prompts; i++) {
          const before = threadCpu(child.pid ?? 0);
          await client.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "stream" }] });
          const after = threadCpu(child.pid ?? 0);
          if (run >= 0) (samples[`${name} p${i}`] ??= []).push({ main: after.main - before.main, workers: after.workers - before.workers });
        }
      } finally {
        client.close();
        child.stdin.end();
        await exited;
      }
    }
  }
  const lines = [`CPU ms per prompt (2000 deltas), median of ${runs} fresh processes each (Node ${process.version}${flags.length > 0 ? `, ${flags.join(" ")}` : ""})`, "", "| agent, prompt | total | main thread | V8 workers |", "|---|---|---|---|"];
  for (const [key, list] of Object.entries(samples)) {
    const m = (pick: (s: { main: number; workers: number }) => number): string => median(list.map(pick)).toFixed(1);
    lines.push(`| ${key} | ${m((s) => s.main + s.workers)} | ${m((s) => s.main)} | ${m((s) => s.workers)} |`);
  }
  process.stdout.write(`${lines.join("\n")}\n`);
} finally {
  await model.close();
  rmSync(work, { recursive: true, force: true });
}
