import { appendFile, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Logger } from "../../src/core/index.js";
import { JsonlSessionStore, SessionStoreError, defaultStateDir } from "../../src/store/index.js";
import { item, steppingClock } from "./session-store.contract.js";

function capturingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug() {}, info() {}, error() {}, warn: (m) => void warnings.push(m) };
}

const lines = async (path: string): Promise<Array<Record<string, unknown>>> =>
  (await readFile(path, "utf8"))
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("JsonlSessionStore on disk", () => {
  let stateDir: string;
  let logger: ReturnType<typeof capturingLogger>;
  let store: JsonlSessionStore;
  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), "agentkit-jsonl-"));
    logger = capturingLogger();
    store = new JsonlSessionStore({ stateDir, logger, clock: steppingClock() });
  });
  afterEach(() => rm(stateDir, { recursive: true, force: true }));

  it("writes a header line, item records and header_update records, one JSON object per line", async () => {
    await store.create({ sessionId: "s1", cwd: "/w", title: "T" });
    await store.append("s1", item("u1"));
    await store.updateHeader("s1", { title: "T2", metadata: { modeId: "ask" } });
    const path = join(stateDir, "sessions", "s1.jsonl");
    expect(store.pathFor("s1")).toBe(path);
    expect(await lines(path)).toEqual([
      { type: "header", version: 1, sessionId: "s1", owner: "default", cwd: "/w", additionalDirectories: [], createdAt: "2025-01-01T00:00:01.000Z", updatedAt: "2025-01-01T00:00:01.000Z", metadata: {}, title: "T" },
      { type: "item", at: "2025-01-01T00:00:02.000Z", item: item("u1") },
      { type: "header_update", at: "2025-01-01T00:00:03.000Z", patch: { title: "T2", metadata: { modeId: "ask" } } },
    ]);
    expect((await readFile(path, "utf8")).endsWith("\n")).toBe(true);
  });

  it("keeps hostile ids inside <stateDir>/sessions as encoded file names", async () => {
    for (const id of ["../escape", "../../x", "a/b", "..", "sub\\dir"]) await store.create({ sessionId: id, cwd: "/w" });
    expect((await readdir(stateDir)).sort()).toEqual(["sessions"]);
    const names = (await readdir(join(stateDir, "sessions"))).sort();
    expect(names).toEqual(["%2E%2E%2F%2E%2E%2Fx.jsonl", "%2E%2E%2Fescape.jsonl", "%2E%2E.jsonl", "a%2Fb.jsonl", "journal.log", "sub%5Cdir.jsonl"]);
  });

  it("skips a torn last line with a warning, then repairs it on the next append", async () => {
    await store.create({ sessionId: "s1", cwd: "/w" });
    await store.append("s1", item("u1"));
    const path = store.pathFor("s1")!;
    await appendFile(path, '{"type":"item","at":"2025-01-01T00:00:09.000Z","item":{"id":"torn","ro');

    const loaded = (await store.load("s1"))!;
    expect(loaded.items.map((i) => i.id)).toEqual(["u1"]);
    expect(loaded.warnings).toHaveLength(1);
    expect(loaded.warnings[0]).toMatch(/torn last line \(\d+ bytes without a newline\) skipped/);
    expect(logger.warnings.some((w) => w.includes("torn last line"))).toBe(true);

    await store.append("s1", item("u2"));
    expect(logger.warnings.some((w) => /cut a torn last line \(\d+ bytes\)/.test(w))).toBe(true);
    const clean = (await new JsonlSessionStore({ stateDir, logger }).load("s1"))!;
    expect(clean.items.map((i) => i.id)).toEqual(["u1", "u2"]);
    expect(clean.warnings).toEqual([]);
    expect((await readFile(path, "utf8")).includes("torn")).toBe(false);
  });

  it("treats a complete record that lacks its newline as torn (the newline is the commit marker)", async () => {
    await store.create({ sessionId: "s1", cwd: "/w" });
    await appendFile(store.pathFor("s1")!, JSON.stringify({ type: "item", at: "2025-01-01T00:00:09.000Z", item: item("unacked") }));
    expect((await store.load("s1"))!.items).toEqual([]);
    await store.append("s1", item("u1"));
    expect((await store.load("s1"))!).toMatchObject({ items: [item("u1")], warnings: [] });
  });

  it("skips unknown record types and unreadable middle lines with warnings, keeping everything else", async () => {
    await store.create({ sessionId: "s1", cwd: "/w" });
    await store.append("s1", item("u1"));
    const path = store.pathFor("s1")!;
    await appendFile(path, '{"type":"compaction_marker","at":"2025-01-01T00:01:00.000Z"}\nnot json at all\n{"type":"item","at":"x"}\n');
    await store.append("s1", item("u2"));
    const loaded = (await store.load("s1"))!;
    expect(loaded.items.map((i) => i.id)).toEqual(["u1", "u2"]);
    expect(loaded.warnings).toHaveLength(3);
    expect(loaded.warnings[0]).toMatch(/:3: unknown record type "compaction_marker" skipped/);
    expect(loaded.warnings[1]).toMatch(/:4: unreadable record skipped/);
    expect(loaded.warnings[2]).toMatch(/:5: item record without a valid item skipped/);
  });

  it("refuses a newer format version with a clear error; list skips it; exists still sees it", async () => {
    const dir = join(stateDir, "sessions");
    await store.create({ sessionId: "old", cwd: "/w" });
    await writeFile(join(dir, "future.jsonl"), `${JSON.stringify({ type: "header", version: 2, sessionId: "future", cwd: "/w", createdAt: "x", updatedAt: "x" })}\n`);
    const error = await store.load("future").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionStoreError);
    expect((error as SessionStoreError).code).toBe("unsupported_format");
    expect((error as Error).message).toMatch(/format version 2 is newer than this agentkit-acp reads \(up to 1\)/);
    expect((await store.list()).sessions.map((s) => s.sessionId)).toEqual(["old"]);
    expect(logger.warnings.some((w) => w.includes("future.jsonl not listed"))).toBe(true);
    expect(await store.exists("future")).toBe(true);
    expect(((await store.create({ sessionId: "future", cwd: "/w" }).catch((e: unknown) => e)) as SessionStoreError).code).toBe("session_exists");
  });

  it("treats a create torn before its header newline as absent and lets create finish it", async () => {
    const dir = join(stateDir, "sessions");
    await store.create({ sessionId: "other", cwd: "/w" });
    await writeFile(join(dir, "half.jsonl"), '{"type":"header","version":1,"sessionId":"ha');
    expect(await store.load("half")).toBeUndefined();
    expect(await store.exists("half")).toBe(false);
    expect((await store.list()).sessions.map((s) => s.sessionId)).toEqual(["other"]);
    expect(((await store.append("half", item("u")).catch((e: unknown) => e)) as SessionStoreError).code).toBe("session_not_found");
    await store.create({ sessionId: "half", cwd: "/w" });
    await store.append("half", item("u1"));
    expect((await store.load("half"))!).toMatchObject({ items: [item("u1")], warnings: [] });
  });

  it("keeps a list index that is only a cache: stale or corrupt indexes never give wrong answers", async () => {
    for (const id of ["a", "b", "c"]) await store.create({ sessionId: id, cwd: "/w", title: `title ${id}` });
    expect((await store.list()).sessions.map((s) => s.title)).toEqual(["title c", "title b", "title a"]);
    const indexPath = join(stateDir, "sessions", "index.json");
    const index = JSON.parse(await readFile(indexPath, "utf8")) as { entries: Record<string, unknown> };
    expect(Object.keys(index.entries).sort()).toEqual(["a.jsonl", "b.jsonl", "c.jsonl"]);

    await store.updateHeader("a", { title: "renamed" }); // file changed: its cached entry is rescanned
    await store.delete("b");
    let listed = (await store.list()).sessions;
    expect(listed.map((s) => [s.sessionId, s.title])).toEqual([["a", "renamed"], ["c", "title c"]]);

    await writeFile(indexPath, "{ corrupt");
    listed = (await new JsonlSessionStore({ stateDir, logger }).list()).sessions;
    expect(listed.map((s) => [s.sessionId, s.title])).toEqual([["a", "renamed"], ["c", "title c"]]);
    expect(JSON.parse(await readFile(indexPath, "utf8"))).toHaveProperty("version", 2);
  });

  it("ignores a session file whose header names another session", async () => {
    await store.create({ sessionId: "real", cwd: "/w" });
    const dir = join(stateDir, "sessions");
    await writeFile(join(dir, "copy.jsonl"), await readFile(join(dir, "real.jsonl")));
    expect((await store.list()).sessions.map((s) => s.sessionId)).toEqual(["real"]);
    expect(((await store.load("copy").catch((e: unknown) => e)) as SessionStoreError).code).toBe("corrupt_session");
  });

  it("lists hundreds of sessions; a cold start reads only files changed since the snapshot, a page reads no file but its own rows", async () => {
    for (let n = 0; n < 300; n++) await store.create({ sessionId: `s${String(n).padStart(3, "0")}`, cwd: n % 3 === 0 ? "/a" : "/b" });
    for (let n = 0; n < 300; n += 50) await store.append(`s${String(n).padStart(3, "0")}`, item(`i${n}`));
    const first = await store.list({ limit: 1000 });
    expect(first.sessions).toHaveLength(300);
    expect(first.sessions.slice(0, 6).map((s) => s.sessionId)).toEqual(["s250", "s200", "s150", "s100", "s050", "s000"]);
    expect((await store.list({ cwd: "/a", limit: 1000 })).sessions).toHaveLength(100);

    // A cold start answers unchanged files from the snapshot: a marker planted in it shows through.
    const indexPath = join(stateDir, "sessions", "index.json");
    const index = JSON.parse(await readFile(indexPath, "utf8")) as { entries: Record<string, { summary: { title?: string } }> };
    index.entries["s001.jsonl"]!.summary.title = "from the index";
    await writeFile(indexPath, JSON.stringify(index));
    const restarted = new JsonlSessionStore({ stateDir, logger });
    expect((await restarted.list({ limit: 1000 })).sessions.find((s) => s.sessionId === "s001")!.title).toBe("from the index");

    // A warm page reads the journal, not the files: a title written behind the store's back
    // (no journal record) is not seen; one written through any store instance is, at once.
    await appendFile(store.pathFor("s002")!, `${JSON.stringify({ type: "header_update", at: "2030-01-01T00:00:00.000Z", patch: { title: "behind its back" } })}\n`);
    expect((await store.list({ limit: 1000 })).sessions.find((s) => s.sessionId === "s002")!.title).toBeUndefined();
    await restarted.updateHeader("s003", { title: "through another instance" });
    await restarted.delete("s004");
    const warm = (await store.list({ limit: 1000 })).sessions;
    expect(warm[0]).toMatchObject({ sessionId: "s003", title: "through another instance" });
    expect(warm.some((s) => s.sessionId === "s004")).toBe(false);
  });
});

describe("defaultStateDir", () => {
  it("prefers AGENTKIT_STATE_DIR, then XDG_STATE_HOME, then ~/.local/state", () => {
    expect(defaultStateDir({ AGENTKIT_STATE_DIR: "/x/state", XDG_STATE_HOME: "/xdg" }, "/home/u")).toBe("/x/state");
    expect(defaultStateDir({ XDG_STATE_HOME: "/xdg" }, "/home/u")).toBe("/xdg/agentkit-acp");
    expect(defaultStateDir({ XDG_STATE_HOME: "relative" }, "/home/u")).toBe("/home/u/.local/state/agentkit-acp");
    expect(defaultStateDir({ AGENTKIT_STATE_DIR: "" }, "/home/u")).toBe("/home/u/.local/state/agentkit-acp");
    expect(defaultStateDir({}, "/home/u")).toBe("/home/u/.local/state/agentkit-acp");
  });
});
