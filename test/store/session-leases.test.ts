import type { ChildProcess } from "node:child_process";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionLeases } from "../../src/store/index.js";
import { InProcessSessionLeases } from "../../src/store/index.js";
import { DEFAULT_LEASE_TTL_MS } from "../../src/store/index.js";
import { postgresOrSkip } from "../support/postgres.js";
import { schemaScope } from "../support/postgres-store.js";
import { startTcpProxy } from "../support/tcp-proxy.js";

const pg = await postgresOrSkip("the session lease tests on PostgreSQL");
const worker = fileURLToPath(new URL("../fixtures/store/pg-worker.mjs", import.meta.url));

interface LeaseHarness {
  /** A new instance (its own holder name) on the shared lease table. */
  instance(): Promise<SessionLeases>;
  cleanup(): Promise<void>;
}

/** What every SessionLeases implementation must do. */
function leaseContract(name: string, make: () => Promise<LeaseHarness>): void {
  describe(`SessionLeases contract: ${name}`, () => {
    let h: LeaseHarness | undefined;
    afterEach(async () => {
      await h?.cleanup();
      h = undefined;
    });

    it("one holder at a time: another instance is told who holds it, and gets it after release", async () => {
      h = await make();
      const [a, b] = [await h.instance(), await h.instance()];
      const first = await a.acquire("s1");
      expect(first.acquired).toBe(true);
      const refused = await b.acquire("s1");
      expect(refused).toMatchObject({ acquired: false, holder: a.holder });
      expect(await b.holderOf("s1")).toMatchObject({ holder: a.holder });
      expect((await b.acquire("s2")).acquired).toBe(true); // other sessions are independent
      if (!first.acquired) throw new Error("unreachable");
      expect(first.lease.held).toBe(true);
      await first.lease.release();
      expect(first.lease.held).toBe(false);
      await first.lease.release(); // idempotent
      expect(await a.holderOf("s1")).toBeUndefined();
      const second = await b.acquire("s1");
      expect(second.acquired).toBe(true);
      expect((await a.acquire("s1")).acquired).toBe(false);
    });

    it("the holder may take its own session again: the new lease replaces the old, a late release of the old one frees nothing", async () => {
      h = await make();
      const [a, b] = [await h.instance(), await h.instance()];
      const old = await a.acquire("s1");
      const again = await a.acquire("s1");
      if (!old.acquired || !again.acquired) throw new Error("expected both acquisitions to succeed");
      expect(old.lease.held).toBe(false);
      expect(again.lease.held).toBe(true);
      await old.lease.release();
      expect((await b.acquire("s1")).acquired).toBe(false);
    });

    it("exactly one of many instances racing for one session wins", async () => {
      h = await make();
      const instances = await Promise.all(Array.from({ length: 6 }, () => h!.instance()));
      const results = await Promise.all(instances.map((i) => i.acquire("race")));
      expect(results.filter((r) => r.acquired)).toHaveLength(1);
    });

    it("close() gives back every lease of the instance", async () => {
      h = await make();
      const [a, b] = [await h.instance(), await h.instance()];
      const held = await Promise.all(["x", "y"].map((id) => a.acquire(id)));
      await a.close();
      for (const r of held) if (r.acquired) expect(r.lease.held).toBe(false);
      expect((await b.acquire("x")).acquired).toBe(true);
      expect((await b.acquire("y")).acquired).toBe(true);
    });
  });
}

leaseContract("InProcessSessionLeases", async () => {
  const made: SessionLeases[] = [];
  return {
    instance: async () => {
      const leases = new InProcessSessionLeases();
      made.push(leases);
      return leases;
    },
    cleanup: async () => void (await Promise.all(made.map((l) => l.close()))),
  };
});

