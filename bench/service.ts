/**
 * PostgreSQL against the JSONL store, per turn (issue #28 item 3), on a throwaway cluster run
 * durably (fsync on, full_page_writes on; the tests' cluster runs with fsync off) with
 * pg_stat_statements loaded.
 *
 * 1. What a turn sends: `serve --store postgres://…` with a scripted model, one session, its turns
 *    one after another; around each turn the bench reads pg_stat_statements (every statement the
 *    turn's database sessions ran: round trips, rows) and the next transaction id (one per
 *    transaction that wrote: commits). Turn 1 (it also stores the title), text turns, and turns
 *    with one tool call (read_file, then the reply).
 * 2. Load (b) of bench/service-floor.ts: C connections with one session each over Streamable HTTP,
 *    T turns each, all at once (connect + initialize + session/new one at a time beforehand), the
 *    loopback mock model streaming D deltas per turn; `serve --listen` on the JSONL store and on
 *    PostgreSQL, interleaved, a fresh process (and database) per run. CPU per turn counts serve's
 *    process (all threads) and, for PostgreSQL, the server's: the postmaster and all its children
 *    (backends, WAL writer, checkpointer, …) from /proc, over the prompting phase. The JSONL
 *    store's fdatasync work done by the kernel's journal thread is counted on neither side.
 *
 * Run: npm run build && npx tsx bench/service.ts [rounds=3] [connections=100] [turns=3] [deltas=400]
 * BENCH_SERVE_ARGS adds arguments to `serve` (both stores); BENCH_PG_OPTIONS adds server options
 * (e.g. `-c synchronous_commit=off` to see what waiting for the WAL flush costs). BENCH_BASELINE=DIR adds the `serve` of
 * another built checkout on PostgreSQL (e.g. main: `git worktree add`, node_modules linked,
 * `npm run build`): its statements per turn, and one more interleaved row under load.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import pg from "pg";
import { TEST_PG_RUN_DIR_ENV, createTestDatabase, restartSharedPostgres, stopSharedPostgres, testPostgres } from "../test/support/postgres.js";
import { cpuMs, median, percentile, startMockModel } from "./support.js";

delete process.env.NODE_EXTRA_CA_CERTS; // loopback only; it costs each Node start ~50 ms of CPU
const rounds = Number(process.argv[2] ?? "3");
const connections = Number(process.argv[3] ?? "100");
const turns = Number(process.argv[4] ?? "3");
const deltas = Number(process.argv[5] ?? "400");
const root = fileURLToPath(new URL("..", import.meta.url));
const TOKEN = "bench-token";
const extraServeArgs = (process.env.BENCH_SERVE_ARGS ?? "").split(" ").filter(Boolean);
const baseline = process.env.BENCH_BASELINE;
process.on("unhandledRejection", (error) => process.stderr.write(`(a client connection failed: ${String(error)})\n`));

interface Listening {
  pid: number;
  url: string;
  stop(): Promise<void>;
}

function startServe(args: string[], cwd: string, checkout = root): Promise<Listening> {
  const child = spawn(process.execPath, [join(checkout, "bin/agentkit-acp.js"), "serve", "--listen", "127.0.0.1:0", "--log-level", "info", "--max-sessions", "5000", "--max-connections", "5000", ...args, ...extraServeArgs], {
    cwd,
    env: { ...process.env, AGENTKIT_ACP_TOKEN: TOKEN },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async (): Promise<void> => {
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    await exited;
    clearTimeout(timer);
  };
  let stderr = "";
  return new Promise((resolve, reject) => {
    child.stderr.on("data", (data: Buffer) => {
      stderr += data.toString();
      const url = /listening on (http:\/\/\S+\/acp)/.exec(stderr)?.[1];
      if (url) resolve({ pid: child.pid!, url, stop });
    });
    void exited.then(() => reject(new Error(`serve exited before listening:\n${stderr}`)));
  });
}

/** One SDK client connection over Streamable HTTP; permission requests are allowed. */
function connect(url: string) {
  const text = new Map<string, string>();
  const connection = acp
    .client({ name: "bench" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      const update = params.update;
      if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") text.set(params.sessionId, (text.get(params.sessionId) ?? "") + update.content.text);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      const allow = params.options.find((o) => o.kind === "allow_once") ?? params.options[0]!;
      return { outcome: { outcome: "selected", optionId: allow.optionId } };
    })
    .connect(createHttpStream(url, { headers: { Authorization: `Bearer ${TOKEN}` } }));
  const { agent } = connection;
  return {
    init: () => agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} }),
    async session(cwd: string, expected: string | undefined) {
      const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
      return {
        async prompt(): Promise<number> {
          text.set(sessionId, "");
          const started = performance.now();
          const response = await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "stream" }] });
          const ms = performance.now() - started;
          const got = text.get(sessionId) ?? "";
          if (response.stopReason !== "end_turn" || (expected !== undefined && got !== expected)) throw new Error(`turn: ${response.stopReason}, ${got.length} characters`);
          return ms;
        },
      };
    },
    close: () => connection.close(),
  };
}

