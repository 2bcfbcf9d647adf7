/**
 * Service load: N concurrent sessions, each sending T prompts one after another (a scripted
 * model streams a 20-chunk reply per prompt), against
 *   - `serve` over stdio on the JSONL store (one process, one connection, N sessions),
 *   - `serve --listen` over Streamable HTTP on PostgreSQL, 1 instance and 2 instances (the
 *     clients alternate between them), one HTTP connection per session.
 * Reported: turns/s over the prompting phase, p50/p99 prompt latency, and for PostgreSQL the
 * rows written and transactions committed per turn (whole run: session/new, items, leases,
 * session/close; read from pg_stat after the instances have exited, which flushes their stats).
 *
 * PostgreSQL: AGENTKIT_BENCH_PG_URL, else a throwaway cluster (initdb + pg_ctl, as for the tests).
 * Run: npx tsx bench/service.ts [N=10,100] [turns=5]
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import pg from "pg";
import { TEST_PG_RUN_DIR_ENV, createTestDatabase, stopSharedPostgres, testPostgres } from "../test/support/postgres.js";
import { percentile } from "./support.js";

const sizes = (process.argv[2] ?? "10,100").split(",").map(Number);
const turns = Number(process.argv[3] ?? "5");
const root = fileURLToPath(new URL("..", import.meta.url));
const bin = join(root, "bin/agentkit-acp.js");
const TOKEN = "bench-token";
const REPLY_CHUNKS = 20;

interface Instance {
  child: ChildProcess;
  url: string | undefined;
  exited: Promise<void>;
  stop(): Promise<void>;
}

function startServe(args: string[], env: NodeJS.ProcessEnv, cwd: string, stdio: boolean): Promise<Instance> {
  // Info level: `serve --listen` logs the URL it listens on (the port is picked at start).
  const child = spawn(process.execPath, [bin, "serve", "--log-level", stdio ? "warn" : "info", "--max-sessions", "1000", ...args], {
    cwd,
    env: { ...process.env, ...env, AGENTKIT_ACP_TOKEN: TOKEN },
    stdio: stdio ? ["pipe", "pipe", "pipe"] : ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async (): Promise<void> => {
    if (stdio) child.stdin?.end();
    else child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    await exited;
    clearTimeout(timer);
  };
  if (stdio) return Promise.resolve({ child, url: undefined, exited, stop });
  return new Promise((resolve, reject) => {
    child.stderr!.on("data", (d: Buffer) => {
      stderr += d.toString();
      const match = /listening on (http:\/\/\S+\/acp)/.exec(stderr);
      if (match?.[1]) resolve({ child, url: match[1], exited, stop });
    });
    void exited.then(() => reject(new Error(`serve exited:\n${stderr}`)));
  });
}

/** One SDK client connection; `session()` opens a session whose `prompt()` times one turn. */
function connectClient(stream: acp.Stream) {
  const chunks = new Map<string, number>();
  const connection = acp
    .client({ name: "bench" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      if (params.update.sessionUpdate === "agent_message_chunk") chunks.set(params.sessionId, (chunks.get(params.sessionId) ?? 0) + 1);
    })
    .connect(stream);
  const { agent } = connection;
  return {
    init: () => agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} }),
    async session(cwd: string) {
      const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
      return {
        async prompt(): Promise<number> {
          chunks.set(sessionId, 0);
          const started = performance.now();
          const response = await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] });
          const ms = performance.now() - started;
          if (response.stopReason !== "end_turn" || chunks.get(sessionId) !== REPLY_CHUNKS) throw new Error(`got ${chunks.get(sessionId)} chunks, ${response.stopReason}`);
          return ms;
        },
        close: () => agent.request(acp.methods.agent.session.close, { sessionId }),
      };
    },
    close: () => connection.close(),
  };
}

type Client = ReturnType<typeof connectClient>;
type Session = Awaited<ReturnType<Client["session"]>>;

async function runLoad(sessions: Session[]): Promise<{ seconds: number; latencies: number[] }> {
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    sessions.map(async (s) => {
      for (let i = 0; i < turns; i++) latencies.push(await s.prompt());
    }),
  );
  return { seconds: (performance.now() - started) / 1000, latencies };
}

async function pgCounters(url: string): Promise<{ rows: number; commits: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const rows = await client.query<{ n: string }>("SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) AS n FROM pg_stat_user_tables");
    const commits = await client.query<{ n: string }>("SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()");
    return { rows: Number(rows.rows[0]?.n ?? 0), commits: Number(commits.rows[0]?.n ?? 0) };
  } finally {
    await client.end();
  }
}

interface Row {
  setup: string;
  n: number;
  turnsPerSecond: number;
  p50: number;
  p99: number;
  rowsPerTurn?: number;
  commitsPerTurn?: number;
}

