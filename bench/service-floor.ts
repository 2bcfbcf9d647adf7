/**
 * The service path against its floor (issue #28): `serve --listen` (JSONL store, the default) and
 * the SDK's own `AcpServer` with its Node adapters serving a bare agent (bench/bare-http-agent.mjs:
 * no loop, no store, no tools, no auth; it streams the model's deltas as agent_message_chunk and,
 * as serve does, sends each session's conversation with every prompt), both
 * reading the same reply from one loopback mock model, under the same load, interleaved, each agent
 * a fresh process per run. Over Streamable HTTP and WebSocket:
 *   (a) 8 sessions on one connection, 5 turns each (each session's turns one after another);
 *   (b) 100 connections with one session each, 3 turns each, all at once; connect + initialize +
 *       session/new is measured apart, one connection at a time (a user's wait, not a queue);
 *   (c) idle: 1,000 open connections (initialized), then one idle session on each: RSS per each.
 * Reported per row: the agent process's CPU per turn (all threads, /proc schedstat), wall of the
 * prompting phase, p50/p99 turn latency, bytes on the wire per turn (what the client received),
 * peak RSS; then serve's ratio to the floor, per transport.
 *
 * Run: npm run build && npx tsx bench/service-floor.ts [rounds=3] [loads=a,b,c] [deltas=400]
 * BENCH_CPU_PROF=DIR writes a V8 CPU profile of every agent process into DIR; BENCH_SERVE_ARGS adds
 * arguments to `serve` (e.g. `--no-persist`); BENCH_BASELINE=DIR[,DIR…] adds the `serve` of other built
 * checkouts (e.g. main: `git worktree add`, node_modules linked, `npm run build`) as more rows.
 * BENCH_TURNS, BENCH_SESSIONS (load a) and BENCH_TRANSPORTS=http|ws narrow a run (e.g. to profile);
 * BENCH_WARMUP=N runs N unmeasured turns per session first (the steady state, without the JIT's warm-up).
 * BENCH_PERF=DIR runs every agent under `perf record -g -e cpu-clock` (DIR/NAME-N.data; node --perf-basic-prof,
 * serve unbundled); its CPU figures are then perf's, not the agent's. BENCH_BASELINE_ARGS: `serve` arguments of
 * the baseline rows (default BENCH_SERVE_ARGS; e.g. BENCH_BASELINE=. BENCH_SERVE_ARGS=--no-persist
 * BENCH_BASELINE_ARGS=" " puts one build with and without a flag side by side).
 * BENCH_NODE_ARGS: node flags for every agent (e.g. `--single-threaded-gc`).
 * Only the measured phase (after BENCH_WARMUP): BENCH_PERF_PHASE=DIR attaches `perf record` to every agent (all threads,
 * serve unbundled; CPU figures stay the agent's; bench/perf-owners.mjs sums the profiles by owner), BENCH_STRACE_PHASE=DIR
 * `strace -f -c` (syscalls); BENCH_PHASE_SIGNAL=SIG is sent to every agent as it starts (a preload's mark or heap sample,
 * given with BENCH_NODE_ARGS=--import …). BENCH_AGENT_STDOUT=DIR keeps each agent's stdout (e.g. with `--trace-opt`).
 * BENCH_FLOOR_NO_HISTORY=1 adds the floor that sends only the latest prompt (the floor before 2026-12-03) as a row.
 */
import { spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { Agent } from "undici";
import WebSocket from "ws";
import { cpuMs, currentRssKb, median, peakRssMb, percentile, startMockModel } from "./support.js";

delete process.env.NODE_EXTRA_CA_CERTS; // loopback only; it costs each Node start ~50 ms of CPU
const rounds = Number(process.argv[2] ?? "3");
const loads = new Set((process.argv[3] ?? "a,b,c").split(","));
const deltas = Number(process.argv[4] ?? "400");
const IDLE = Number(process.env.BENCH_IDLE_CONNECTIONS ?? "1000");
/** BENCH_TURNS=N: turns per session (default 5 in (a), 3 in (b)); more makes a CPU profile mostly turns. */
const turnsOf = (fallback: number): number => Number(process.env.BENCH_TURNS ?? fallback);
/** BENCH_WARMUP=N: turns per session run before the measured ones (default 0: a fresh process, its JIT warm-up included). */
const WARMUP = Number(process.env.BENCH_WARMUP ?? "0");
/** BENCH_TRANSPORTS=http or ws: only that transport (e.g. to profile one). */
const transports = (process.env.BENCH_TRANSPORTS ?? "http,ws").split(",") as ("http" | "ws")[];
const root = fileURLToPath(new URL("..", import.meta.url));
const TOKEN = "bench-token";
/** BENCH_SERVE_ARGS: more `serve` arguments (space-separated), e.g. `--no-persist` to see the store's share. */
const extraServeArgs = (process.env.BENCH_SERVE_ARGS ?? "").split(" ").filter(Boolean);
/** BENCH_NODE_ARGS: node flags for every agent, floors included (e.g. `--single-threaded-gc`: how much of the gap is V8's background GC). */
const nodeArgs = (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);
/** BENCH_BASELINE_ARGS: the same for the baseline rows (default: BENCH_SERVE_ARGS). */
const baselineArgs = (process.env.BENCH_BASELINE_ARGS ?? process.env.BENCH_SERVE_ARGS ?? "").split(" ").filter(Boolean);
type Transport = "http" | "ws";
/** BENCH_BASELINE=DIR: the `serve` of another built checkout as one more interleaved agent (before/after under the same load). */
/** Several, comma-separated: one row each, named `baseline`, `baseline2`, … in that order. */
const baselines = (process.env.BENCH_BASELINE ?? "").split(",").filter(Boolean);
const baselineName = (i: number): string => (i === 0 ? "baseline" : `baseline${i + 1}`);
type AgentName = string;
/** BENCH_FLOOR_NO_HISTORY=1: also the floor that sends only the latest prompt to the model (the floor before 2026-12-03), as a row. */
const floorNoHistory = process.env.BENCH_FLOOR_NO_HISTORY ? ["floor-no-history"] : [];
const agentNames: AgentName[] = ["floor", ...floorNoHistory, ...baselines.map((_, i) => baselineName(i)), "serve"];

// A POST on a keep-alive socket the server has just closed (both sides close idle sockets after
// 5 s; a client whose event loop lags under this load can still pick one) fails with ECONNRESET
// inside the SDK's HTTP transport, which closes that connection: the run fails and is run again.
process.on("unhandledRejection", (error) => process.stderr.write(`(a client connection failed: ${String(error)})\n`));
// The clients close idle keep-alive sockets after 1 s, well before the agents' servers do (5 s),
// so that a lagging client does not pick a socket the server is closing.
const clientSockets = new Agent({ keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000 });
const model = await startMockModel(deltas);
const work = mkdtempSync(join(tmpdir(), "agentkit-bench-floor-"));

interface Listening {
  name: AgentName;
  pid: number;
  url: string;
  stop(): Promise<void>;
}

let perfRuns = 0;
/**
 * A tool attached to each agent for the measured prompting phase only (after any warm-up), stopped with SIGINT at its
 * end; the CPU figures stay the agent's own. BENCH_PERF_PHASE=DIR: `perf record` of every thread (DIR/NAME-N.data; serve
 * unbundled, node --perf-basic-prof; bench/perf-owners.mjs reads it). BENCH_STRACE_PHASE=DIR: `strace -f -c`, the
 * syscalls of the phase (DIR/NAME-N.txt).
 */
const phaseTool: { dir: string; command: string[] } | undefined = process.env.BENCH_PERF_PHASE
  ? { dir: process.env.BENCH_PERF_PHASE, command: ["perf", "record", "-g", "-e", "cpu-clock", "-F", "2000", "-p", "{pid}", "-o", "{out}.data"] }
  : process.env.BENCH_STRACE_PHASE
    ? { dir: process.env.BENCH_STRACE_PHASE, command: ["strace", "-f", "-c", "-p", "{pid}", "-o", "{out}.txt"] }
    : undefined;

/** Starts the phase's tool on the agent; the returned function stops it and waits for its output. */
async function attachPhaseTool(agent: Listening, tool: NonNullable<typeof phaseTool>): Promise<() => Promise<void>> {
  const out = join(tool.dir, `${agent.name}-${++perfRuns}`);
  const [command, ...args] = tool.command.map((a) => a.replace("{pid}", String(agent.pid)).replace("{out}", out));
  const child = spawn(command!, args, { stdio: "ignore" });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise((resolve) => setTimeout(resolve, 500)); // neither tool says when it has attached; both have by then
  return async () => {
    child.kill("SIGINT");
    await exited;
  };
}

function startAgent(name: AgentName): Promise<Listening> {
  /** The checkout whose serve this is (undefined: a floor). */
  const checkout = name === "serve" ? root : baselines[agentNames.indexOf(name) - 1 - floorNoHistory.length];
  const profile = [...nodeArgs, ...(process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [])];
  const args =
    checkout === undefined
      ? [...profile, join(root, "bench/bare-http-agent.mjs"), model.baseUrl, "openai", ...(name === "floor" ? [] : ["--no-history"])]
      : [...profile, join(checkout, "bin/agentkit-acp.js"), "serve", "--listen", "127.0.0.1:0", "--model", "openai-compatible:mock", "--base-url", model.baseUrl,
         "--state-dir", mkdtempSync(join(work, "state-")), "--log-level", "info", "--max-sessions", "5000", "--max-connections", "5000", ...(name === "serve" ? extraServeArgs : baselineArgs)];
  // BENCH_PERF=DIR: on-CPU profile of every thread (V8's --cpu-prof samples wall time), serve unbundled so frames name their files.
  const perfDir = process.env.BENCH_PERF;
  if (process.env.BENCH_PERF_PHASE) args.unshift("--perf-basic-prof");
  if ((perfDir || process.env.BENCH_PERF_PHASE) && checkout !== undefined) args.splice(args.findIndex((a) => a.endsWith("bin/agentkit-acp.js")), 1, join(root, "bench/serve-unbundled.mjs"), checkout);
  const perf = perfDir ? ["record", "-g", "-e", "cpu-clock", "-F", "2000", "-o", join(perfDir, `${name}-${++perfRuns}.data`), "--", process.execPath, "--perf-basic-prof"] : [];
  const child = spawn(perfDir ? "perf" : process.execPath, [...perf, ...args], { cwd: work, env: { ...process.env, AGENTKIT_ACP_TOKEN: TOKEN }, stdio: ["ignore", process.env.BENCH_AGENT_STDOUT ? "pipe" : "ignore", "pipe"] });
  // BENCH_AGENT_STDOUT=DIR: each agent's stdout (e.g. BENCH_NODE_ARGS=--trace-opt) into DIR/NAME-PID.txt.
  if (process.env.BENCH_AGENT_STDOUT) child.stdout!.pipe(createWriteStream(join(process.env.BENCH_AGENT_STDOUT, `${name}-${child.pid}.txt`)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async (): Promise<void> => {
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    await exited;
    clearTimeout(timer);
  };
  let stderr = "";
  return new Promise((resolve, reject) => {
    child.stderr!.on("data", (data: Buffer) => {
      stderr += data.toString();
      const url = /listening on (http:\/\/\S+\/acp)/.exec(stderr)?.[1];
      if (url) resolve({ name, pid: child.pid!, url, stop });
    });
    void exited.then(() => reject(new Error(`${name} exited before listening:\n${stderr}`)));
  });
}

/** One SDK client connection over `transport`, counting the bytes it receives. */
function connect(url: string, transport: Transport) {
  let bytes = 0;
  /** session/update notifications received (of any kind). */
  let messages = 0;
  const headers = { Authorization: `Bearer ${TOKEN}` };
  const countingFetch: typeof fetch = async (input, init) => {
    const response = await fetch(input, { ...init, dispatcher: clientSockets } as RequestInit);
    if (!response.body) return response;
    const counted = response.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({ transform: (chunk, out) => ((bytes += chunk.byteLength), out.enqueue(chunk)) }));
    return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  class CountingWebSocket extends WebSocket {
    constructor(...args: ConstructorParameters<typeof WebSocket>) {
      super(...args);
      this.on("message", (data: Buffer | ArrayBuffer | Buffer[]) => (bytes += Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : data.byteLength));
    }
  }
  const stream = transport === "http" ? createHttpStream(url, { headers, fetch: countingFetch }) : createWebSocketStream(url.replace(/^http/, "ws"), { headers, WebSocket: CountingWebSocket });
  const received = new Map<string, string>();
  const connection = acp
    .client({ name: "bench" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      messages += 1;
      const update = params.update;
      if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") received.set(params.sessionId, (received.get(params.sessionId) ?? "") + update.content.text);
    })
    .connect(stream);
  const { agent } = connection;
  return {
    bytes: () => bytes,
    messages: () => messages,
    init: () => agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} }),
    async session(): Promise<{ prompt(): Promise<number> }> {
      const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: work, mcpServers: [] });
      return {
        async prompt() {
          received.set(sessionId, "");
          const started = performance.now();
          const response = await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "stream" }] });
          const ms = performance.now() - started;
          if (response.stopReason !== "end_turn" || received.get(sessionId) !== model.text) throw new Error(`turn: ${response.stopReason}, ${received.get(sessionId)?.length} of ${model.text.length} characters`);
          return ms;
        },
      };
    },
    close: () => connection.close(),
  };
}
type Client = ReturnType<typeof connect>;

