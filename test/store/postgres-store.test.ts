import type { ChildProcess } from "node:child_process";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Client as PgClient } from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/index.js";
import type { Item } from "../../src/core/index.js";
import { PostgresApprovalMemoryStore, PostgresStoreError, SCHEMA_VERSION, openPostgresStore } from "../../src/store/postgres/index.js";
import { sessionKey } from "../../src/store/postgres/session-store.js";
import { postgresOrSkip } from "../support/postgres.js";
import { schemaScope } from "../support/postgres-store.js";
import { startTcpProxy } from "../support/tcp-proxy.js";
import { approvalContract } from "./approval-store.contract.js";

const pg = await postgresOrSkip("the PostgreSQL store tests");
const worker = fileURLToPath(new URL("../fixtures/store/pg-worker.mjs", import.meta.url));
const item = (id: string): Item => ({ id, role: "user", parts: [{ type: "text", text: `text ${id}` }], createdAt: "2025-01-01T00:00:00.000Z" });

async function rejection(promise: Promise<unknown>): Promise<PostgresStoreError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PostgresStoreError);
  return error as PostgresStoreError;
}

describe.runIf(pg.url)("PostgreSQL store", () => {
  const url = pg.url!;
  const scopes: Array<ReturnType<typeof schemaScope>> = [];
  const children: ChildProcess[] = [];
  const scope = (): ReturnType<typeof schemaScope> => {
    const s = schemaScope(url);
    scopes.push(s);
    return s;
  };
  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await once(child, "exit");
      }
    }
    await Promise.all(scopes.splice(0).map((s) => s.cleanup()));
  });

  approvalContract("PostgresApprovalMemoryStore", async () => {
    const s = schemaScope(url);
    const store = await s.open();
    return { store: store.approvals, restart: () => new PostgresApprovalMemoryStore(store.db), cleanup: () => s.cleanup() };
  });

  it("creates the schema once when several instances start at the same moment, and reopens idempotently", async () => {
    const s = scope();
    const stores = await Promise.all(Array.from({ length: 5 }, () => s.open()));
    const { rows } = await stores[0]!.db.query<{ version: number }>(`SELECT version FROM ${stores[0]!.db.table("agentkit_schema")} ORDER BY version`);
    expect(rows.map((r) => r.version)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
    await stores[1]!.sessions.create({ sessionId: "s", cwd: "/w" });
    const again = await s.open();
    expect(await again.sessions.exists("s")).toBe(true);
  });

  it("refuses a schema newer than this build, saying what to do", async () => {
    const s = scope();
    const store = await s.open();
    await store.db.query(`INSERT INTO ${store.db.table("agentkit_schema")} (version) VALUES (${SCHEMA_VERSION + 1})`);
    const error = await rejection(s.open());
    expect(error.code).toBe("store_schema_too_new");
    expect(error.message).toMatch(/newer than this agentkit-acp knows.*upgrade agentkit-acp/);
  });

  it("explains bad URLs and unreachable servers", async () => {
    const target = new URL(url);
    const bad = await rejection(openPostgresStore({ url: "mysql://x@y/z", logger: silentLogger }));
    expect(bad.code).toBe("invalid_store_url");
    expect(bad.message).toMatch(/postgres:\/\/USER:PASSWORD@HOST:PORT\/DATABASE/);
    expect((await rejection(openPostgresStore({ url: "not a url", logger: silentLogger }))).code).toBe("invalid_store_url");

    const proxy = await startTcpProxy("127.0.0.1", 1);
    await proxy.cut(); // a port nothing listens on
    const refused = await rejection(openPostgresStore({ url: `postgres://u:secret@127.0.0.1:${proxy.port}/db`, logger: silentLogger }));
    expect(refused.code).toBe("store_unavailable");
    expect(refused.message).toMatch(new RegExp(`nothing accepts connections at 127.0.0.1:${proxy.port}.*start PostgreSQL`));
    expect(refused.message).not.toContain("secret");

    const noDb = new URL(url);
    noDb.pathname = "/no_such_database";
    expect((await rejection(openPostgresStore({ url: noDb.toString(), logger: silentLogger }))).message).toMatch(/"no_such_database" does not exist.*createdb/);
    const noUser = new URL(url);
    noUser.username = "nobody_here";
    expect((await rejection(openPostgresStore({ url: noUser.toString(), logger: silentLogger }))).message).toMatch(/refused the login.*user\/password/);
    expect(target.protocol).toMatch(/postgres/);
  });

  it("ready() follows the database: false while it is unreachable, true again when it is back; nothing crashes", async () => {
    const target = new URL(url);
    const proxy = await startTcpProxy(target.hostname, Number(target.port));
    try {
      const via = new URL(url);
      via.port = String(proxy.port);
      const s = schemaScope(via.toString());
      const store = await s.open();
      await store.sessions.create({ sessionId: "r", cwd: "/w" });
      expect(await store.ready()).toBe(true);
      await proxy.cut();
      expect(await store.ready()).toBe(false);
      await expect(store.sessions.append("r", item("lost"))).rejects.toThrow(/PostgreSQL session store/);
      await proxy.restore();
      expect(await store.ready()).toBe(true);
      await store.sessions.append("r", item("kept"));
      expect((await store.sessions.load("r"))!.items.map((i) => i.id)).toEqual(["kept"]);
      await s.cleanup();
    } finally {
      await proxy.close();
    }
  });

  it("batches items that queue up while a write is in flight, acknowledging each only after its commit", async () => {
    const store = await scope().open();
    await store.sessions.create({ sessionId: "b", cwd: "/w" });
    const before = store.stats();
    await Promise.all(Array.from({ length: 40 }, (_, n) => store.sessions.append("b", item(`i${n}`))));
    const after = store.stats();
    expect(after.items - before.items).toBe(40);
    expect(after.writes - before.writes).toBeLessThan(40);
    expect(after.writes - before.writes).toBeGreaterThanOrEqual(1);
    expect((await store.sessions.load("b"))!.items.map((i) => i.id)).toEqual(Array.from({ length: 40 }, (_, n) => `i${n}`));
    // One awaited append is one write.
    const one = store.stats().writes;
    await store.sessions.append("b", item("single"));
    expect(store.stats().writes - one).toBe(1);
  });

  it("writes the items of sessions that arrive together in one statement; a session whose lease is gone fails alone", async () => {
    const s = scope();
    const [a, b] = [await s.open(), await s.open()];
    const ids = Array.from({ length: 20 }, (_, n) => `g${n}`);
    for (const id of ids) {
      await a.sessions.create({ sessionId: id, cwd: "/w" });
      expect((await a.leases.acquire(id)).acquired).toBe(true);
    }
    // g7's lease runs out behind A's back and B takes the session.
    await a.db.query(`UPDATE ${a.db.table("agentkit_leases")} SET expires_at = now() - interval '1 second' WHERE session_id = $1`, [sessionKey("g7")]);
    expect((await b.leases.acquire("g7")).acquired).toBe(true);
    const before = a.stats();
    const results = await Promise.allSettled(ids.map((id) => a.sessions.append(id, item(`${id}-1`))));
    expect(a.stats().writes - before.writes).toBe(1);
    results.forEach((r, n) => expect(r.status).toBe(n === 7 ? "rejected" : "fulfilled"));
    expect((results[7] as PromiseRejectedResult).reason).toMatchObject({ code: "session_lease_lost" });
    // Two items per session at once: each session's in order, in fewer statements than items.
    const live = ids.filter((id) => id !== "g7");
    const mid = a.stats();
    await Promise.all(live.flatMap((id) => [a.sessions.append(id, item(`${id}-2`)), a.sessions.append(id, item(`${id}-3`))]));
    expect(a.stats().writes - mid.writes).toBeLessThanOrEqual(3);
    for (const id of live) expect((await a.sessions.load(id))!.items.map((i) => i.id)).toEqual([`${id}-1`, `${id}-2`, `${id}-3`]);
    expect((await a.sessions.load("g7"))!.items).toEqual([]);
  });

  it("a deadlock with another transaction fails no session: each one's items go again on their own", async () => {
    const store = await scope().open();
    for (const id of ["d1", "d2"]) await store.sessions.create({ sessionId: id, cwd: "/w" });
    const sessions = store.db.table("agentkit_sessions");
    const other = new PgClient({ connectionString: url });
    await other.connect();
    try {
      // The other transaction holds d2's row; the store's one statement takes d1's, then waits for d2's.
      await other.query("BEGIN");
      await other.query("SET LOCAL deadlock_timeout = '60s'"); // the store's statement is the one that finds the cycle
      await other.query(`SELECT 1 FROM ${sessions} WHERE id = $1 FOR UPDATE`, [sessionKey("d2")]);
      const xid = (await other.query<{ xid: string }>("SELECT pg_current_xact_id()::text AS xid")).rows[0]!.xid;
      const before = store.stats().writes;
      const writes = Promise.allSettled([store.sessions.append("d1", item("d1-1")), store.sessions.append("d2", item("d2-1"))]);
      await expect
        .poll(async () => (await store.db.query(`SELECT 1 FROM pg_locks WHERE locktype = 'transactionid' AND transactionid::text = $1 AND NOT granted`, [xid])).rowCount, { timeout: 20_000 })
        .toBe(1);
      // Now it asks for d1's row: a cycle, which the store's statement finds and gives way (40P01).
      await other.query(`UPDATE ${sessions} SET cwd = cwd WHERE id = $1`, [sessionKey("d1")]);
      await other.query("COMMIT");
      expect((await writes).map((r) => r.status)).toEqual(["fulfilled", "fulfilled"]);
      expect(store.stats().writes - before).toBe(2); // each session's item on its own, after the failed group
      for (const id of ["d1", "d2"]) expect((await store.sessions.load(id))!.items.map((i) => i.id)).toEqual([`${id}-1`]);
    } finally {
      await other.end();
    }
  });

  it("updates a header it last wrote in one statement, and never over a change made by another instance since", async () => {
    const s = scope();
    const [a, b] = [await s.open(), await s.open()];
    await a.sessions.create({ sessionId: "h", cwd: "/w" });
    const before = a.stats().queries;
    await a.sessions.updateHeader("h", { title: "first" });
    expect(a.stats().queries - before).toBe(1);
    await b.sessions.updateHeader("h", { metadata: { by: "b" } });
    await a.sessions.updateHeader("h", { archived: true });
    expect((await b.sessions.load("h"))!.header).toMatchObject({ title: "first", archived: true, metadata: { by: "b" } });
    await b.sessions.updateHeader("h", { title: "second" }); // B read it (load): one statement too
    expect((await a.sessions.load("h"))!.header).toMatchObject({ title: "second", archived: true, metadata: { by: "b" } });
  });

  it("keeps every acknowledged item, in order, when the writing process is killed with SIGKILL", { timeout: 90_000 }, async () => {
    const s = scope();
    const reader = await s.open();
    for (let round = 0; round < 2; round++) {
      const before = (await reader.sessions.load("crashy"))?.items.length ?? 0;
      const child = spawn(process.execPath, [worker, "append", url, s.schema, "crashy", "4"], { stdio: ["ignore", "pipe", "pipe"] });
      children.push(child);
      let stderr = "";
      child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const acked = await new Promise<number>((resolve, reject) => {
        // The worker starts after the items it finds; a commit the killed worker sent just before
        // SIGKILL may become visible after the reader counted, so the first ack may be past
        // `before` — never before it — and every later one comes in order.
        let first: number | undefined;
        let next = before;
        createInterface({ input: child.stdout! }).on("line", (line) => {
          const n = Number(line.slice(4));
          if (first === undefined) {
            if (n < before) reject(new Error(`the worker started at ${n}, before the ${before} items already there`));
            first = next = n;
          }
          if (n !== next) reject(new Error(`ack out of order: ${line}`));
          if (++next - first === 50) {
            child.kill("SIGKILL");
            resolve(next);
          }
        });
        child.once("exit", (code) => code !== null && reject(new Error(`worker exited ${code}: ${stderr}`)));
      });
      await once(child, "exit");
      const items = (await reader.sessions.load("crashy"))!.items;
      expect(items.length).toBeGreaterThanOrEqual(acked);
      items.forEach((it, n) => expect(it.id).toBe(`item-${n}`));
    }
  });
});
