/**
 * Sessions at scale: `list` pages, a cold start and a long session's load over the JSONL store
 * (and PostgreSQL with --pg), at up to 100,000 sessions.
 *
 * Run: npx tsx bench/store-scale.ts [--sessions 100000] [--items 10000] [--pages 40] [--walk] [--pg] [--only pg]
 *   --sessions N  sessions to build (default 100,000)
 *   --owners N    principals the sessions are spread over (default 1,000; PostgreSQL per-owner page)
 *   --items N     items in the one long session (default 10,000)
 *   --pages N     further pages timed after the first (default 40; each is a separate call)
 *   --walk        also walk every page to the end (JSONL: before the index this was quadratic)
 *   --pg          the same on PostgreSQL: AGENTKIT_BENCH_PG_URL, else a throwaway cluster
 *                 (test/support/postgres.ts, stopped at the end); also a deep page, one
 *                 owner's page, and EXPLAIN ANALYZE of each (printed: the keyset uses an index)
 *   --only pg     skip the JSONL store
 *
 * JSONL sessions are built by a documented fast path: each file is written with exactly the
 * bytes `JsonlSessionStore.create` writes (`headerLine(newHeader(...))`, the same name, mode
 * 0600), without the per-session fsync that makes 100,000 creates take minutes; the long
 * session's items go through `store.append`'s record format (`itemLine`). Times are
 * wall-clock per call (median and max), RSS growth by `process.memoryUsage().rss`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { mkdir, readdir, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Item } from "../src/core/index.js";
import { JsonlSessionStore, type SessionStore } from "../src/store/index.js";
import { newHeader } from "../src/store/header.js";
import { headerLine, itemLine } from "../src/store/records.js";
import { sessionFileStem } from "../src/store/session-ids.js";
import { median } from "./support.js";

const { values } = parseArgs({
  options: {
    sessions: { type: "string" },
    owners: { type: "string" },
    items: { type: "string" },
    pages: { type: "string" },
    walk: { type: "boolean" },
    pg: { type: "boolean" },
    only: { type: "string" },
  },
});
const SESSIONS = Number(values.sessions ?? 100_000);
const ITEMS = Number(values.items ?? 10_000);
const PAGES = Number(values.pages ?? 40);
const OWNERS = Number(values.owners ?? 1000);
const LONG_ID = "long-session";

function item(n: number): Item {
  return { id: `item-${n}`, role: n % 2 === 0 ? "user" : "assistant", parts: [{ type: "text", text: `message ${n}: ${"lorem ipsum ".repeat(8)}` }], createdAt: new Date(Date.UTC(2025, 0, 1) + n).toISOString() };
}

/** The n-th session's header, with distinct times (one second apart) and a few cwds. */
function headerFor(n: number) {
  const createdAt = new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();
  return newHeader(
    { sessionId: `sess-${String(n).padStart(6, "0")}`, owner: ownerOf(n), cwd: `/work/project-${n % 7}`, title: `session ${n}: a first prompt of typical length`, createdAt },
    new Date(createdAt),
  );
}

function ownerOf(n: number): string {
  return `principal-${n % OWNERS}`;
}

async function buildJsonl(stateDir: string): Promise<void> {
  const dir = join(stateDir, "sessions");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  for (let n = 0; n < SESSIONS; n++) {
    const header = headerFor(n);
    writeFileSync(join(dir, `${sessionFileStem(header.sessionId)!}.jsonl`), headerLine(header), { mode: 0o600 });
  }
  const long = newHeader({ sessionId: LONG_ID, cwd: "/work/long" }, new Date(Date.UTC(2025, 0, 1)));
  const lines = [headerLine(long)];
  for (let n = 0; n < ITEMS; n++) lines.push(itemLine(item(n), new Date(Date.UTC(2025, 0, 1) + n).toISOString()));
  writeFileSync(join(dir, `${sessionFileStem(LONG_ID)!}.jsonl`), lines.join(""), { mode: 0o600 });
}

async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await run();
  return { ms: performance.now() - started, value };
}

interface Figures {
  store: string;
  cold: number;
  coldSnapshot?: number;
  warmFirst: number;
  nextMedian: number;
  nextMax: number;
  walk?: { pages: number; seconds: number };
  deep?: number;
  ownerFirst?: number;
  /** session/load of the long session through serve's runtime: first replayed update, answer, peak RSS growth. */
  replay?: { firstMs: number; totalMs: number; peakRssMb: number; updates: number };
  load: { ms: number; rssMb: number; items: number };
  diskMb?: number;
}

