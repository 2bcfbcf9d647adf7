import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import type { AuditLog, AuditRecord, QuotaStore } from "../../src/store/index.js";
import { FileAuditLog, FileQuotaStore, InMemoryAuditLog, InMemoryQuotaStore } from "../../src/store/index.js";
import { msUntilNextUtcDay, utcDay } from "../../src/store/quotas.js";
import { migrate } from "../../src/store/postgres/migrations.js";
import { sessionKey } from "../../src/store/postgres/session-store.js";
import { postgresOrSkip } from "../support/postgres.js";
import { schemaScope } from "../support/postgres-store.js";

const pgTest = await postgresOrSkip("the PostgreSQL quota and audit stores");
const dirs: string[] = [];
const scopes: Array<ReturnType<typeof schemaScope>> = [];
const closing: QuotaStore[] = [];
afterAll(async () => {
  for (const store of closing) await store.close();
  await Promise.all(scopes.map((s) => s.cleanup()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "agentkit-quotas-"));
  dirs.push(dir);
  return dir;
}

/** Two views of one store (two instances / processes on it); the memory store is one process's own. */
type Pair = () => Promise<[QuotaStore, QuotaStore]>;

const backends: Array<[string, Pair | undefined]> = [
  [
    "memory",
    async () => {
      const store = new InMemoryQuotaStore();
      return [store, store];
    },
  ],
  [
    "files (two stores on one state directory)",
    async () => {
      const stateDir = tempDir();
      const pair: [QuotaStore, QuotaStore] = [new FileQuotaStore({ stateDir, holder: "a" }), new FileQuotaStore({ stateDir, holder: "b" })];
      closing.push(...pair);
      return pair;
    },
  ],
  [
    "PostgreSQL (two instances on one schema)",
    pgTest.url === undefined
      ? undefined
      : async () => {
          const scope = schemaScope(pgTest.url!);
          scopes.push(scope);
          const [a, b] = [await scope.open(), await scope.open()];
          return [a.quotas, b.quotas];
        },
  ],
];

describe.each(backends)("quota store: %s", (_name, pair) => {
  it.runIf(pair !== undefined)("slots: a principal's limit holds across both, others are unaffected, a release frees one, re-taking a held one is no new slot", async () => {
    const [a, b] = await pair!();
    expect(await a.acquireSlot("alice", "sessions", "s1", 1)).toEqual({ ok: true });
    expect(await a.acquireSlot("alice", "sessions", "s1", 1)).toEqual({ ok: true });
    const refused = await b.acquireSlot("alice", "sessions", "s2", 1);
    expect(refused).toMatchObject({ ok: false, used: 1 });
    expect(await b.acquireSlot("bob", "sessions", "s3", 1)).toEqual({ ok: true });
    expect(await b.acquireSlot("alice", "turns", "t1", 1)).toEqual({ ok: true });
    await a.releaseSlot("alice", "sessions", "s1");
    expect(await b.acquireSlot("alice", "sessions", "s2", 1)).toEqual({ ok: true });
  });

  it.runIf(pair !== undefined)("slots taken at the same moment on both never pass the limit", async () => {
    const [a, b] = await pair!();
    const takes = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? a : b).acquireSlot("carol", "turns", `t${i}`, 3)));
    expect(takes.filter((t) => t.ok)).toHaveLength(3);
  });

  it.runIf(pair !== undefined)("prompts per minute: the limit holds across both and the refusal says when the oldest leaves the window", async () => {
    const [a, b] = await pair!();
    expect(await a.countPrompt("dave", 2)).toEqual({ ok: true });
    expect(await b.countPrompt("dave", 2)).toEqual({ ok: true });
    const refused = await a.countPrompt("dave", 2);
    expect(refused.ok).toBe(false);
    const wait = refused.ok ? 0 : refused.retryAfterMs!;
    expect(wait).toBeGreaterThan(50_000);
    expect(wait).toBeLessThanOrEqual(60_000);
    expect(await b.countPrompt("erin", 2)).toEqual({ ok: true });
  });

  it.runIf(pair !== undefined)("tokens of the UTC day add up across both", async () => {
    const [a, b] = await pair!();
    await a.addTokens("frank", 100);
    await b.addTokens("frank", 23);
    expect(await a.tokensToday("frank")).toBe(123);
    expect(await b.tokensToday("nobody")).toBe(0);
  });
});

