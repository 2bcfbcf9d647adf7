/**
 * What each prompt's GCs cost and keep alive, `serve` against its floor (issue #30): every agent
 * runs under `node --trace-gc --trace-gc-nvp` with its protocol moved to fd 3
 * (bench/gc-probe-preload.mjs), and per prompt of PROMPTS 2000-delta prompts the median over fresh
 * processes of: young-generation GCs (count, main-thread pause, their background threads' time,
 * bytes that survived within the young generation, bytes promoted) and full GCs (count, pause,
 * background marking time — it grows with the live heap). The first run of each agent (no code
 * cache yet) is not counted.
 *
 * Run: npm run build && npx tsx bench/gc-probe.ts [runs=4]
 * BENCH_BASELINE=DIR, PROVIDER, PROMPTS (default 2) and FLAGS as bench/warm-threads.ts; DELTAS (default 2000).
 * SURVIVORS=1: also what the first prompt allocated that survived its first scavenge, by where it
 * was allocated (V8's sampling heap profiler, so sizes are estimates), for the last run of each agent.
 */
import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { clientOn, median, peakRssMb, providerAgents, startMockModel } from "./support.js";

delete process.env.NODE_EXTRA_CA_CERTS; // as bench/agents.ts: each start would pay for it
const runs = Number(process.argv[2] ?? "4");
const prompts = Number(process.env.PROMPTS ?? "2");
const flags = process.env.FLAGS ? process.env.FLAGS.split(" ") : [];
const root = fileURLToPath(new URL("..", import.meta.url));
const model = await startMockModel(Number(process.env.DELTAS ?? "2000"));
const work = mkdtempSync(join(tmpdir(), "agentkit-gcprobe-"));
const env = { ...process.env, AGENTKIT_STATE_DIR: join(work, "state"), OPENAI_API_KEY: "test", ANTHROPIC_API_KEY: "test" };
const provider = process.env.PROVIDER ?? "openai-compatible";
const agents = providerAgents(root, model.baseUrl, provider);

type Gc = { young: number; pause: number; background: number; survived: number; promoted: number; full: number; fullPause: number; marking: number };
const keys: Array<[keyof Gc, string, number]> = [
  ["young", "scavenges", 1],
  ["pause", "pause ms", 1],
  ["background", "background ms", 1],
  ["survived", "survived KB", 1024],
  ["promoted", "promoted KB", 1024],
  ["full", "full GCs", 1],
  ["fullPause", "pause ms", 1],
  ["marking", "background marking ms", 1],
];

/** The GCs of each prompt (between two MARK lines) in a --trace-gc-nvp log. */
function promptsOf(log: string): Gc[] {
  const windows: Gc[] = [];
  let current: Gc | undefined;
  for (const line of log.split("\n")) {
    if (line === "MARK") {
      windows.push((current = { young: 0, pause: 0, background: 0, survived: 0, promoted: 0, full: 0, fullPause: 0, marking: 0 }));
      continue;
    }
    const kind = /(?:^| )gc=(\w+)/.exec(line)?.[1];
    if (!current || kind === undefined) continue;
    const field = (name: string): number => Number(new RegExp(`(?:^| )${name.replace(".", "\\.")}=([\\d.]+)`).exec(line)?.[1] ?? "0");
    if (kind === "s" || kind === "mmc") {
      current.young += 1;
      current.pause += field("pause");
      current.background += field("background.scavenge.parallel");
      current.survived += field("new_space_survived");
      current.promoted += field("promoted");
    } else {
      current.full += 1;
      current.fullPause += field("pause");
      current.marking += field("background.mark");
    }
  }
  return windows.slice(0, prompts);
}

