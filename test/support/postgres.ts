import { execFile, spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { chown, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { delimiter, join } from "node:path";
import pg from "pg";

/**
 * Real PostgreSQL for tests. `AGENTKIT_TEST_PG_URL` given from outside (CI, a developer's own
 * server) is used as is. Otherwise the first test that asks starts one throwaway cluster for the
 * whole run (initdb + pg_ctl in a temp dir on a free port, as the `postgres` user when root); the
 * global setup's teardown stops it. Without server binaries the tests skip with the reason.
 */
export const TEST_PG_URL_ENV = "AGENTKIT_TEST_PG_URL";
/** Set by the global setup: where the run's shared cluster is described (and locked). */
export const TEST_PG_RUN_DIR_ENV = "AGENTKIT_TEST_PG_RUN_DIR";

export type TestPostgres = { url: string; reason?: undefined } | { url?: undefined; reason: string };

interface ClusterRecord {
  url?: string;
  reason?: string;
  base?: string;
  data?: string;
  pgCtl?: string;
  runAs?: string;
}

const START_TIMEOUT_MS = 120_000;

/** The run's PostgreSQL URL (starting the shared cluster on first use), or why there is none. */
export async function testPostgres(): Promise<TestPostgres> {
  const given = process.env[TEST_PG_URL_ENV];
  if (given) return { url: given };
  const runDir = process.env[TEST_PG_RUN_DIR_ENV];
  if (!runDir) return { reason: `${TEST_PG_RUN_DIR_ENV} is not set (run the tests through vitest's global setup)` };
  const record = await withDirLock(join(runDir, "lock"), async () => {
    const file = join(runDir, "cluster.json");
    if (existsSync(file)) return JSON.parse(await readFile(file, "utf8")) as ClusterRecord;
    const started = await startCluster().catch((error: unknown): ClusterRecord => ({ reason: `could not start PostgreSQL: ${String(error)}` }));
    await writeFile(file, JSON.stringify(started));
    return started;
  });
  return record.url ? { url: record.url } : { reason: record.reason ?? "unknown" };
}

/** CI sets this: no PostgreSQL is then a failure, not a skip. */
export const TEST_PG_REQUIRED_ENV = "AGENTKIT_TEST_PG_REQUIRED";

/** Skips with a printed reason: `const pg = await postgresOrSkip("store contract");` then `describe.runIf(pg.url)`. */
export async function postgresOrSkip(what: string): Promise<TestPostgres> {
  const found = await testPostgres();
  if (found.url) return found;
  if (process.env[TEST_PG_REQUIRED_ENV] === "1") throw new Error(`${what} need PostgreSQL (${TEST_PG_REQUIRED_ENV}=1): ${found.reason}`);
  process.stderr.write(`[postgres] skipping ${what}: ${found.reason}\n`);
  return found;
}

/** A new empty database on the server (isolation per test file or per test); dropped by `drop`. */
export async function createTestDatabase(url: string, prefix = "t"): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  await adminQuery(url, `CREATE DATABASE ${name}`);
  const target = new URL(url);
  target.pathname = `/${name}`;
  return {
    url: target.toString(),
    drop: () => adminQuery(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Called by the global setup's teardown: stops the cluster this run started, if any. */
export async function stopSharedPostgres(runDir: string): Promise<void> {
  const file = join(runDir, "cluster.json");
  if (existsSync(file)) {
    const record = JSON.parse(await readFile(file, "utf8")) as ClusterRecord;
    if (record.data && record.pgCtl) await run(record.pgCtl, ["-D", record.data, "-m", "immediate", "-w", "-t", "30", "stop"], record.runAs).catch(() => undefined);
    if (record.base) await rm(record.base, { recursive: true, force: true });
  }
  await rm(runDir, { recursive: true, force: true });
}

function binDirs(): string[] {
  const dirs = (process.env.PATH ?? "").split(delimiter).filter(Boolean);
  dirs.push("/usr/local/bin");
  const lib = "/usr/lib/postgresql";
  if (existsSync(lib)) for (const v of readdirSync(lib).sort((a, b) => Number(b) - Number(a))) dirs.push(join(lib, v, "bin"));
  return dirs;
}

function findServerBinaries(): { initdb: string; pgCtl: string } | undefined {
  for (const dir of binDirs()) {
    const initdb = join(dir, "initdb");
    const pgCtl = join(dir, "pg_ctl");
    if (existsSync(initdb) && existsSync(pgCtl)) return { initdb, pgCtl };
  }
  return undefined;
}

async function startCluster(): Promise<ClusterRecord> {
  const bins = findServerBinaries();
  if (!bins) return { reason: "no PostgreSQL server binaries (initdb, pg_ctl) on PATH or in /usr/lib/postgresql/*/bin; install postgresql or set AGENTKIT_TEST_PG_URL" };
  let runAs: string | undefined;
  if (userInfo().uid === 0) {
    // initdb refuses root; the Debian packages create a `postgres` user.
    const ids = await run("id", ["-u", "postgres"]).catch(() => undefined);
    if (ids === undefined) return { reason: "running as root and there is no `postgres` user to run initdb/pg_ctl as" };
    runAs = "postgres";
  }
  const base = await mkdtemp(join(tmpdir(), "agentkit-pg-"));
  const data = join(base, "data");
  await mkdir(data, { mode: 0o700 });
  if (runAs) {
    const [uid, gid] = await Promise.all([run("id", ["-u", runAs]), run("id", ["-g", runAs])]);
    await chown(base, Number(uid.trim()), Number(gid.trim()));
    await chown(data, Number(uid.trim()), Number(gid.trim()));
  }
  await run(bins.initdb, ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"], runAs);
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const opts = serverOptions(port, base);
    try {
      await run(bins.pgCtl, ["-D", data, "-l", join(base, "server.log"), "-w", "-t", "60", "-o", opts, "start"], runAs);
      startWatchdog(base, data, bins.pgCtl, runAs);
      return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, base, data, pgCtl: bins.pgCtl, ...(runAs ? { runAs } : {}) };
    } catch (error) {
      lastError = error; // most likely the port was taken between probe and start
    }
  }
  await rm(base, { recursive: true, force: true });
  throw lastError;
}

// fsync off: the tests kill agentkit processes, never the database; durability of commits is PostgreSQL's.
function serverOptions(port: string | number, base: string): string {
  return `-p ${port} -k ${base} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=300`;
}

/**
 * For benchmarks: restarts the run's shared cluster with more server options after the tests' own
 * (later `-c` settings win, e.g. `-c fsync=on`), and returns the postmaster's pid (its CPU and
 * its children's are the server's). Only a cluster this run started (not AGENTKIT_TEST_PG_URL).
 */
export async function restartSharedPostgres(runDir: string, extraOptions: string): Promise<{ url: string; postmasterPid: number }> {
  const record = JSON.parse(await readFile(join(runDir, "cluster.json"), "utf8")) as ClusterRecord;
  if (!record.url || !record.data || !record.pgCtl || !record.base) throw new Error(`no cluster of this run to restart: ${record.reason ?? "started elsewhere"}`);
  const opts = `${serverOptions(new URL(record.url).port, record.base)} ${extraOptions}`;
  await run(record.pgCtl, ["-D", record.data, "-l", join(record.base, "server.log"), "-w", "-t", "60", "-m", "fast", "-o", opts, "restart"], record.runAs);
  const pid = Number((await readFile(join(record.data, "postmaster.pid"), "utf8")).split("\n")[0]);
  return { url: record.url, postmasterPid: pid };
}

/**
 * The global teardown stops the cluster; if the test run itself is killed (a `timeout`, Ctrl-C)
 * there is no teardown, so a small detached process watches the vitest main process (this
 * worker's parent) and stops the cluster when it is gone. It exits as soon as the cluster's
 * directory is removed (the normal teardown).
 */
const WATCHDOG = `
const [pid, base, data, pgCtl, runAs] = process.argv.slice(1);
const { existsSync, rmSync } = require("node:fs");
const { spawnSync } = require("node:child_process");
setInterval(() => {
  if (!existsSync(base)) process.exit(0);
  try { process.kill(Number(pid), 0); return; } catch {}
  const args = ["-D", data, "-m", "immediate", "-w", "-t", "30", "stop"];
  if (runAs) spawnSync("runuser", ["-u", runAs, "--", pgCtl, ...args], { timeout: 40000, stdio: "ignore" });
  else spawnSync(pgCtl, args, { timeout: 40000, stdio: "ignore" });
  rmSync(base, { recursive: true, force: true });
  process.exit(0);
}, 1000);
`;

function startWatchdog(base: string, data: string, pgCtl: string, runAs: string | undefined): void {
  const child = spawn(process.execPath, ["-e", WATCHDOG, String(process.ppid), base, data, pgCtl, runAs ?? ""], { detached: true, stdio: "ignore", cwd: tmpdir() });
  child.unref();
}

function run(command: string, args: string[], runAs?: string): Promise<string> {
  const [cmd, argv] = runAs ? ["runuser", ["-u", runAs, "--", command, ...args]] : [command, args];
  return new Promise((resolve, reject) => {
    execFile(cmd, argv, { timeout: START_TIMEOUT_MS, cwd: tmpdir(), encoding: "utf8" }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(" ")} failed: ${error.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** A cross-process lock (mkdir is atomic): test workers of one run start one cluster between them. */
async function withDirLock<T>(dir: string, task: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    try {
      await mkdir(dir);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${dir}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  try {
    return await task();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
