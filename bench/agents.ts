/**
 * The real path, side by side, for every model provider: a loopback mock model server streams
 * N six-character text deltas (OpenAI chat-completions SSE to `/chat/completions`, Anthropic
 * Messages SSE to `/messages`) to
 *   - `agentkit-acp serve` with each real provider pointed at it (JSONL store on, the default):
 *     `openai-compatible:` and `openai:` (the official provider, Chat Completions) read the
 *     chat-completions reply, `anthropic:` the Messages one;
 *   - the same (openai-compatible) with `--coalesce-ms` (when not 0);
 *   - bare-openai (bench/bare-openai.mjs) in each wire format: an agent written directly on the
 *     SDK that streams the same reply with plain fetch — each provider's floor. Like serve, it
 *     sends the session's history with each prompt (the warm prompt carries the first reply).
 * Each serve row has a code cache of its own (NODE_COMPILE_CACHE, src/cli/bundles.ts), written by
 * its warm-up run: what a user of that one provider has. BENCH_SHARED_CODE_CACHE=1 gives every row
 * of a checkout its dist/bin/.cache: a user who switched provider. Before 2026-12-03 (evening) the
 * first row's warm-up wrote it and no other row's code went in; now each warm-up adds its provider.
 * Every run spawns each agent afresh (start-up included), interleaved, and times spawn →
 * initialize → session/new, session/prompt → first model request, → first update, → response,
 * counts updates and bytes on the wire, and reads the peak RSS (VmHWM) before closing.
 *
 * Run: npm run build && npx tsx bench/agents.ts [N=2000] [runs=5] [providers=openai-compatible,openai,anthropic] [coalesceMs=20]
 * BENCH_CPU_PROF=DIR writes a V8 CPU profile of every agent process into DIR (and each one's first
 * and warm prompt's time windows: `node bench/prof-top.mjs --warm|--first [--agent NAME] DIR/*.cpuprofile`
 * counts only those samples, of the agents whose name contains NAME).
 * BENCH_BASELINE=DIR adds the `serve` of another built checkout (e.g. main: `git archive main`,
 * node_modules linked, `npm run build`) for each provider as one more interleaved row:
 * before/after figures taken under the same machine load.
 * BENCH_FLOOR_NO_HISTORY=1 adds the floor that sends only the latest prompt (before 2026-12-03) as a row.
 * BENCH_SERVE_NODE_ARGS="A|B" adds, per provider, a serve row started with each set of node flags
 * (space-separated; e.g. "--min-semi-space-size=8"), each with its own code cache, and the idle
 * sessions' RSS under each.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { cpuMs, currentRssKb, median, peakRssMb, spread, startMockModel } from "./support.js";

// Loopback only: a machine-wide extra CA bundle (this sandbox sets one) costs every Node start
// ~50 ms of CPU, the same for each side, and hides start-up differences; measured without it.
delete process.env.NODE_EXTRA_CA_CERTS;

const count = Number(process.argv[2] ?? "2000");
const runs = Number(process.argv[3] ?? "5");
type Provider = "openai-compatible" | "openai" | "anthropic";
const providers = (process.argv[4] ?? "openai-compatible,openai,anthropic").split(",") as Provider[];
const coalesceMs = process.argv[5] ?? "20";
const root = fileURLToPath(new URL("..", import.meta.url));

const model = await startMockModel(count);
const { text, deltaText, baseUrl } = model;

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
      model.onRequest = (at) => (requestAt ||= at);
      const sent = performance.now();
      const response = await client.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "stream" }] });
      const done = performance.now();
      if (response.stopReason !== "end_turn" || textSeen !== text) throw new Error(`${label}: ${response.stopReason}, ${textSeen.length} of ${text.length} characters`);
      return { firstRequest: requestAt - sent, firstUpdate: firstUpdateAt - sent, prompt: done - sent, updates, bytes: bytes - bytesBefore };
    };
    const firstFrom = process.hrtime.bigint() / 1000n;
    const first = await prompt();
    const cpuPrompt = cpuMs(pid) - cpuStart;
    const warmFrom = process.hrtime.bigint() / 1000n;
    const warm = await prompt();
    if (profileDir) warmWindows[pid] = { agent: label, from: Number(warmFrom), to: Number(process.hrtime.bigint() / 1000n), first: { from: Number(firstFrom), to: Number(warmFrom) } };
    const cpuWarm = cpuMs(pid) - cpuStart - cpuPrompt;
    return { init, sessionNew, ...first, rssMb: peakRssMb(pid), warmPrompt: warm.prompt, cpuStart, cpuPrompt, cpuWarm };
  } finally {
    client.close();
    child.stdin.end();
    await exited;
  }
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

const work = mkdtempSync(join(tmpdir(), "agentkit-agents-"));
const env = { ...process.env, AGENTKIT_STATE_DIR: join(work, "state"), ANTHROPIC_API_KEY: "test", OPENAI_API_KEY: "test" };
const specs: Record<Provider, string> = { "openai-compatible": "openai-compatible:mock", openai: "openai:mock", anthropic: "anthropic:claude-mock" };
const wire = (provider: Provider): "openai" | "anthropic" => (provider === "anthropic" ? "anthropic" : "openai");
const profileDir = process.env.BENCH_CPU_PROF;
const profile = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [];
/** Each profiled process's warm prompt (monotonic µs, V8's profile clock) and first prompt: `prof-top.mjs --warm` / `--first` read only those samples. */
const warmWindows: Record<number, { agent: string; from: number; to: number; first: { from: number; to: number } }> = {};
const serveArgs = (provider: Provider): string[] => ["serve", "--model", specs[provider], "--base-url", baseUrl, "--log-level", "warn"];
const baseline = process.env.BENCH_BASELINE;
const nodeArgVariants = (process.env.BENCH_SERVE_NODE_ARGS ?? "").split("|").filter(Boolean);
/** Each agent's command and the floor (a bare agent on the same wire format) it is compared with. */
const agents: Record<string, { command: string[]; floor?: string; env?: NodeJS.ProcessEnv }> = {};
/** A serve row's own code cache (see the header). */
const ownCache = (row: string): NodeJS.ProcessEnv | undefined =>
  process.env.BENCH_SHARED_CODE_CACHE ? undefined : { ...env, NODE_COMPILE_CACHE: join(work, "code-cache", row.replace(/[^a-z0-9-]+/g, "_")) };