interface Sample {
  cpuPerTurn: number;
  wallMs: number;
  latencies: number[];
  bytesPerTurn: number;
  updatesPerTurn: number;
  peakRssMb: number;
  /** Load (b): connect + initialize + session/new, one connection at a time. */
  setupMs?: number[];
}

/** The prompting phase: every session's turns one after another, all sessions at once. */
async function promptPhase(agent: Listening, clients: Client[], sessions: { prompt(): Promise<number> }[], turns: number): Promise<Omit<Sample, "peakRssMb">> {
  // BENCH_WARMUP=N: N turns per session first, not measured (the JIT's warm-up paid before: the steady state).
  for (let i = 0; i < WARMUP; i++) await Promise.all(sessions.map((s) => s.prompt()));
  const stopTool = phaseTool ? await attachPhaseTool(agent, phaseTool) : undefined;
  // BENCH_PHASE_SIGNAL=SIG: sent to the agent as the phase starts (e.g. a preload's mark or heap sampling, BENCH_NODE_ARGS=--import …).
  if (process.env.BENCH_PHASE_SIGNAL) process.kill(agent.pid, process.env.BENCH_PHASE_SIGNAL as NodeJS.Signals);
  const cpuBefore = cpuMs(agent.pid);
  const bytesBefore = clients.reduce((n, c) => n + c.bytes(), 0);
  const updatesBefore = clients.reduce((n, c) => n + c.messages(), 0);
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(sessions.map(async (s) => { for (let i = 0; i < turns; i++) latencies.push(await s.prompt()); }));
  const wallMs = performance.now() - started;
  await stopTool?.();
  const count = sessions.length * turns;
  return { cpuPerTurn: (cpuMs(agent.pid) - cpuBefore) / count, wallMs, latencies, bytesPerTurn: (clients.reduce((n, c) => n + c.bytes(), 0) - bytesBefore) / count,
    updatesPerTurn: (clients.reduce((n, c) => n + c.messages(), 0) - updatesBefore) / count };
}