describe.runIf(pg.url)("on PostgreSQL", () => {
  const url = pg.url!;
  leaseContract("PostgresSessionLeases", async () => {
    const scope = schemaScope(url);
    return {
      instance: async () => (await scope.open()).leases,
      cleanup: () => scope.cleanup(),
    };
  });

  const scopes: Array<ReturnType<typeof schemaScope>> = [];
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await once(child, "exit");
      }
    }
    await Promise.all(scopes.splice(0).map((s) => s.cleanup()));
  });

  /** Tries to take the lease until it succeeds (bounded); resolves with the time it took. */
  async function acquireWhenFree(leases: SessionLeases, sessionId: string, timeoutMs: number): Promise<number> {
    const started = performance.now();
    for (;;) {
      if ((await leases.acquire(sessionId)).acquired) return performance.now() - started;
      if (performance.now() - started > timeoutMs) throw new Error(`lease on ${sessionId} not free after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  it(`frees the lease of a holder killed with SIGKILL within ${DEFAULT_LEASE_TTL_MS / 1000} s (default lease), never before it stops renewing`, { timeout: 60_000 }, async () => {
    const scope = schemaScope(url);
    scopes.push(scope);
    const other = (await scope.open()).leases;
    const child = spawn(process.execPath, [worker, "lease", url, scope.schema, "busy", String(DEFAULT_LEASE_TTL_MS)], { stdio: ["ignore", "pipe", "inherit"] });
    children.push(child);
    const [line] = (await once(createInterface({ input: child.stdout! }), "line")) as [string];
    expect(line).toMatch(/^held /);
    const holder = line.slice(5);
    // Alive and renewing: held past its first lease period.
    const lease = (await other.holderOf("busy"))!;
    expect(lease.holder).toBe(holder);
    await new Promise((resolve) => setTimeout(resolve, DEFAULT_LEASE_TTL_MS / 2));
    const renewed = (await other.holderOf("busy"))!;
    expect(Date.parse(renewed.expiresAt!)).toBeGreaterThan(Date.parse(lease.expiresAt!));
    expect((await other.acquire("busy")).acquired).toBe(false);

    child.kill("SIGKILL");
    await once(child, "exit");
    const waited = await acquireWhenFree(other, "busy", 20_000);
    expect(waited).toBeLessThan(15_000);
    expect((await other.holderOf("busy"))!.holder).toBe(other.holder);
  });

  it("fences writes: once another instance has taken the session over, the old holder's writes fail and leave nothing", async () => {
    const scope = schemaScope(url);
    scopes.push(scope);
    const [a, b] = [await scope.open(), await scope.open()];
    const item = (id: string) => ({ id, role: "user" as const, parts: [{ type: "text" as const, text: id }], createdAt: "2025-01-01T00:00:00.000Z" });
    await a.sessions.create({ sessionId: "f", cwd: "/w" });
    const held = await a.leases.acquire("f");
    expect(held.acquired).toBe(true);
    await a.sessions.append("f", item("a1"));
    // A's lease runs out behind its back (its renewals never arrived), and B takes the session.
    await a.db.query(`UPDATE ${a.db.table("agentkit_leases")} SET expires_at = now() - interval '1 second'`);
    expect((await b.leases.acquire("f")).acquired).toBe(true);
    await expect(a.sessions.append("f", item("a2"))).rejects.toMatchObject({ code: "session_lease_lost" });
    await expect(a.sessions.updateHeader("f", { title: "late" })).rejects.toMatchObject({ code: "session_lease_lost" });
    await b.sessions.append("f", item("b1"));
    const loaded = (await b.sessions.load("f"))!;
    expect(loaded.items.map((i) => i.id)).toEqual(["a1", "b1"]);
    expect(loaded.header.title).toBeUndefined();
  });

  it("a holder cut off from the database gives the session up before anyone else can take it", { timeout: 60_000 }, async () => {
    const target = new URL(url);
    const proxy = await startTcpProxy(target.hostname, Number(target.port));
    try {
      const via = new URL(url);
      via.port = String(proxy.port);
      const scope = schemaScope(url);
      scopes.push(scope);
      const cutOff = (await scope.open({ url: via.toString(), leases: { ttlMs: 2_000 } })).leases;
      const other = (await scope.open()).leases;
      const attempt = await cutOff.acquire("s");
      if (!attempt.acquired) throw new Error("expected the lease");
      let lostAt: number | undefined;
      attempt.lease.onLost(() => (lostAt = performance.now()));
      await proxy.cut();
      const waited = await acquireWhenFree(other, "s", 20_000);
      // The other instance got it only after the cut-off holder had stopped counting on it.
      expect(lostAt).toBeDefined();
      expect(attempt.lease.held).toBe(false);
      expect(waited).toBeLessThan(15_000);
    } finally {
      await proxy.close();
    }
  });
});