for (const provider of providers) {
  const floor = `bare-openai (${wire(provider)} SSE)`;
  agents[floor] ??= { command: [...profile, join(root, "bench/bare-openai.mjs"), baseUrl, wire(provider)] };
  if (process.env.BENCH_FLOOR_NO_HISTORY) agents[`${floor}, no history`] ??= { command: [...agents[floor].command, "--no-history"] };
  if (baseline) agents[`serve ${provider} (baseline)`] = { command: [...profile, join(baseline, "bin/agentkit-acp.js"), ...serveArgs(provider)], floor, env: ownCache(`${provider} baseline`) };
  agents[`serve ${provider}`] = { command: [...profile, join(root, "bin/agentkit-acp.js"), ...serveArgs(provider)], floor, env: ownCache(provider) };
  for (const flags of nodeArgVariants) agents[`serve ${provider} ${flags}`] = { command: [...profile, ...flags.split(" "), join(root, "bin/agentkit-acp.js"), ...serveArgs(provider)], floor, env: ownCache(`${provider} ${flags}`) };
  if (provider === "openai-compatible" && coalesceMs !== "0") {
    agents[`serve ${provider} --coalesce-ms ${coalesceMs}`] = { ...agents[`serve ${provider}`]!, command: [...agents[`serve ${provider}`]!.command, "--coalesce-ms", coalesceMs] };
  }
}
const samples: Record<string, Sample[]> = Object.fromEntries(Object.keys(agents).map((name) => [name, []]));
try {
  for (const [name, agent] of Object.entries(agents)) await measure(name, agent.command, agent.env ?? env, work); // warm-up (disk cache, code caches)
  for (let i = 0; i < runs; i++) {
    for (const [name, agent] of Object.entries(agents)) {
      // On a loaded machine a run can fail (e.g. a loopback connection reset): say so and run it again, once.
      const sample = await measure(name, agent.command, agent.env ?? env, work).catch((error: unknown) => {
        process.stderr.write(`${name}: run ${i + 1} failed (${String(error)}); running it again\n`);
        return measure(name, agent.command, agent.env ?? env, work);
      });
      samples[name]!.push(sample);
    }
  }
  const rows = Object.entries(samples).map(([name, s]) => {
    const m = (key: keyof Sample): number => median(s.map((x) => x[key]));
    return { name, init: m("init"), sessionNew: m("sessionNew"), firstRequest: m("firstRequest"), firstUpdate: m("firstUpdate"), prompt: m("prompt"), warmPrompt: m("warmPrompt"), cpuStart: m("cpuStart"), cpuPrompt: m("cpuPrompt"), cpuWarm: m("cpuWarm"), updates: m("updates"), bytes: m("bytes"), rssMb: m("rssMb") };
  });
  const byName = new Map(rows.map((row) => [row.name, row]));
  const ms = (value: number): string => `${value.toFixed(0)} ms`;
  const lines = [
    `${count} deltas of ${deltaText.length} characters, median of ${runs} interleaved fresh processes (Node ${process.version})`,
    "",
    "| agent | spawn → initialize | → session/new | prompt → model request | prompt → first update | prompt (first) | prompt (warm) | CPU start-up | CPU prompt (first) | CPU prompt (warm) | updates | bytes | peak RSS |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.name} | ${ms(r.init)} | ${ms(r.sessionNew)} | ${ms(r.firstRequest)} | ${ms(r.firstUpdate)} | ${ms(r.prompt)} | ${ms(r.warmPrompt)} | ${ms(r.cpuStart)} | ${ms(r.cpuPrompt)} | ${ms(r.cpuWarm)} | ${r.updates} | ${r.bytes} | ${r.rssMb.toFixed(0)} MB |`,
    ),
    "",
  ];
  // Each provider against its floor: ratios of the medians, and (in brackets) the lowest and
  // highest ratio of one run's serve to the same run's floor (they ran back to back).
  const ratio = (name: string, floor: string, key: keyof Sample): string => {
    const own = samples[name]!;
    const base = samples[floor]!;
    const perRun = spread(own.map((sample, i) => sample[key] / base[i]![key]));
    return `${(median(own.map((x) => x[key])) / median(base.map((x) => x[key]))).toFixed(2)}× (${perRun.low.toFixed(2)}–${perRun.high.toFixed(2)})`;
  };
  lines.push(
    "| path | prompt (first) | prompt (warm) | floor (first / warm) | ratio first | ratio warm | CPU ratio first | CPU ratio warm | CPU start-up ratio |",
    "|---|---|---|---|---|---|---|---|---|",
  );
  for (const [name, { floor }] of Object.entries(agents)) {
    if (floor === undefined) continue;
    const r = byName.get(name)!;
    const f = byName.get(floor)!;
    lines.push(
      `| ${name} | ${ms(r.prompt)} | ${ms(r.warmPrompt)} | ${ms(f.prompt)} / ${ms(f.warmPrompt)} | ${ratio(name, floor, "prompt")} | ${ratio(name, floor, "warmPrompt")} | ` +
        `${ratio(name, floor, "cpuPrompt")} | ${ratio(name, floor, "cpuWarm")} | ${ratio(name, floor, "cpuStart")} |`,
    );
  }
  lines.push("", "(ratios of the medians; in brackets the lowest and highest ratio of one run to the same run's floor)", "");
  const first = providers[0]!;
  const perSession = await idleSessions([join(root, "bin/agentkit-acp.js"), ...serveArgs(first), "--max-sessions", "1000"], env, work, 200);
  lines.push(`200 idle sessions in one serve process (${first}): ${perSession.toFixed(0)} KiB RSS each`, "");
  for (const flags of nodeArgVariants) {
    const kib = await idleSessions([...flags.split(" "), join(root, "bin/agentkit-acp.js"), ...serveArgs(first), "--max-sessions", "1000"], env, work, 200);
    lines.push(`the same with ${flags}: ${kib.toFixed(0)} KiB RSS each`, "");
  }
  process.stdout.write(lines.join("\n"));
  if (profileDir) writeFileSync(join(profileDir, "warm-windows.json"), JSON.stringify(warmWindows));
} finally {
  await model.close();
  rmSync(work, { recursive: true, force: true });
}