async function stdioRun(n: number, script: string, work: string): Promise<Row> {
  const stateDir = mkdtempSync(join(work, "state-"));
  const instance = await startServe(["--model", `scripted:${script}`, "--state-dir", stateDir], {}, work, true);
  const client = connectClient(acp.ndJsonStream(Writable.toWeb(instance.child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(instance.child.stdout!) as ReadableStream<Uint8Array>));
  await client.init();
  const sessions = await Promise.all(Array.from({ length: n }, () => client.session(work)));
  const { seconds, latencies } = await runLoad(sessions);
  await Promise.all(sessions.map((s) => s.close()));
  client.close();
  await instance.stop();
  return { setup: "stdio, JSONL store (1 process)", n, turnsPerSecond: latencies.length / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

/** `serverUrl` undefined: one instance on the JSONL store (the transport's cost without PostgreSQL). */
async function httpRun(n: number, instancesWanted: number, script: string, work: string, serverUrl: string | undefined): Promise<Row> {
  const db = serverUrl === undefined ? undefined : await createTestDatabase(serverUrl, "bench");
  const store = db === undefined ? ["--state-dir", mkdtempSync(join(work, "state-"))] : ["--store", db.url];
  try {
    const instances: Instance[] = [];
    for (let i = 0; i < instancesWanted; i++) instances.push(await startServe(["--model", `scripted:${script}`, ...store, "--listen", "127.0.0.1:0"], {}, work, false));
    const before = db && (await pgCounters(db.url));
    const clients: Client[] = [];
    const sessions: Session[] = [];
    for (let i = 0; i < n; i++) {
      const url = instances[i % instances.length]!.url!;
      const client = connectClient(createHttpStream(url, { headers: { Authorization: `Bearer ${TOKEN}` } }));
      clients.push(client);
    }
    await Promise.all(clients.map((c) => c.init()));
    sessions.push(...(await Promise.all(clients.map((c) => c.session(work)))));
    const { seconds, latencies } = await runLoad(sessions);
    await Promise.all(sessions.map((s) => s.close()));
    for (const c of clients) c.close();
    await Promise.all(instances.map((i) => i.stop()));
    const row: Row = {
      setup: db ? `HTTP, PostgreSQL (${instancesWanted} instance${instancesWanted > 1 ? "s" : ""})` : "HTTP, JSONL store (1 instance)",
      n,
      turnsPerSecond: latencies.length / seconds,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
    };
    if (db && before) {
      // Backends flush their statistics when they exit; give the collector a moment to apply them.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const after = await pgCounters(db.url);
      row.rowsPerTurn = (after.rows - before.rows) / latencies.length;
      row.commitsPerTurn = (after.commits - before.commits - 2) / latencies.length;
    }
    return row;
  } finally {
    await db?.drop().catch(() => undefined);
  }
}

const work = mkdtempSync(join(tmpdir(), "agentkit-bench-service-"));
let runDir: string | undefined;
try {
  let serverUrl = process.env.AGENTKIT_BENCH_PG_URL;
  if (!serverUrl) {
    runDir = mkdtempSync(join(tmpdir(), "agentkit-bench-pg-"));
    process.env[TEST_PG_RUN_DIR_ENV] = runDir;
    const found = await testPostgres();
    if (!found.url) throw new Error(`no PostgreSQL: ${found.reason}`);
    serverUrl = found.url;
  }
  const script = join(work, "script.json");
  writeFileSync(script, JSON.stringify({ steps: [{ text: "A streamed reply of twenty chunks for the service benchmark.", chunks: REPLY_CHUNKS }], onExhausted: "repeat-last" }));
  const rows: Row[] = [];
  for (const n of sizes) {
    rows.push(await stdioRun(n, script, work));
    rows.push(await httpRun(n, 1, script, work, undefined));
    rows.push(await httpRun(n, 1, script, work, serverUrl));
    rows.push(await httpRun(n, 2, script, work, serverUrl));
  }
  process.stdout.write(`\n${turns} turns per session, ${REPLY_CHUNKS}-chunk replies (scripted model), Node ${process.version}\n\n`);
  process.stdout.write("| setup | sessions | turns/s | p50 prompt | p99 prompt | PostgreSQL rows written / turn | commits / turn |\n|---|---:|---:|---:|---:|---:|---:|\n");
  for (const r of rows) {
    const pgCols = r.rowsPerTurn === undefined ? "– | –" : `${r.rowsPerTurn.toFixed(1)} | ${r.commitsPerTurn!.toFixed(1)}`;
    process.stdout.write(`| ${r.setup} | ${r.n} | ${r.turnsPerSecond.toFixed(1)} | ${r.p50.toFixed(0)} ms | ${r.p99.toFixed(0)} ms | ${pgCols} |\n`);
  }
} finally {
  if (runDir) await stopSharedPostgres(runDir).catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
}