async function loadA(agent: Listening, transport: Transport): Promise<Sample> {
  const client = connect(agent.url, transport);
  await client.init();
  const sessions = await Promise.all(Array.from({ length: Number(process.env.BENCH_SESSIONS ?? "8") }, () => client.session()));
  const phase = await promptPhase(agent, [client], sessions, turnsOf(5));
  const sample = { ...phase, peakRssMb: peakRssMb(agent.pid) };
  client.close();
  return sample;
}

async function loadB(agent: Listening, transport: Transport): Promise<Sample> {
  const clients: Client[] = [];
  const sessions: { prompt(): Promise<number> }[] = [];
  const setupMs: number[] = [];
  for (let i = 0; i < 100; i++) {
    const started = performance.now();
    const client = connect(agent.url, transport);
    await client.init();
    sessions.push(await client.session());
    setupMs.push(performance.now() - started);
    clients.push(client);
  }
  const phase = await promptPhase(agent, clients, sessions, turnsOf(3));
  const sample = { ...phase, setupMs, peakRssMb: peakRssMb(agent.pid) };
  for (const client of clients) client.close();
  return sample;
}

/** Load (c): RSS growth per idle initialized connection, then per idle session (one on each). */
async function loadC(agent: Listening, transport: Transport): Promise<{ perConnectionKb: number; perSessionKb: number }> {
  const warm = connect(agent.url, transport);
  await warm.init();
  await warm.session();
  const before = currentRssKb(agent.pid);
  const clients = Array.from({ length: IDLE }, () => connect(agent.url, transport));
  for (let i = 0; i < clients.length; i += 50) await Promise.all(clients.slice(i, i + 50).map((c) => c.init()));
  const connected = currentRssKb(agent.pid);
  for (let i = 0; i < clients.length; i += 50) await Promise.all(clients.slice(i, i + 50).map((c) => c.session()));
  const opened = currentRssKb(agent.pid);
  for (const client of [warm, ...clients]) client.close();
  return { perConnectionKb: (connected - before) / IDLE, perSessionKb: (opened - connected) / IDLE };
}