/** CPU (ms) of a process and all its children (the PostgreSQL server: postmaster, backends, WAL writer, …). */
function treeCpuMs(parent: number): number {
  let total = cpuMs(parent);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === parent) total += cpuMs(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

// ---- 1. statements per turn -------------------------------------------------------------------

interface Snapshot {
  calls: Map<string, number>;
  rows: number;
  xid: number;
}

async function snapshot(admin: pg.Client, database: string): Promise<Snapshot> {
  const { rows } = await admin.query<{ query: string; calls: string; rows: string }>(
    `SELECT query, calls, rows FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1)`,
    [database],
  );
  const calls = new Map<string, number>();
  let written = 0;
  for (const r of rows) {
    const key = r.query.replace(/\s+/g, " ").replace(/"[a-z_]+"\./g, "").slice(0, 110);
    calls.set(key, (calls.get(key) ?? 0) + Number(r.calls));
    if (/^\s*(INSERT|UPDATE|DELETE|WITH)/i.test(r.query)) written += Number(r.rows);
  }
  const xid = await admin.query<{ xid: string }>("SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xid");
  return { calls, rows: written, xid: Number(xid.rows[0]!.xid) };
}

interface TurnCount {
  roundTrips: number;
  commits: number;
  rows: number;
  statements: Map<string, number>;
}

function diff(before: Snapshot, after: Snapshot): TurnCount {
  const statements = new Map<string, number>();
  let roundTrips = 0;
  for (const [query, n] of after.calls) {
    const d = n - (before.calls.get(query) ?? 0);
    if (d > 0) statements.set(query, d);
    roundTrips += d;
  }
  return { roundTrips, commits: after.xid - before.xid, rows: after.rows - before.rows, statements };
}

async function countPerTurn(serverUrl: string, work: string, checkout: string): Promise<string[]> {
  const db = await createTestDatabase(serverUrl, "benchcount");
  const database = new URL(db.url).pathname.slice(1);
  const script = join(work, "count-script.json");
  const reply = { text: "A reply of four chunks.", chunks: 4 };
  writeFileSync(join(work, "notes.txt"), "what the tool reads\n");
  const tool = { toolCall: { name: "read_file", input: { path: join(work, "notes.txt") } } };
  writeFileSync(script, JSON.stringify({ steps: [reply, reply, reply, tool, reply, tool, reply, tool, reply], onExhausted: "repeat-last" }));
  const serve = await startServe(["--model", `scripted:${script}`, "--store", db.url], work, checkout);
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    const client = connect(serve.url);
    await client.init();
    let before = await snapshot(admin, database);
    const session = await client.session(work, undefined);
    let after = await snapshot(admin, database);
    const counts: Array<[string, TurnCount]> = [["session/new", diff(before, after)]];
    for (let turn = 1; turn <= 6; turn++) {
      before = after;
      await session.prompt();
      after = await snapshot(admin, database);
      counts.push([turn === 1 ? "turn 1 (text; stores the title)" : turn <= 3 ? `turn ${turn} (text)` : `turn ${turn} (one tool call)`, diff(before, after)]);
    }
    client.close();
    const lines = ["| step | round trips | commits | rows written | statements (calls) |", "|---|---:|---:|---:|---|"];
    for (const [label, c] of counts) {
      const statements = [...c.statements].map(([q, n]) => `${n}× \`${q.replaceAll("|", "\\|")}\``).join("<br>");
      lines.push(`| ${label} | ${c.roundTrips} | ${c.commits} | ${c.rows} | ${statements} |`);
    }
    return lines;
  } finally {
    await admin.end();
    await serve.stop();
    await db.drop().catch(() => undefined);
  }
}

// ---- 2. load (b) ------------------------------------------------------------------------------

interface Sample {
  turnsPerSecond: number;
  serveCpuPerTurn: number;
  dbCpuPerTurn: number;
  p50: number;
  p99: number;
  setupMs: number[];
  /** PostgreSQL: statements and write transactions per turn over the prompting phase. */
  roundTrips?: number;
  commits?: number;
}

/** Where load (b) counts PostgreSQL's statements: the server's pid and an admin connection, and the database. */
interface PgProbe {
  postmasterPid: number;
  admin: pg.Client;
  database: string;
}

async function loadB(store: string[], modelText: string, work: string, probe: PgProbe | undefined, checkout = root): Promise<Sample> {
  const serve = await startServe(store, work, checkout);
  try {
    const clients: ReturnType<typeof connect>[] = [];
    const sessions: Array<{ prompt(): Promise<number> }> = [];
    const setupMs: number[] = [];
    for (let i = 0; i < connections; i++) {
      const started = performance.now();
      const client = connect(serve.url);
      await client.init();
      sessions.push(await client.session(work, modelText));
      setupMs.push(performance.now() - started);
      clients.push(client);
    }
    const counted = probe && (await snapshot(probe.admin, probe.database));
    const serveBefore = cpuMs(serve.pid);
    const dbBefore = probe === undefined ? 0 : treeCpuMs(probe.postmasterPid);
    const latencies: number[] = [];
    const started = performance.now();
    await Promise.all(sessions.map(async (s) => { for (let i = 0; i < turns; i++) latencies.push(await s.prompt()); }));
    const seconds = (performance.now() - started) / 1000;
    const count = latencies.length;
    const sample = {
      turnsPerSecond: count / seconds,
      serveCpuPerTurn: (cpuMs(serve.pid) - serveBefore) / count,
      dbCpuPerTurn: probe === undefined ? 0 : (treeCpuMs(probe.postmasterPid) - dbBefore) / count,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      setupMs,
    };
    if (probe && counted) {
      const d = diff(counted, await snapshot(probe.admin, probe.database));
      Object.assign(sample, { roundTrips: d.roundTrips / count, commits: d.commits / count });
    }
    for (const client of clients) client.close();
    return sample;
  } finally {
    await serve.stop();
  }
}

