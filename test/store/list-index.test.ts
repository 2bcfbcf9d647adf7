import { appendFile, mkdtemp, readFile, readdir, rm, stat, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Logger } from "../../src/core/index.js";
import { JsonlSessionStore, type SessionStore } from "../../src/store/index.js";
import { item } from "./session-store.contract.js";

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

async function allIds(store: SessionStore, limit = 7): Promise<string[]> {
  const ids: string[] = [];
  for (let cursor: string | undefined; ; ) {
    const page = await store.list({ limit, ...(cursor !== undefined ? { cursor } : {}) });
    ids.push(...page.sessions.map((s) => s.sessionId));
    cursor = page.nextCursor;
    if (cursor === undefined) return ids;
  }
}

describe("the JSONL store's list index (journal + snapshot)", () => {
  let stateDir: string;
  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), "agentkit-list-index-"));
  });
  afterEach(() => rm(stateDir, { recursive: true, force: true }));
  // A clock that ticks a millisecond per reading: list order is by time, and several writes in one
  // real millisecond would tie (ties go by id), which made the expected order depend on the machine.
  let tick = Date.parse("2026-01-01T00:00:00.000Z");
  const clock = (): Date => new Date(tick++);
  const open = (rotate?: number): JsonlSessionStore => new JsonlSessionStore({ stateDir, logger: quiet, clock, ...(rotate !== undefined ? { listJournalRotateBytes: rotate } : {}) });

  it("store instances sharing a directory see each other's creates, title changes, appends and deletes at once, in order", async () => {
    const a = open();
    const b = open();
    await a.create({ sessionId: "one", cwd: "/w" });
    expect(await allIds(b)).toEqual(["one"]); // b's cold start
    await b.create({ sessionId: "two", cwd: "/w", title: "by b" });
    await a.updateHeader("one", { title: "renamed by a" });
    expect((await b.list()).sessions.map((s) => [s.sessionId, s.title])).toEqual([["one", "renamed by a"], ["two", "by b"]]);
    await b.append("two", item("x"));
    expect(await allIds(a)).toEqual(["two", "one"]);
    await b.delete("one");
    await a.updateHeader("two", { archived: true });
    expect(await allIds(a)).toEqual([]);
    expect((await b.list({ archived: "only" })).sessions.map((s) => s.sessionId)).toEqual(["two"]);
  });

  it("pages in list order with a cursor that survives inserts, and filters by cwd without a sort of the store", async () => {
    const store = open();
    for (let n = 0; n < 40; n++) await store.create({ sessionId: `s${String(n).padStart(2, "0")}`, cwd: n % 2 === 0 ? "/even" : "/odd" });
    const first = await store.list({ limit: 5, cwd: "/even" });
    expect(first.sessions.map((s) => s.sessionId)).toEqual(["s38", "s36", "s34", "s32", "s30"]);
    await store.create({ sessionId: "newest", cwd: "/even" }); // goes before the cursor: never repeated or skipped
    const second = await store.list({ limit: 5, cwd: "/even", cursor: first.nextCursor! });
    expect(second.sessions.map((s) => s.sessionId)).toEqual(["s28", "s26", "s24", "s22", "s20"]);
    expect(await allIds(store, 9)).toHaveLength(41);
  });

  it("never lists a session whose file is gone (a create that crashed after its journal record, a delete behind its back)", async () => {
    const store = open();
    for (const id of ["a", "b", "c"]) await store.create({ sessionId: id, cwd: "/w" });
    expect(await allIds(store)).toEqual(["c", "b", "a"]);
    // A crashed create: its record is in the journal, its file never came.
    await appendFile(join(stateDir, "sessions", "journal.log"), `\n${JSON.stringify({ c: { sessionId: "ghost", cwd: "/w", additionalDirectories: [], createdAt: "2099-01-01T00:00:00.000Z", updatedAt: "2099-01-01T00:00:00.000Z" } })}\n`);
    await unlink(store.pathFor("b")!);
    expect(await allIds(store, 1)).toEqual(["c", "a"]);
    expect(await allIds(open())).toEqual(["c", "a"]);
  });

  it("a create seen in the journal before its file exists (another process between the two writes) is listed once the file is there", async () => {
    const store = open();
    await store.create({ sessionId: "a", cwd: "/w" });
    expect(await allIds(store)).toEqual(["a"]);
    const header = { type: "header", version: 1, sessionId: "late", owner: "default", cwd: "/w", additionalDirectories: [], createdAt: "2030-01-01T00:00:00.000Z", updatedAt: "2030-01-01T00:00:00.000Z", metadata: {} };
    const { type: _type, version: _version, metadata: _metadata, ...summary } = header;
    await appendFile(join(stateDir, "sessions", "journal.log"), `\n${JSON.stringify({ c: summary })}\n`);
    await writeFile(store.pathFor("late")!, ""); // opened, header not yet written
    expect(await allIds(store)).toEqual(["a"]);
    await writeFile(store.pathFor("late")!, `${JSON.stringify(header)}\n`);
    expect(await allIds(store)).toEqual(["late", "a"]);
  });

  it("adopts a session it never heard created once it is touched, and survives torn and foreign journal lines", async () => {
    const store = open();
    await store.create({ sessionId: "known", cwd: "/w" });
    expect(await allIds(store)).toEqual(["known"]);
    // Another process created "stray" and crashed before its record; then a torn record; then its append.
    const other = open();
    await writeFile(other.pathFor("stray")!, `${JSON.stringify({ type: "header", version: 1, sessionId: "stray", cwd: "/w", additionalDirectories: [], createdAt: "2030-01-01T00:00:00.000Z", updatedAt: "2030-01-01T00:00:00.000Z", metadata: {} })}\n`);
    await appendFile(join(stateDir, "sessions", "journal.log"), '\n{"t":"kno');
    await appendFile(join(stateDir, "sessions", "journal.log"), "\nnot json at all\n");
    await other.append("stray", item("i"));
    expect(await allIds(store)).toEqual(["stray", "known"]);
  });

  it("rotates the journal: readers inside the old one finish it, a snapshot is saved, a cold start reads no session file", async () => {
    const writer = open(2_000);
    const reader = open(2_000);
    await writer.create({ sessionId: "first", cwd: "/w" });
    expect(await allIds(reader)).toEqual(["first"]);
    for (let n = 0; n < 40; n++) await writer.create({ sessionId: `n${String(n).padStart(2, "0")}`, cwd: "/w" });
    // The writer's own list reads past 2,000 bytes and rotates; the reader was inside the old journal.
    expect(await allIds(writer)).toHaveLength(41);
    const names = await readdir(join(stateDir, "sessions"));
    expect(names).toContain("journal.log.1");
    expect((await stat(join(stateDir, "sessions", "journal.log"))).size).toBeLessThan(2_000);
    await writer.create({ sessionId: "after", cwd: "/w" });
    const seen = await allIds(reader);
    expect(seen).toHaveLength(42);
    expect(seen[0]).toBe("after");
    // The snapshot saved at the rotation plus the new journal: a cold start gets every session
    // without reading the files (a title changed behind the store's back stays unseen).
    await appendFile(writer.pathFor("n00")!, `${JSON.stringify({ type: "header_update", at: "2020-01-01T00:00:00.000Z", patch: { title: "unseen" } })}\n`);
    const snapshot = JSON.parse(await readFile(join(stateDir, "sessions", "index.json"), "utf8")) as { journal: { id: string } };
    const generation = (await readFile(join(stateDir, "sessions", "journal.log"), "utf8")).split("\n")[0]!;
    expect(JSON.parse(generation)).toEqual({ journal: snapshot.journal.id });
    const cold = await open(2_000).list({ limit: 1000 });
    expect(cold.sessions).toHaveLength(42);
    expect(cold.sessions.find((s) => s.sessionId === "n00")!.title).toBeUndefined();
  });

  it("a reader more than one rotation behind rescans the files and misses nothing", async () => {
    const writer = open(600);
    const laggard = open(600);
    await writer.create({ sessionId: "s0", cwd: "/w" });
    expect(await allIds(laggard)).toEqual(["s0"]);
    for (let round = 1; round <= 3; round++) {
      for (let n = 0; n < 6; n++) await writer.create({ sessionId: `r${round}-${n}`, cwd: "/w" });
      await allIds(writer); // reads and rotates
    }
    expect(await readdir(join(stateDir, "sessions"))).toContain("journal.log.1");
    // The laggard's journal is gone twice over: it rescans (in the background) and then lists everything.
    await allIds(laggard);
    await expect.poll(() => allIds(laggard), { timeout: 20_000 }).toHaveLength(19);
  });
});