/** One run on a fresh agent process, stopped afterwards. */
async function once<T>(name: AgentName, run: (agent: Listening) => Promise<T>): Promise<T> {
  const agent = await startAgent(name);
  try {
    return await run(agent);
  } finally {
    await agent.stop();
  }
}

/** `run` until it succeeds, at most `times` times (a loaded machine resets a keep-alive socket now and then: see above). */
async function attempts<T>(times: number, run: () => Promise<T>, failed: (error: unknown) => void): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await run();
    } catch (error) {
      if (i >= times) throw error;
      failed(error);
    }
  }
}

const ms = (value: number): string => `${value.toFixed(1)} ms`;
const lines: string[] = [`Node ${process.version}, ${deltas} deltas per turn, median of ${rounds} interleaved runs, each agent a fresh process${WARMUP > 0 ? `, ${WARMUP} unmeasured warm-up turn(s) per session first` : ""}`, ""];
try {
  for (const [load, run] of [["a", loadA], ["b", loadB]] as const) {
    if (!loads.has(load)) continue;
    const samples = new Map<string, Sample[]>();
    for (let round = 0; round < rounds; round++) {
      for (const transport of transports) {
        for (const name of agentNames) {
          const key = `${transport} ${name}`;
          const sample = await attempts(3, () => once(name, (agent) => run(agent, transport)), (error) =>
            process.stderr.write(`${key}: run ${round + 1} failed (${String(error)}); running it again\n`),
          );
          samples.set(key, [...(samples.get(key) ?? []), sample]);
        }
      }
    }
    lines.push(load === "a" ? "Load (a): 8 sessions on one connection, 5 turns each" : "Load (b): 100 connections, one session each, 3 turns each, all at once", "");
    lines.push("| transport | agent | CPU / turn | wall | p50 turn | p99 turn | updates / turn | bytes / turn | peak RSS | connect+init+new p50 |", "|---|---|---|---|---|---|---|---|---|---|");
    for (const [key, s] of samples) {
      const [transport, name] = key.split(" ");
      const setup = s[0]?.setupMs ? ms(median(s.map((x) => median(x.setupMs!)))) : "–";
      lines.push(`| ${transport} | ${name} | ${ms(median(s.map((x) => x.cpuPerTurn)))} | ${ms(median(s.map((x) => x.wallMs)))} | ${ms(median(s.map((x) => percentile(x.latencies, 50))))} | ${ms(median(s.map((x) => percentile(x.latencies, 99))))} | ${median(s.map((x) => x.updatesPerTurn)).toFixed(0)} | ${median(s.map((x) => x.bytesPerTurn)).toFixed(0)} | ${median(s.map((x) => x.peakRssMb)).toFixed(0)} MB | ${setup} |`);
    }
    for (const [transport, name] of transports.flatMap((t) => agentNames.filter((n) => n !== "floor").map((n) => [t, n] as const))) {
      const floor = samples.get(`${transport} floor`)!;
      const serve = samples.get(`${transport} ${name}`)!;
      const ratio = (pick: (x: Sample) => number): string => `${(median(serve.map(pick)) / median(floor.map(pick))).toFixed(2)}×`;
      const setupGap = floor[0]?.setupMs ? `, connect+init+new p50 +${(median(serve.map((x) => median(x.setupMs!))) - median(floor.map((x) => median(x.setupMs!)))).toFixed(1)} ms` : "";
      lines.push(`${transport}: ${name} / floor — CPU per turn ${ratio((x) => x.cpuPerTurn)}, wall ${ratio((x) => x.wallMs)}, p99 ${ratio((x) => percentile(x.latencies, 99))}${setupGap}`);
    }
    lines.push("");
  }
  if (loads.has("c")) {
    lines.push(`Load (c): ${IDLE} idle connections, then one idle session on each (RSS growth, one run)`, "", "| transport | agent | per connection | per session |", "|---|---|---|---|");
    for (const transport of ["http", "ws"] as const) {
      for (const name of agentNames) {
        const { perConnectionKb, perSessionKb } = await once(name, (agent) => loadC(agent, transport));
        lines.push(`| ${transport} | ${name} | ${perConnectionKb.toFixed(0)} KiB | ${perSessionKb.toFixed(0)} KiB |`);
      }
    }
    lines.push("");
  }
  process.stdout.write(`${lines.join("\n")}\n`);
} finally {
  await model.close();
  rmSync(work, { recursive: true, force: true });
}
