/**
 * The real path, side by side: a loopback mock model server (OpenAI chat-completions SSE or
 * Anthropic Messages SSE) streams N six-character text deltas to
 *   - `agentkit-acp serve` with a real provider pointed at it (JSONL store on, the default),
 *   - the same with `--coalesce-ms` (when given),
 *   - bare-openai (bench/bare-openai.mjs): an agent written directly on the SDK that streams the
 *     same reply with plain fetch — the floor for anything that calls a model over HTTP.
 * Every run spawns each agent afresh (start-up included), interleaved, and times spawn →
 * initialize → session/new, session/prompt → first model request, → first update, → response,
 * counts updates and bytes on the wire, and reads the peak RSS (VmHWM) before closing.
 *
 * Run: npm run build && npx tsx bench/agents.ts [N=2000] [runs=5] [openai|anthropic] [coalesceMs=20]
 * BENCH_CPU_PROF=DIR writes a V8 CPU profile of every `serve` process into DIR.
 * BENCH_BASELINE=DIR adds the `serve` of another built checkout (e.g. main: `git archive main`,
 * node_modules linked, `npm run build`) as one more interleaved row: before/after figures taken
 * under the same machine load.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { anthropicChunks, openAIChunks } from "../src/testing/mock-provider-formats.js";

// Loopback only: a machine-wide extra CA bundle (this sandbox sets one) costs every Node start
// ~50 ms of CPU, the same for each side, and hides start-up differences; measured without it.
delete process.env.NODE_EXTRA_CA_CERTS;

const count = Number(process.argv[2] ?? "2000");
const runs = Number(process.argv[3] ?? "5");
const format = (process.argv[4] ?? "openai") as "openai" | "anthropic";
const coalesceMs = process.argv[5] ?? "20";
const root = fileURLToPath(new URL("..", import.meta.url));
const deltaText = "word, "; // six characters

// ---- the mock model: a pre-built SSE body written in 64 KiB slices with backpressure ----
const text = deltaText.repeat(count);
const chunks = format === "openai" ? openAIChunks({ text, chunkSize: deltaText.length }, "mock", true) : anthropicChunks({ text, chunkSize: deltaText.length }, "mock");
const body = Buffer.from(chunks.join(""));
let requestArrived: (at: number) => void = () => undefined;

async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
  requestArrived(performance.now());
  for await (const _ of request); // drain the request body
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (let offset = 0; offset < body.length; offset += 65_536) {
    if (!response.write(body.subarray(offset, offset + 65_536))) await new Promise((resolve) => response.once("drain", resolve));
  }
  response.end();
}
const server = createServer((request, response) => void answer(request, response).catch(() => response.destroy()));
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;

// ---- one measured run of one agent ----
interface Sample {
  init: number;
  sessionNew: number;
  firstRequest: number;
  firstUpdate: number;
  prompt: number;
  updates: number;
  bytes: number;
  rssMb: number;
  /** A second prompt in the same process (warm). */
  warmPrompt: number;
  /** The agent process's CPU time (all threads) for start-up to session/new, and each prompt. */
  cpuStart: number;
  cpuPrompt: number;
  cpuWarm: number;
}

/** CPU time of every thread of a process so far, in ms (schedstat: ns resolution, unlike getrusage's ticks). */
function cpuMs(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // the thread ended meanwhile
    }
  }
  return ns / 1e6;
}

function peakRssMb(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) / 1024 : NaN;
}

async function measure(label: string, command: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Sample> {
  const started = performance.now();
  const child = spawn(process.execPath, command, { cwd: root, env, stdio: ["pipe", "pipe", "inherit"] });
  child.stdin.on("error", () => undefined);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let bytes = 0;
  child.stdout.on("data", (chunk: Buffer) => (bytes += chunk.length));
  let updates = 0;
  let textSeen = "";
  let firstUpdateAt = 0;
  const client = acp
    .client({ name: "bench" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      const update = params.update;
      if (update.sessionUpdate !== "agent_message_chunk") return;
      if (updates === 0) firstUpdateAt = performance.now();
      updates += 1;
      if (update.content.type === "text") textSeen += update.content.text;
    })
    .connect(acp.ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>));
  try {
    await client.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const init = performance.now() - started;
    const { sessionId } = await client.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    const sessionNew = performance.now() - started;
    const pid = child.pid ?? 0;
    const cpuStart = cpuMs(pid);
    const prompt = async (): Promise<{ firstRequest: number; firstUpdate: number; prompt: number; updates: number; bytes: number }> => {
      updates = 0;
      textSeen = "";
      const bytesBefore = bytes;
      let requestAt = 0;
      requestArrived = (at) => (requestAt ||= at);
      const sent = performance.now();
      const response = await client.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "stream" }] });
      const done = performance.now();
      if (response.stopReason !== "end_turn" || textSeen !== text) throw new Error(`${label}: ${response.stopReason}, ${textSeen.length} of ${text.length} characters`);
      return { firstRequest: requestAt - sent, firstUpdate: firstUpdateAt - sent, prompt: done - sent, updates, bytes: bytes - bytesBefore };
    };
    const first = await prompt();
    const cpuPrompt = cpuMs(pid) - cpuStart;
    const warm = await prompt();
    const cpuWarm = cpuMs(pid) - cpuStart - cpuPrompt;
    return { init, sessionNew, ...first, rssMb: peakRssMb(pid), warmPrompt: warm.prompt, cpuStart, cpuPrompt, cpuWarm };
  } finally {
    client.close();
    child.stdin.end();
    await exited;
  }
}