const work = mkdtempSync(join(tmpdir(), "agentkit-bench-service-"));
const runDir = mkdtempSync(join(tmpdir(), "agentkit-bench-pg-"));
const model = await startMockModel(deltas);
let admin: pg.Client | undefined;
try {
  process.env[TEST_PG_RUN_DIR_ENV] = runDir;
  delete process.env.AGENTKIT_TEST_PG_URL;
  const found = await testPostgres();
  if (!found.url) throw new Error(`no PostgreSQL: ${found.reason}`);
  const { url: serverUrl, postmasterPid } = await restartSharedPostgres(runDir, `-c fsync=on -c full_page_writes=on -c shared_preload_libraries=pg_stat_statements ${process.env.BENCH_PG_OPTIONS ?? ""}`);
  admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");

  const lines = [`Node ${process.version}; PostgreSQL with fsync on; per turn, one session, its turns one after another (scripted model):`, ""];
  if (baseline) lines.push(`Baseline (${baseline}):`, "", ...(await countPerTurn(serverUrl, work, baseline)), "", "This checkout:", "");
  lines.push(...(await countPerTurn(serverUrl, work, root)), "");

  const serveModel = ["--model", "openai-compatible:mock", "--base-url", model.baseUrl];
  const samples: Record<string, Sample[]> = { jsonl: [], postgres: [], ...(baseline ? { "postgres (baseline)": [] } : {}) };
  for (let round = 0; round < rounds; round++) {
    samples.jsonl!.push(await loadB([...serveModel, "--state-dir", mkdtempSync(join(work, "state-"))], model.text, work, undefined));
    for (const [name, checkout] of [["postgres", root], ...(baseline ? [["postgres (baseline)", baseline]] : [])] as const) {
      const db = await createTestDatabase(serverUrl, "benchload");
      try {
        const probe = { postmasterPid, admin, database: new URL(db.url).pathname.slice(1) };
        samples[name]!.push(await loadB([...serveModel, "--store", db.url], model.text, work, probe, checkout));
      } finally {
        await db.drop().catch(() => undefined);
      }
    }
  }
  const ms = (v: number): string => `${v.toFixed(1)} ms`;
  lines.push(`Load (b): ${connections} connections over Streamable HTTP, one session each, ${turns} turns each, all at once, ${deltas} deltas per turn; median of ${rounds} interleaved runs`, "");
  lines.push("| store | turns/s | CPU / turn: serve | CPU / turn: PostgreSQL server | CPU / turn: total | p50 turn | p99 turn | connect+init+new p50 | round trips / turn | commits / turn |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  const total = (s: Sample): number => s.serveCpuPerTurn + s.dbCpuPerTurn;
  const pgColumn = (s: Sample[], pick: (x: Sample) => number | undefined): string => (s[0] && pick(s[0]) !== undefined ? median(s.map((x) => pick(x)!)).toFixed(2) : "–");
  for (const [name, s] of Object.entries(samples)) {
    lines.push(`| ${name} | ${median(s.map((x) => x.turnsPerSecond)).toFixed(1)} | ${ms(median(s.map((x) => x.serveCpuPerTurn)))} | ${name === "jsonl" ? "–" : ms(median(s.map((x) => x.dbCpuPerTurn)))} | ${ms(median(s.map(total)))} | ${ms(median(s.map((x) => x.p50)))} | ${ms(median(s.map((x) => x.p99)))} | ${ms(median(s.map((x) => median(x.setupMs))))} | ${pgColumn(s, (x) => x.roundTrips)} | ${pgColumn(s, (x) => x.commits)} |`);
  }
  lines.push("");
  for (const name of Object.keys(samples).filter((n) => n !== "jsonl")) {
    const ratio = (pick: (x: Sample) => number): string => `${(median(samples[name]!.map(pick)) / median(samples.jsonl!.map(pick))).toFixed(2)}×`;
    lines.push(`${name} / jsonl — CPU per turn (serve + server) ${ratio(total)}, serve's alone ${ratio((x) => x.serveCpuPerTurn)}, turns/s ${ratio((x) => x.turnsPerSecond)}, p99 ${ratio((x) => x.p99)}`);
  }
  process.stdout.write(`${lines.join("\n")}\n`);
} finally {
  await admin?.end().catch(() => undefined);
  await model.close();
  await stopSharedPostgres(runDir).catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
}