async function runAgent(command: string[], logPath: string, survivors: string | undefined): Promise<Gc[]> {
  const logFd = openSync(logPath, "w");
  const preload = join(root, "bench/gc-probe-preload.mjs");
  const childEnv = survivors ? { ...env, GC_PROBE_SURVIVORS: survivors } : env;
  const child = spawn(process.execPath, ["--import", preload, "--trace-gc", "--trace-gc-nvp", ...flags, ...command], { env: childEnv, stdio: ["pipe", logFd, "inherit", "pipe"] });
  closeSync(logFd);
  const { client, exited } = clientOn(child, child.stdio[3] as Readable);
  // A signal is delivered asynchronously: the prompt waits until the agent has written its mark (bounded).
  let marks = 0;
  const mark = async (): Promise<void> => {
    marks += 1;
    child.kill("SIGUSR2");
    const written = (): number => readFileSync(logPath, "utf8").split("\n").filter((line) => line === "MARK").length;
    for (const started = Date.now(); written() < marks; ) {
      if (Date.now() - started > 5_000) throw new Error(`the agent wrote no mark ${marks} within 5 s`);
      await sleep(2);
    }
  };
  try {
    await client.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await client.agent.request(acp.methods.agent.session.new, { cwd: work, mcpServers: [] });
    for (let i = 1; i <= prompts; i++) {
      await mark();
      await client.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "stream" }] });
    }
    await mark();
    peaks[logPath] = peakRssMb(child.pid ?? 0);
  } finally {
    client.close();
    child.stdin?.end();
    await exited;
  }
  return promptsOf(readFileSync(logPath, "utf8"));
}

/** A sampling heap profile's self sizes by allocation site: the innermost 3 frames of our bundle, else of anything. */
function survivorSites(file: string, top: number): string[] {
  type Node = { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: Node[] };
  const sites = new Map<string, number>();
  let total = 0;
  const walk = (node: Node, stack: string[]): void => {
    const frame = node.callFrame;
    const here = [...stack, `${frame.functionName || "(anonymous)"} ${frame.url.split("/").pop() ?? ""}:${frame.lineNumber + 1}`];
    if (node.selfSize > 0) {
      total += node.selfSize;
      const ours = here.filter((name) => name.includes("serve.cjs") || name.includes("bare-model.mjs"));
      const site = (ours.length > 0 ? ours.slice(-3) : here.slice(-3)).join(" < ");
      sites.set(site, (sites.get(site) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, here);
  };
  walk((JSON.parse(readFileSync(file, "utf8")) as { head: Node }).head, []);
  const kb = (bytes: number): string => `${(bytes / 1024).toFixed(0)} KB`;
  return [`total ${kb(total)}`, ...[...sites].sort((a, b) => b[1] - a[1]).slice(0, top).map(([site, size]) => `${kb(size).padStart(7)}  ${site}`)];
}

const samples: Record<string, Gc[]> = {};
/** Each agent process's peak RSS (MB) after its prompts, by log path. */
const peaks: Record<string, number> = {};
const peakSamples: Record<string, number[]> = {};
const profiles: Record<string, string> = {};
try {
  for (let run = 0; run < runs; run++) {
    for (const [name, command] of Object.entries(agents)) {
      const tag = `${name.replace(/\W/g, "")}-${run}`;
      const survivors = process.env.SURVIVORS && run === runs - 1 ? join(work, `survivors-${tag}`) : undefined;
      const gcs = await runAgent(command, join(work, `${tag}.log`), survivors);
      if (run > 0) gcs.forEach((gc, i) => (samples[`${name} p${i + 1}`] ??= []).push(gc));
      if (run > 0) (peakSamples[name] ??= []).push(peaks[join(work, `${tag}.log`)] ?? 0);
      if (survivors) {
        const file = readdirSync(work).find((entry) => entry.startsWith(`survivors-${tag}-`));
        if (file !== undefined) profiles[name] = join(work, file);
      }
    }
  }
  console.log(`GC per prompt (${Number(process.env.DELTAS ?? "2000")} deltas, ${provider}), median of ${runs - 1} fresh processes each (Node ${process.version}${flags.length ? `, ${flags.join(" ")}` : ""})\n`);
  console.log(`| agent, prompt | ${keys.map(([, label]) => label).join(" | ")} |`);
  console.log(`|---|${keys.map(() => "---").join("|")}|`);
  for (const [name, list] of Object.entries(samples)) {
    console.log(`| ${name} | ${keys.map(([key, , unit]) => (median(list.map((gc) => gc[key])) / unit).toFixed(unit === 1 && key !== "young" && key !== "full" ? 1 : 0)).join(" | ")} |`);
  }
  console.log(`\npeak RSS after the prompts, MB: ${Object.entries(peakSamples).map(([name, list]) => `${name} ${median(list).toFixed(0)}`).join(", ")}`);
  for (const [name, file] of Object.entries(profiles)) console.log(`\n${name}, p1, allocated and alive after its first scavenge:\n${survivorSites(file, 15).join("\n")}`);
} finally {
  await model.close();
  rmSync(work, { recursive: true, force: true });
}