function currentRssKb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) : NaN;
}

/** RSS growth per idle session: `sessions` session/new calls in one serve process (after one warm-up session). */
async function idleSessions(command: string[], env: NodeJS.ProcessEnv, cwd: string, sessions: number): Promise<number> {
  const child = spawn(process.execPath, command, { cwd: root, env, stdio: ["pipe", "pipe", "inherit"] });
  child.stdin.on("error", () => undefined);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const client = acp
    .client({ name: "bench" })
    .connect(acp.ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>));
  try {
    await client.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    await client.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    const before = currentRssKb(child.pid ?? 0);
    for (let i = 0; i < sessions; i++) await client.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    return (currentRssKb(child.pid ?? 0) - before) / sessions;
  } finally {
    client.close();
    child.stdin.end();
    await exited;
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const work = mkdtempSync(join(tmpdir(), "agentkit-agents-"));
const env = { ...process.env, AGENTKIT_STATE_DIR: join(work, "state"), ANTHROPIC_API_KEY: "test" };
const spec = format === "openai" ? "openai-compatible:mock" : "anthropic:claude-mock";
const profile = process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
const serve = [...profile, join(root, "bin/agentkit-acp.js"), "serve", "--model", spec, "--base-url", baseUrl, "--log-level", "warn"];
const baseline = process.env.BENCH_BASELINE;
const agents: Record<string, string[]> = {
  "bare-openai": [join(root, "bench/bare-openai.mjs"), baseUrl, format],
  ...(baseline ? { "serve (baseline)": [...profile, join(baseline, "bin/agentkit-acp.js"), ...serve.slice(profile.length + 1)] } : {}),
  serve,
  ...(coalesceMs === "0" ? {} : { [`serve --coalesce-ms ${coalesceMs}`]: [...serve, "--coalesce-ms", coalesceMs] }),
};
const samples: Record<string, Sample[]> = Object.fromEntries(Object.keys(agents).map((name) => [name, []]));
try {
  for (const [name, command] of Object.entries(agents)) await measure(name, command, env, work); // warm-up (disk cache)
  for (let i = 0; i < runs; i++) {
    for (const [name, command] of Object.entries(agents)) samples[name]!.push(await measure(name, command, env, work));
  }
  const rows = Object.entries(samples).map(([name, s]) => {
    const m = (key: keyof Sample): number => median(s.map((x) => x[key]));
    return { name, init: m("init"), sessionNew: m("sessionNew"), firstRequest: m("firstRequest"), firstUpdate: m("firstUpdate"), prompt: m("prompt"), warmPrompt: m("warmPrompt"), cpuStart: m("cpuStart"), cpuPrompt: m("cpuPrompt"), cpuWarm: m("cpuWarm"), updates: m("updates"), bytes: m("bytes"), rssMb: m("rssMb") };
  });
  const bare = rows[0]!;
  const ms = (value: number): string => `${value.toFixed(0)} ms`;
  const lines = [
    `${count} deltas of ${deltaText.length} characters, ${format} SSE, median of ${runs} interleaved fresh processes (Node ${process.version})`,
    "",
    "| agent | spawn → initialize | → session/new | prompt → model request | prompt → first update | prompt (first) | prompt (warm) | CPU start-up | CPU prompt (first) | CPU prompt (warm) | updates | bytes | peak RSS |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.name} | ${ms(r.init)} | ${ms(r.sessionNew)} | ${ms(r.firstRequest)} | ${ms(r.firstUpdate)} | ${ms(r.prompt)} | ${ms(r.warmPrompt)} | ${ms(r.cpuStart)} | ${ms(r.cpuPrompt)} | ${ms(r.cpuWarm)} | ${r.updates} | ${r.bytes} | ${r.rssMb.toFixed(0)} MB |`,
    ),
    "",
    ...rows.slice(1).map(
      (r) =>
        `${r.name} vs bare-openai: prompt ${(r.prompt / bare.prompt).toFixed(2)}× (warm ${(r.warmPrompt / bare.warmPrompt).toFixed(2)}×), ` +
        `CPU prompt ${(r.cpuPrompt / bare.cpuPrompt).toFixed(2)}× (warm ${(r.cpuWarm / bare.cpuWarm).toFixed(2)}×), CPU start-up ${(r.cpuStart / bare.cpuStart).toFixed(2)}×, ` +
        `model request ${r.firstRequest - bare.firstRequest >= 0 ? "+" : ""}${(r.firstRequest - bare.firstRequest).toFixed(0)} ms, ` +
        `initialize ${(r.init / bare.init).toFixed(2)}×, session/new ${r.sessionNew - bare.sessionNew >= 0 ? "+" : ""}${(r.sessionNew - bare.sessionNew).toFixed(0)} ms, ` +
        `RSS ${r.rssMb - bare.rssMb >= 0 ? "+" : ""}${(r.rssMb - bare.rssMb).toFixed(0)} MB, updates ${(bare.updates / r.updates).toFixed(1)}× fewer, bytes ${(bare.bytes / r.bytes).toFixed(1)}× fewer`,
    ),
    "",
  ];
  const perSession = await idleSessions([...serve, "--max-sessions", "1000"], env, work, 200);
  lines.push(`200 idle sessions in one serve process: ${perSession.toFixed(0)} KiB RSS each`, "");
  process.stdout.write(lines.join("\n"));
} finally {
  server.close();
  rmSync(work, { recursive: true, force: true });
}
