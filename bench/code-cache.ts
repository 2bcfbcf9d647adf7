/**
 * What the bin's code cache (src/cli/bundles.ts) is worth to one provider's user, by what made
 * it: `serve` with PROVIDER (2000-delta prompts from a loopback mock) started with
 *   - no cache at all (NODE_DISABLE_COMPILE_CACHE=1);
 *   - its own cache, written by a run of that provider (two prompts);
 *   - a switched user's cache before the fix: written by an `openai-compatible:` run only (what
 *     the loader before 2026-12-03 kept until the next upgrade);
 *   - the same after one run of PROVIDER (which rewrites it, covering both);
 *   - with LONG=TURNS:IDLE_MS, its own cache written by a long-lived process: TURNS prompts each
 *     followed by IDLE_MS of idle (V8's memory reducer runs major GCs then, and bytecode unused for
 *     5-6 of them is dropped). This build's loader writes none then; BENCH_BIN=DIR (a checkout
 *     built before the fix) shows what the old exit-time write gave.
 * Each measured process gets a fresh copy of its cache (so nothing it rewrites is reused), and the
 * rows run interleaved, fresh processes each. CPU (all threads, /proc) of start-up to
 * session/new, and of the first and second prompt.
 *
 * Run: npm run build && npx tsx bench/code-cache.ts [runs=7] [provider=anthropic]
 */
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { clientOn, cpuMs, median, startMockModel } from "./support.js";

delete process.env.NODE_EXTRA_CA_CERTS; // as bench/agents.ts: each start would pay for it
const runs = Number(process.argv[2] ?? "7");
const provider = process.argv[3] ?? "anthropic";
const root = process.env.BENCH_BIN ?? fileURLToPath(new URL("..", import.meta.url));
const model = await startMockModel(2000);
const work = mkdtempSync(join(tmpdir(), "agentkit-code-cache-bench-"));
const specOf = (p: string): string => (p === "anthropic" ? "anthropic:claude-mock" : `${p}:mock`);
const baseEnv = { ...process.env, AGENTKIT_STATE_DIR: join(work, "state"), ANTHROPIC_API_KEY: "test", OPENAI_API_KEY: "test" };

/** One serve process: `prompts` prompts (IDLE_MS after each when given); CPU ms of start-up and each prompt. */
async function serve(p: string, env: NodeJS.ProcessEnv, prompts: number, idleMs = 0): Promise<number[]> {
  const args = [join(root, "bin/agentkit-acp.js"), "serve", "--model", specOf(p), "--base-url", model.baseUrl, "--log-level", "warn"];
  const child = spawn(process.execPath, args, { env, stdio: ["pipe", "pipe", "inherit"] });
  const { client, exited } = clientOn(child);
  try {
    await client.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await client.agent.request(acp.methods.agent.session.new, { cwd: work, mcpServers: [] });
    const cpu = [cpuMs(child.pid ?? 0)];
    for (let i = 0; i < prompts; i++) {
      const before = cpuMs(child.pid ?? 0);
      const response = await client.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "stream" }] });
      if (response.stopReason !== "end_turn") throw new Error(`${p}: ${response.stopReason}`);
      cpu.push(cpuMs(child.pid ?? 0) - before);
      if (idleMs > 0) await new Promise((resolve) => setTimeout(resolve, idleMs));
    }
    return cpu;
  } finally {
    client.close();
    child.stdin.end();
    await exited;
  }
}

const cacheSize = (dir: string): string => {
  const file = existsSync(dir) ? readdirSync(dir).find((name) => name.startsWith("agentkit-acp-serve-")) : undefined;
  return file ? `${(statSync(join(dir, file)).size / 1e6).toFixed(2)} MB` : "none";
};
const made = (name: string): string => join(work, "made", name);
const withCache = (dir: string): NodeJS.ProcessEnv => ({ ...baseEnv, NODE_COMPILE_CACHE: dir });

try {
  await serve(provider, withCache(made("own")), 2);
  await serve("openai-compatible", withCache(made("switched, before")), 2);
  cpSync(made("switched, before"), made("switched, after"), { recursive: true });
  await serve(provider, withCache(made("switched, after")), 2);
  const long = process.env.LONG?.split(":").map(Number);
  if (long) await serve(provider, withCache(made(`own, by a ${long[0]}-prompt process`)), long[0] ?? 1, long[1]);
  const rows: Record<string, NodeJS.ProcessEnv> = { "no cache": { ...baseEnv, NODE_DISABLE_COMPILE_CACHE: "1" } };
  for (const name of readdirSync(join(work, "made"))) rows[name] = {};
  const samples: Record<string, number[][]> = {};
  for (let run = 0; run < runs; run++) {
    for (const [name, env] of Object.entries(rows)) {
      let runEnv = env;
      if (name !== "no cache") {
        const copy = join(work, "run", name);
        rmSync(copy, { recursive: true, force: true });
        mkdirSync(join(work, "run"), { recursive: true });
        cpSync(made(name), copy, { recursive: true });
        runEnv = withCache(copy);
      }
      (samples[name] ??= []).push(await serve(provider, runEnv, 2));
    }
  }
  const lines = [
    `serve ${specOf(provider)}, 2000 deltas, median of ${runs} interleaved fresh processes (Node ${process.version}${process.env.BENCH_BIN ? `, ${root}` : ""})`,
    "",
    "| cache | size | CPU start-up → session/new | CPU prompt (first) | CPU prompt (warm) |",
    "|---|---|---|---|---|",
  ];
  for (const [name, list] of Object.entries(samples)) {
    const m = (i: number): string => `${median(list.map((s) => s[i] ?? NaN)).toFixed(0)} ms`;
    lines.push(`| ${name} | ${name === "no cache" ? "–" : cacheSize(made(name))} | ${m(0)} | ${m(1)} | ${m(2)} |`);
  }
  process.stdout.write(`${lines.join("\n")}\n`);
} finally {
  await model.close();
  rmSync(work, { recursive: true, force: true });
}
