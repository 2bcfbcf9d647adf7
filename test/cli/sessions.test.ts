import { mkdtemp, readdir, rm, writeFile, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Item } from "../../src/core/index.js";
import { silentLogger } from "../../src/core/index.js";
import type { SessionLeases, SessionStore } from "../../src/store/index.js";
import { JsonlSessionStore } from "../../src/store/index.js";
import { openPostgresStore, type PostgresStore } from "../../src/store/postgres/index.js";
import { runCli } from "../support/cli.js";
import { createTestDatabase, postgresOrSkip } from "../support/postgres.js";

// `agentkit-acp sessions …` through the CLI's own code (in-process runCli), on the file store and
// on PostgreSQL: the same fixture, the same commands, the same answers.

const item = (id: string, role: Item["role"], parts: Item["parts"]): Item => ({ id, role, parts, createdAt: "2024-01-01T00:00:00.000Z" });

/** Old sessions (2024, one second apart) of two principals, one archived, one with a transcript; and a new one. */
async function seed(store: SessionStore): Promise<void> {
  await store.create({ sessionId: "old-a", cwd: "/work/a", owner: "alice", title: "Fix \u001b]0;pwned\u0007the bug" });
  await store.append("old-a", item("i1", "user", [{ type: "text", text: "hello" }]));
  await store.append("old-a", item("i2", "assistant", [{ type: "text", text: "running it" }, { type: "tool_call", callId: "c1", toolName: "shell", input: { command: "ls ```x```" } }]));
  await store.append("old-a", item("i3", "tool", [{ type: "tool_result", callId: "c1", toolName: "shell", result: { text: "a\nb", isError: false } }]));
  await store.updateHeader("old-a", { title: "Renamed" });
  await store.create({ sessionId: "old-b", cwd: "/work/b", owner: "bob" });
  await store.create({ sessionId: "old-archived", cwd: "/work/b", owner: "bob" });
  await store.updateHeader("old-archived", { archived: true });
  await store.create({ sessionId: "old-leased", cwd: "/work/b", owner: "bob" });
  await store.create({ sessionId: "fresh", cwd: "/work/a", owner: "alice", createdAt: new Date().toISOString() });
}

function pastClock(): () => Date {
  let t = Date.parse("2024-01-01T00:00:00.000Z");
  return () => new Date((t += 1000));
}

interface Fixture {
  /** The flags that name the store. */
  flags: string[];
  /** Another instance's leases (PostgreSQL), or undefined where leases are per process. */
  theirs?: SessionLeases;
  reopen(): SessionStore;
}