describe("quota store: expiry", () => {
  it("a slot its holder stops renewing (a crashed process) stops counting after the ttl", async () => {
    const stateDir = tempDir();
    let now = 1_000_000;
    const dead = new FileQuotaStore({ stateDir, holder: "dead", ttlMs: 3_000, clock: () => now });
    const alive = new FileQuotaStore({ stateDir, holder: "alive", ttlMs: 3_000, clock: () => now });
    closing.push(dead, alive);
    await dead.close();
    expect(await dead.acquireSlot("alice", "sessions", "s1", 1)).toEqual({ ok: true });
    expect((await alive.acquireSlot("alice", "sessions", "s2", 1)).ok).toBe(false);
    now += 3_001;
    expect(await alive.acquireSlot("alice", "sessions", "s2", 1)).toEqual({ ok: true });
  });

  it("the day boundary: counters of another day do not count, the retry is at the next UTC midnight", () => {
    const at = Date.parse("2026-12-03T23:59:00Z");
    expect(utcDay(at)).toBe("2026-12-03");
    expect(msUntilNextUtcDay(at)).toBe(60_000);
  });
});

const record = (at: string, principal: string, action: string): AuditRecord => ({ at, instance: "i1", principal, sessionId: "sess_1", action, detail: { n: 1 } });

const auditBackends: Array<[string, (() => Promise<AuditLog>) | undefined]> = [
  ["memory", async () => new InMemoryAuditLog()],
  ["files", async () => new FileAuditLog(tempDir())],
  [
    "PostgreSQL",
    pgTest.url === undefined
      ? undefined
      : async () => {
          const scope = schemaScope(pgTest.url!);
          scopes.push(scope);
          return (await scope.open()).audit;
        },
  ],
];

describe.each(auditBackends)("audit log: %s", (_name, open) => {
  it.runIf(open !== undefined)("appends batches, reads them in time order filtered by principal and since, prunes by age", async () => {
    const log = await open!();
    await log.append([record("2026-12-01T10:00:00.000Z", "alice", "session/new"), record("2026-12-02T10:00:00.000Z", "bob", "refused")]);
    await log.append([record("2026-12-03T10:00:00.000Z", "alice", "session/prompt")]);
    expect((await log.query()).map((r) => r.action)).toEqual(["session/new", "refused", "session/prompt"]);
    expect(await log.query({ principal: "alice", since: new Date("2026-12-02T00:00:00Z") })).toEqual([record("2026-12-03T10:00:00.000Z", "alice", "session/prompt")]);
    expect(await log.query({ limit: 1 })).toHaveLength(1);
    expect(await log.prune(new Date("2026-12-02T00:00:00Z"))).toBeGreaterThan(0);
    expect((await log.query()).map((r) => r.principal)).toEqual(["bob", "alice"]);
  });
});

describe.runIf(pgTest.url)("PostgreSQL schema migrations on old data", () => {
  it("v2 → current: sessions stored before owners existed belong to default; the quota and audit tables appear", async () => {
    const scope = schemaScope(pgTest.url!);
    scopes.push(scope);
    const client = new pg.Client({ connectionString: pgTest.url! });
    await client.connect();
    try {
      await migrate(client, scope.schema, 2);
      const header = { version: 1, sessionId: "sess_old", additionalDirectories: [], createdAt: "2026-01-01T00:00:00.000Z", metadata: {} };
      await client.query(`INSERT INTO "${scope.schema}".agentkit_sessions (id, cwd, updated_at, header) VALUES ($1, '/w', now(), $2)`, [sessionKey("sess_old"), JSON.stringify(header)]);
    } finally {
      await client.end();
    }
    const store = await scope.open();
    const loaded = await store.sessions.load("sess_old");
    expect(loaded?.header.owner).toBe("default");
    expect((await store.sessions.list({ owner: "default" })).sessions.map((s) => s.sessionId)).toEqual(["sess_old"]);
    expect((await store.sessions.list({ owner: "alice" })).sessions).toEqual([]);
    expect(await store.quotas.acquireSlot("default", "sessions", "sess_old", 1)).toEqual({ ok: true });
    await store.audit.append([record("2026-12-01T10:00:00.000Z", "default", "session/load")]);
    expect(await store.audit.query()).toHaveLength(1);
  });
});