async function measure(name: string, open: () => SessionStore, reopen?: () => SessionStore): Promise<Figures> {
  const store = open();
  const cold = await timed(() => store.list({ limit: 50 }));
  const coldSnapshot = reopen ? (await timed(() => reopen().list({ limit: 50 }))).ms : undefined;
  const warm = await timed(() => store.list({ limit: 50 }));
  const next: number[] = [];
  let cursor = warm.value.nextCursor;
  for (let p = 0; p < PAGES && cursor !== undefined; p++) {
    const page = await timed(() => store.list({ limit: 50, cursor }));
    next.push(page.ms);
    cursor = page.value.nextCursor;
  }
  let walk: Figures["walk"];
  if (values.walk) {
    const started = performance.now();
    let pages = 0;
    for (let c: string | undefined = undefined; ; ) {
      const page = await store.list({ limit: 50, ...(c !== undefined ? { cursor: c } : {}) });
      pages += 1;
      c = page.nextCursor;
      if (c === undefined) break;
    }
    walk = { pages, seconds: (performance.now() - started) / 1000 };
  }
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const load = await timed(() => store.load(LONG_ID));
  const rssMb = (process.memoryUsage().rss - rssBefore) / 1024 / 1024;
  return { store: name, cold: cold.ms, ...(coldSnapshot !== undefined ? { coldSnapshot } : {}), warmFirst: warm.ms, nextMedian: median(next), nextMax: Math.max(...next), ...(walk ? { walk } : {}), load: { ms: load.ms, rssMb, items: load.value?.items.length ?? 0 } };
}

async function diskUse(dir: string): Promise<number> {
  let bytes = 0;
  for (const name of await readdir(dir)) bytes += (await stat(join(dir, name))).blocks * 512;
  return bytes / 1024 / 1024;
}

const work = mkdtempSync(join(tmpdir(), "agentkit-store-scale-"));
const rows: Figures[] = [];
const plans: string[] = [];
try {
  if (values.only !== "pg") {
    const stateDir = join(work, "state");
    const built = await timed(() => buildJsonl(stateDir));
    process.stderr.write(`built ${SESSIONS} JSONL sessions + one of ${ITEMS} items in ${(built.ms / 1000).toFixed(1)} s\n`);
    const jsonl = await measure("JSONL", () => new JsonlSessionStore({ stateDir }), () => new JsonlSessionStore({ stateDir }));
    jsonl.diskMb = await diskUse(join(stateDir, "sessions"));
    jsonl.replay = await replayFigures({ stateDir }, work);
    rows.push(jsonl);
  }
  if (values.pg || values.only === "pg") rows.push(await postgresFigures(work));
} finally {
  rmSync(work, { recursive: true, force: true });
}

const f = (ms: number | undefined): string => (ms === undefined ? "–" : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);
process.stdout.write(`\n${SESSIONS} sessions; pages of 50 (Node ${process.versions.node})\n\n`);
process.stdout.write("| store | cold first page (no snapshot) | cold (snapshot) | warm first page | next pages: median / max | deep page | one owner's first page | whole walk | load of " + ITEMS + " items (RSS growth) | disk |\n|---|---|---|---|---|---|---|---|---|---|\n");
for (const r of rows) {
  const walk = r.walk ? `${r.walk.pages} pages in ${r.walk.seconds.toFixed(1)} s` : "–";
  process.stdout.write(
    `| ${r.store} | ${f(r.cold)} | ${f(r.coldSnapshot)} | ${f(r.warmFirst)} | ${f(r.nextMedian)} / ${f(r.nextMax)} | ${f(r.deep)} | ${f(r.ownerFirst)} | ${walk} | ${f(r.load.ms)} (${r.load.rssMb.toFixed(0)} MB) | ${r.diskMb !== undefined ? `${r.diskMb.toFixed(0)} MB` : "–"} |\n`,
  );
}
process.stdout.write(`\nsession/load of the ${ITEMS}-item session through serve's runtime (official SDK client, in-memory pipes):\n\n| store | first replayed update | answer (all replayed) | peak RSS growth | updates |\n|---|---|---|---|---|\n`);
for (const r of rows) {
  if (r.replay) process.stdout.write(`| ${r.store} | ${f(r.replay.firstMs)} | ${f(r.replay.totalMs)} | ${r.replay.peakRssMb.toFixed(0)} MB | ${r.replay.updates} |\n`);
}
for (const plan of plans) process.stdout.write(`\n${plan}\n`);

/** session/load of LONG_ID through the runtime `serve` builds (demo model), timed at the client; RSS sampled every 5 ms. */
async function replayFigures(where: { stateDir?: string; storeUrl?: string }, work: string): Promise<Figures["replay"]> {
  const { createServeRuntime } = await import("../src/serve/runtime.js");
  const { serveInMemory } = await import("../src/testing/index.js");
  const { silentLogger } = await import("../src/core/index.js");
  const acp = await import("@agentclientprotocol/sdk");
  const cwd = join(work, "long-cwd");
  await mkdir(cwd, { recursive: true });
  const served = await createServeRuntime({ ...where, model: "demo", logger: silentLogger, env: {} });
  const pair = serveInMemory(served.runtime);
  try {
    await pair.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "bench", version: "1" } });
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    const started = performance.now();
    let firstMs = -1;
    void pair.client.waitFor(() => pair.client.notifications.length > 0, "first update", 60_000).then(() => (firstMs = performance.now() - started));
    await pair.agent.request(acp.methods.agent.session.load, { sessionId: LONG_ID, cwd, mcpServers: [] });
    const totalMs = performance.now() - started;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    return { firstMs, totalMs, peakRssMb: (peak - before) / 1024 / 1024, updates: pair.client.notifications.length };
  } finally {
    await pair.close();
    await served.state.close();
  }
}