function suite(name: string, setup: () => Promise<Fixture & { cleanup(): Promise<void> }>): void {
  describe(`agentkit-acp sessions on ${name}`, () => {
    let f: Fixture & { cleanup(): Promise<void> };
    const cli = (...args: string[]) => runCli(["sessions", ...args, ...f.flags], { cwd: tmpdir(), env: { PATH: process.env.PATH } });
    beforeAll(async () => {
      f = await setup();
    });
    afterAll(() => f.cleanup());

    it("list: every owner, newest first, archived on request, --principal filters, --json; control characters never reach the terminal", async () => {
      const all = await cli("list");
      expect(all.code).toBe(0);
      const rows = all.stdout.trim().split("\n");
      expect(rows[0]).toMatch(/^ID +OWNER +UPDATED +ARCHIVED +TITLE +CWD$/);
      expect(rows.slice(1).map((r) => r.split(/ +/).slice(0, 2))).toEqual([["fresh", "alice"], ["old-leased", "bob"], ["old-b", "bob"], ["old-a", "alice"]]);
      expect(all.stdout).not.toContain("\u001b");
      expect((await cli("list", "--archived", "only")).stdout).toMatch(/old-archived +bob +\S+ +yes/);
      const alice = await cli("list", "--principal", "alice", "--json");
      expect(alice.lines.map((l) => [l.sessionId, l.owner, l.title])).toEqual([["fresh", "alice", undefined], ["old-a", "alice", "Renamed"]]);
    });

    it("show: the header and the transcript's size; an unknown id (or another principal's with --principal) exits 1", async () => {
      const shown = await cli("show", "old-a");
      expect(shown.code).toBe(0);
      expect(shown.stdout).toMatch(/^session: +old-a\nowner: +alice\ntitle: +Renamed\ncwd: +\/work\/a\n/);
      expect(shown.stdout).toMatch(/items: +3 \(user 1, assistant 1, tool 1\)/);
      expect((await cli("show", "old-a", "--json")).lines[0]).toMatchObject({ header: { sessionId: "old-a", title: "Renamed" }, items: 3 });
      const missing = await cli("show", "nope");
      expect([missing.code, missing.stderr]).toEqual([1, 'agentkit-acp sessions: no session "nope"\n']);
      expect((await cli("show", "old-a", "--principal", "bob")).code).toBe(1);
    });

    it("export: JSONL that a file store reads back as the same session; Markdown for people (fences the text cannot close)", async () => {
      const jsonl = await cli("export", "old-a");
      expect(jsonl.code).toBe(0);
      const dir = await mkdtemp(join(tmpdir(), "agentkit-moved-"));
      await mkdir(join(dir, "sessions"));
      await writeFile(join(dir, "sessions", "old-a.jsonl"), jsonl.stdout);
      const moved = (await new JsonlSessionStore({ stateDir: dir, logger: silentLogger }).load("old-a"))!;
      const original = (await f.reopen().load("old-a"))!;
      expect(moved.header).toEqual(original.header);
      expect(moved.items).toEqual(original.items);
      await rm(dir, { recursive: true, force: true });

      const md = await cli("export", "old-a", "--format", "markdown");
      expect(md.stdout).toContain("## User · ");
      expect(md.stdout).toContain("````json\n{\n  \"command\": \"ls ```x```\"\n}\n````");
      expect(md.stdout).toContain("**shell** result `c1`\n\n```\na\nb\n```");
      expect(md.stdout).toMatch(/- title: Renamed\n/);
      expect(md.stdout.includes("\u001b") || md.stdout.includes("\u0007")).toBe(false);
    });

    it("prune: --dry-run lists and deletes nothing; a run deletes (logged), keeps leased sessions (reported) and, with --keep-archived, archived ones", async () => {
      const held = f.theirs ? await f.theirs.acquire("old-leased") : undefined;
      const dry = await cli("prune", "--older-than", "30d", "--dry-run", "--json");
      expect(dry.code).toBe(0);
      const plan = dry.lines[0] as { deleted: Array<{ sessionId: string }>; leased: Array<{ session: { sessionId: string }; holder: string }> };
      const leased = f.theirs ? ["old-leased"] : [];
      expect(plan.deleted.map((s) => s.sessionId).sort()).toEqual(["old-a", "old-archived", "old-b", ...(f.theirs ? [] : ["old-leased"])].sort());
      expect(plan.leased.map((l) => l.session.sessionId)).toEqual(leased);
      expect((await f.reopen().list({ archived: "include" })).sessions).toHaveLength(5);

      const run = await cli("prune", "--older-than", "30d", "--keep-archived", "--principal", "bob");
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^deleted ${f.theirs ? 1 : 2} sessions? not updated since `));
      expect(run.stderr).toMatch(/info: retention: session deleted \{"sessionId":"old-b","owner":"bob"/);
      if (f.theirs) {
        expect(run.stdout).toMatch(/kept old-leased \(owner bob\): open on an instance \(lease held by \S+ until /);
        expect(run.stderr).toMatch(/retention: session kept, it is open on an instance/);
      }
      const left = (await f.reopen().list({ archived: "include" })).sessions.map((s) => s.sessionId).sort();
      expect(left).toEqual(["fresh", "old-a", "old-archived", ...leased].sort());

      // Each deletion is in the audit trail, under the session's owner.
      const audit = await runCli(["audit", "--json", ...f.flags], { cwd: tmpdir(), env: { PATH: process.env.PATH } });
      expect(audit.lines.filter((r) => r.action === "retention/delete").map((r) => [r.principal, r.sessionId, (r.detail as { by: string }).by])).toEqual([["bob", "old-b", "agentkit-acp sessions prune"], ...(f.theirs ? [] : [["bob", "old-leased", "agentkit-acp sessions prune"]])].sort((a, b) => (a[1]! < b[1]! ? 1 : -1)));
      if (held?.acquired) await held.lease.release();
      const rest = await cli("prune", "--older-than", "30d");
      expect(rest.stdout).toMatch(new RegExp(`^deleted ${f.theirs ? 3 : 2} sessions`));
      expect((await f.reopen().list({ archived: "include" })).sessions.map((s) => s.sessionId)).toEqual(["fresh"]);
    });

    it("bad command lines exit 2 saying what to fix", async () => {
      for (const [args, message] of [
        [["prune"], /prune needs --older-than AGE/],
        [["prune", "--older-than", "soon"], /--older-than takes an age such as 30d/],
        [["prune", "--older-than", "0"], /more than zero/],
        [["show"], /show needs a session id/],
        [["list", "--format", "markdown"], /--format only applies to sessions export/],
        [["export", "x", "--format", "html"], /--format must be jsonl or markdown/],
        [["purge"], /one of list, show, export, prune \(got "purge"\)/],
      ] as const) {
        const r = await cli(...args);
        expect([r.code, r.stdout]).toEqual([2, ""]);
        expect(r.stderr).toMatch(message);
      }
    });
  });
}

suite("files (--state-dir)", async () => {
  const stateDir = await mkdtemp(join(tmpdir(), "agentkit-sessions-cli-"));
  await seed(new JsonlSessionStore({ stateDir, clock: pastClock(), logger: silentLogger }));
  return {
    flags: ["--state-dir", stateDir],
    reopen: () => new JsonlSessionStore({ stateDir, logger: silentLogger }),
    cleanup: async () => {
      expect((await readdir(join(stateDir, "sessions"))).filter((n) => n.endsWith(".jsonl"))).toEqual(["fresh.jsonl"]);
      await rm(stateDir, { recursive: true, force: true });
    },
  };
});

const pg = await postgresOrSkip("agentkit-acp sessions on PostgreSQL");
describe.runIf(pg.url)("on PostgreSQL", () => {
  suite("PostgreSQL (--store)", async () => {
    const db = await createTestDatabase(pg.url!);
    const seeded = await openPostgresStore({ url: db.url, clock: pastClock(), logger: silentLogger });
    await seed(seeded.sessions);
    const other: PostgresStore = await openPostgresStore({ url: db.url, logger: silentLogger });
    return {
      flags: ["--store", db.url],
      theirs: other.leases,
      reopen: () => seeded.sessions,
      cleanup: async () => {
        await other.close();
        await seeded.close();
        await db.drop();
      },
    };
  });
});