/** A cursor about 90 % into the list: pages of 1000 walked to there. */
async function deepCursor(store: SessionStore): Promise<string | undefined> {
  let cursor: string | undefined;
  for (let p = 0; p < Math.floor((SESSIONS * 0.9) / 1000); p++) cursor = (await store.list({ limit: 1000, ...(cursor !== undefined ? { cursor } : {}) })).nextCursor;
  return cursor;
}

async function postgresFigures(work: string): Promise<Figures> {
  const { openPostgresStore } = await import("../src/store/postgres/index.js");
  const { listStatement } = await import("../src/store/postgres/session-store.js");
  const { pageQuery } = await import("../src/store/pagination.js");
  const { createTestDatabase, testPostgres, stopSharedPostgres, TEST_PG_RUN_DIR_ENV } = await import("../test/support/postgres.js");
  const given = process.env.AGENTKIT_BENCH_PG_URL;
  const runDir = join(work, "pg-run");
  if (given === undefined) {
    await mkdir(runDir, { recursive: true });
    process.env[TEST_PG_RUN_DIR_ENV] = runDir;
  }
  try {
    const server = given !== undefined ? { url: given } : await testPostgres();
    if (server.url === undefined) throw new Error(`PostgreSQL: ${server.reason ?? "not available"}`);
    const db = await createTestDatabase(server.url, "scale");
    const opened = await openPostgresStore({ url: db.url });
    try {
      const store = opened.sessions;
      const started = performance.now();
      // Through the store API, in parallel batches (one commit per create is the store's contract).
      for (let n = 0; n < SESSIONS; n += 200) {
        await Promise.all(
          Array.from({ length: Math.min(200, SESSIONS - n) }, (_, i) => {
            const h = headerFor(n + i);
            return store.create({ sessionId: h.sessionId, owner: h.owner, cwd: h.cwd, title: h.title!, createdAt: h.createdAt });
          }),
        );
      }
      await store.create({ sessionId: LONG_ID, cwd: "/work/long", createdAt: new Date(Date.UTC(2025, 0, 1)).toISOString() });
      for (let n = 0; n < ITEMS; n += 100) await Promise.all(Array.from({ length: Math.min(100, ITEMS - n) }, (_, i) => store.append(LONG_ID, item(n + i))));
      await opened.db.query("ANALYZE");
      process.stderr.write(`built ${SESSIONS} PostgreSQL sessions in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
      // Cold: a new instance (new pool) answering its first page.
      const fresh = await openPostgresStore({ url: db.url });
      const cold = await timed(() => fresh.sessions.list({ limit: 50 }));
      await fresh.close();
      const figures = await measure("PostgreSQL", () => store);
      figures.replay = await replayFigures({ storeUrl: db.url }, work);
      figures.cold = cold.ms;
      const deep = await deepCursor(store);
      figures.deep = (await timed(() => store.list({ limit: 50, ...(deep !== undefined ? { cursor: deep } : {}) }))).ms;
      const owner = ownerOf(7);
      figures.ownerFirst = (await timed(() => store.list({ limit: 50, owner }))).ms;
      const ownerPage = await store.list({ limit: 5, owner });
      const table = opened.db.table("agentkit_sessions");
      const explain = async (what: string, options: Parameters<typeof pageQuery>[0]): Promise<void> => {
        const { text, values: params } = listStatement(table, pageQuery(options));
        const { rows: lines } = await opened.db.query<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ${text}`, params);
        plans.push(`EXPLAIN ANALYZE — ${what}:\n${lines.map((l) => `    ${l["QUERY PLAN"]}`).join("\n")}`);
      };
      await explain("first page", { limit: 50 });
      await explain("a page 90 % deep (keyset)", { limit: 50, ...(deep !== undefined ? { cursor: deep } : {}) });
      await explain(`one owner's first page (${OWNERS} owners)`, { limit: 50, owner });
      await explain("one owner's next page", { limit: 50, owner, ...(ownerPage.nextCursor !== undefined ? { cursor: ownerPage.nextCursor } : {}) });
      return figures;
    } finally {
      await opened.close();
      await db.drop();
    }
  } finally {
    if (given === undefined) await stopSharedPostgres(runDir);
  }
}
