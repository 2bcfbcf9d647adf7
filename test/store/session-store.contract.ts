import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Item } from "../../src/core/index.js";
import type { SessionStore, SessionSummary } from "../../src/store/index.js";
import { SessionStoreError } from "../../src/store/index.js";

export interface StoreHarness {
  store: SessionStore;
  /** A store that sees the same data as after a restart (a new instance on the same files). */
  reopen(): Promise<SessionStore>;
  cleanup(): Promise<void>;
}

/** A clock that moves one second per reading, so every write has its own `updatedAt`. */
export function steppingClock(start = "2025-01-01T00:00:00.000Z"): () => Date {
  let t = Date.parse(start);
  return () => new Date((t += 1000));
}

/** A fresh store from `make` for each test (one second per write from 2025-01-01), cleaned up after it. */
export function freshStoreEachTest<H extends StoreHarness>(make: (clock: () => Date) => Promise<H>, use: (harness: H) => void): void {
  let current: H | undefined;
  beforeEach(async () => {
    current = await make(steppingClock());
    use(current);
  });
  afterEach(async () => {
    await current?.cleanup();
    current = undefined;
  });
}

export function item(id: string, text = `text ${id}`, role: Item["role"] = "user"): Item {
  return { id, role, parts: [{ type: "text", text }], createdAt: "2025-01-01T00:00:00.000Z" };
}

async function rejection(promise: Promise<unknown>): Promise<SessionStoreError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SessionStoreError);
  return error as SessionStoreError;
}

const ids = (sessions: SessionSummary[]): string[] => sessions.map((s) => s.sessionId);

/** The behaviour every SessionStore must have; run it with a factory per implementation. */
export function sessionStoreContract(name: string, make: (clock: () => Date) => Promise<StoreHarness>): void {
  describe(`SessionStore contract: ${name}`, () => {
    let h: StoreHarness;
    let store: SessionStore;
    freshStoreEachTest(make, (fresh) => {
      h = fresh;
      store = fresh.store;
    });

    it("creates a session with a versioned header and loads it empty", async () => {
      const header = await store.create({ sessionId: "s1", cwd: "/work/p", additionalDirectories: ["lib", "/abs/other"], title: "First" });
      expect(header).toMatchObject({ version: 1, sessionId: "s1", cwd: "/work/p", additionalDirectories: ["/work/p/lib", "/abs/other"], title: "First", metadata: {} });
      expect(header.updatedAt).toBe(header.createdAt);
      expect(await store.exists("s1")).toBe(true);
      expect(await store.load("s1")).toEqual({ header, items: [], warnings: [] });
    });

    it("appends items and loads them in order, unchanged", async () => {
      await store.create({ sessionId: "s1", cwd: "/w" });
      const rich: Item = {
        id: "a2",
        role: "assistant",
        parts: [
          { type: "reasoning", text: "think\nmore" },
          { type: "text", text: "line1\nline2 \u2028 ünïcode 🚀" },
          { type: "tool_call", callId: "c1", toolName: "read_file", input: { path: "a.ts", nested: [1, { x: null }] } },
        ],
        createdAt: "2025-01-01T00:00:01.000Z",
        meta: { title: "Read a.ts", kind: "read" },
      };
      const tool: Item = {
        id: "t3",
        role: "tool",
        parts: [{ type: "tool_result", callId: "c1", toolName: "read_file", result: { text: "ok", isError: false, diffs: [{ path: "/w/a", oldText: null, newText: "x" }] } }],
        createdAt: "2025-01-01T00:00:02.000Z",
      };
      const written = [item("u1"), rich, tool, item("u4")];
      for (const i of written) await store.append("s1", i);
      expect((await store.load("s1"))!.items).toEqual(written);
      expect((await (await h.reopen()).load("s1"))!.items).toEqual(written);
    });

    it("keeps call order for concurrent appends to one session", async () => {
      await store.create({ sessionId: "s1", cwd: "/w" });
      const written = Array.from({ length: 25 }, (_, i) => item(`i${i}`));
      await Promise.all(written.map((i) => store.append("s1", i)));
      expect((await store.load("s1"))!.items.map((i) => i.id)).toEqual(written.map((i) => i.id));
    });

    it("keeps call order across interleaved appends and header updates that are not awaited one by one", async () => {
      await store.create({ sessionId: "s1", cwd: "/w", metadata: { keep: 1 } });
      await Promise.all([
        store.append("s1", item("u1")),
        store.updateHeader("s1", { title: "T1" }),
        store.append("s1", item("u2")),
        store.append("s1", item("u3")),
        store.updateHeader("s1", { metadata: { modeId: "ask" }, title: "T2" }),
        store.append("s1", item("u4")),
      ]);
      for (const s of [store, await h.reopen()]) {
        const { header, items } = (await s.load("s1"))!;
        expect(items.map((i) => i.id)).toEqual(["u1", "u2", "u3", "u4"]);
        expect(header.title).toBe("T2");
        expect(header.metadata).toEqual({ keep: 1, modeId: "ask" });
      }
    });

    it("a rejected write does not disturb the writes queued around it", async () => {
      await store.create({ sessionId: "s1", cwd: "/w" });
      const results = await Promise.allSettled([
        store.append("s1", item("u1")),
        store.append("s1", { id: "bad" } as unknown as Item),
        store.updateHeader("s1", { updatedAt: "never" }),
        store.append("s1", item("u2")),
        store.append("gone", item("x")),
        store.append("s1", item("u3")),
      ]);
      expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "rejected", "fulfilled", "rejected", "fulfilled"]);
      expect((await store.load("s1"))!.items.map((i) => i.id)).toEqual(["u1", "u2", "u3"]);
      expect(await store.exists("gone")).toBe(false);
    });

    it("keeps every item when two store instances append to one session at once", async () => {
      await store.create({ sessionId: "s1", cwd: "/w" });
      const other = await h.reopen();
      const mine = Array.from({ length: 12 }, (_, n) => item(`a${n}`));
      const theirs = Array.from({ length: 12 }, (_, n) => item(`b${n}`));
      await Promise.all([...mine.map((i) => store.append("s1", i)), ...theirs.map((i) => other.append("s1", i))]);
      const loaded = (await store.load("s1"))!.items.map((i) => i.id);
      expect(loaded).toHaveLength(24);
      // Each writer's own order holds; how the two interleave is up to the store.
      expect(loaded.filter((id) => id.startsWith("a"))).toEqual(mine.map((i) => i.id));
      expect(loaded.filter((id) => id.startsWith("b"))).toEqual(theirs.map((i) => i.id));
    });

    it("round-trips large and unusual content exactly", async () => {
      await store.create({ sessionId: "s1", cwd: "/w", title: "nul \u0000 and 🚀", metadata: { "quote\"key": "back\\slash", nested: { arr: [1.5, -0, true, null, "x"] } } });
      const big: Item = { id: "big", role: "tool", parts: [{ type: "text", text: "0123456789abcdef".repeat(64 * 1024) }], createdAt: "2025-01-01T00:00:00.000Z" };
      const odd: Item = {
        id: "odd",
        role: "assistant",
        parts: [{ type: "text", text: "NUL\u0000 bell\u0007 lone surrogate-free 😀 \r\n tab\t {\"json\":[]} \u2028\u2029 ' \\ " }],
        createdAt: "2025-01-01T00:00:00.000Z",
        meta: { "": "empty key", "a.b": { "$x": ["{", "}"] } },
      };
      await store.append("s1", big);
      await store.append("s1", odd);
      for (const s of [store, await h.reopen()]) {
        const loaded = (await s.load("s1"))!;
        expect(loaded.items).toEqual([big, odd]);
        expect(loaded.header.title).toBe("nul \u0000 and 🚀");
        expect(loaded.header.metadata).toEqual({ "quote\"key": "back\\slash", nested: { arr: [1.5, 0, true, null, "x"] } });
      }
    });

    it("hands out copies: callers cannot change what is stored", async () => {
      await store.create({ sessionId: "s1", cwd: "/w" });
      const original = { ...item("u1"), meta: { gone: undefined, kept: 1 } };
      await store.append("s1", original);
      original.parts.push({ type: "text", text: "later" });
      const loaded = (await store.load("s1"))!;
      expect(loaded.items[0]).toEqual({ ...item("u1"), meta: { kept: 1 } });
      loaded.items[0]!.parts.length = 0;
      loaded.header.metadata.x = 1;
      const again = (await store.load("s1"))!;
      expect(again.items[0]!.parts).toHaveLength(1);
      expect(again.header.metadata).toEqual({});
    });

    it("rejects invalid input without writing anything", async () => {
      await store.create({ sessionId: "s1", cwd: "/w" });
      expect((await rejection(store.append("s1", { id: "x" } as unknown as Item))).code).toBe("invalid_argument");
      const cyclic = item("c") as Item & { meta: Record<string, unknown> };
      cyclic.meta = {};
      cyclic.meta.self = cyclic.meta;
      expect((await rejection(store.append("s1", cyclic))).code).toBe("invalid_argument");
      expect((await rejection(store.create({ sessionId: "s2", cwd: "relative/dir" }))).code).toBe("invalid_argument");
      expect((await rejection(store.updateHeader("s1", { updatedAt: "not a date" }))).code).toBe("invalid_argument");
      expect((await store.load("s1"))!.items).toEqual([]);
      expect(await store.exists("s2")).toBe(false);
    });

    it("refuses a second create with the same id", async () => {
      await store.create({ sessionId: "s1", cwd: "/w" });
      expect((await rejection(store.create({ sessionId: "s1", cwd: "/other" }))).code).toBe("session_exists");
      expect((await store.load("s1"))!.header.cwd).toBe("/w");
    });

    it("treats unknown ids as absent", async () => {
      expect(await store.load("nope")).toBeUndefined();
      expect(await store.exists("nope")).toBe(false);
      expect(await store.delete("nope")).toBe(false);
      expect((await rejection(store.append("nope", item("u1")))).code).toBe("session_not_found");
      expect((await rejection(store.updateHeader("nope", { title: "t" }))).code).toBe("session_not_found");
      expect(await store.exists("nope")).toBe(false);
      expect((await store.list()).sessions).toEqual([]);
    });

    it("keeps ids that try path traversal inside the store, as distinct sessions", async () => {
      const hostile = ["../escape", "../../etc/passwd", "a/b", "..", ".", "C:\\x", "%2E%2E", "..%2F", "UPPER", "upper", "nul\u0000byte", "ünï"];
      for (const [n, id] of hostile.entries()) {
        await store.create({ sessionId: id, cwd: "/w" });
        await store.append(id, item(`i${n}`));
      }
      for (const [n, id] of hostile.entries()) {
        const loaded = (await store.load(id))!;
        expect(loaded.header.sessionId).toBe(id);
        expect(loaded.items.map((i) => i.id)).toEqual([`i${n}`]);
      }
      expect(ids((await store.list({ limit: 100 })).sessions).sort()).toEqual([...hostile].sort());
      expect(await store.load("../../escape")).toBeUndefined();
      expect(await store.delete("../escape")).toBe(true);
      expect(await store.exists("../escape")).toBe(false);
      expect(await store.exists("../../etc/passwd")).toBe(true);
    });

    it("rejects ids that cannot name a session and reads them as absent", async () => {
      expect((await rejection(store.create({ sessionId: "", cwd: "/w" }))).code).toBe("invalid_session_id");
      expect((await rejection(store.create({ sessionId: "x".repeat(1000), cwd: "/w" }))).code).toBe("invalid_session_id");
      expect(await store.load("")).toBeUndefined();
      expect(await store.exists("x".repeat(1000))).toBe(false);
      expect(await store.delete("")).toBe(false);
      expect((await rejection(store.append("", item("u")))).code).toBe("session_not_found");
    });

    it("lists newest first with title, cwd and timestamps; filters by cwd", async () => {
      await store.create({ sessionId: "a", cwd: "/proj/one", title: "Alpha" });
      await store.create({ sessionId: "b", cwd: "/proj/two", additionalDirectories: ["/lib"] });
      await store.create({ sessionId: "c", cwd: "/proj/one/" });
      let listed = await store.list();
      expect(ids(listed.sessions)).toEqual(["c", "b", "a"]);
      expect(listed.nextCursor).toBeUndefined();
      expect(listed.sessions[2]).toEqual({
        sessionId: "a",
        owner: "default",
        cwd: "/proj/one",
        additionalDirectories: [],
        title: "Alpha",
        createdAt: "2025-01-01T00:00:01.000Z",
        updatedAt: "2025-01-01T00:00:01.000Z",
      });
      expect(listed.sessions[1]!.additionalDirectories).toEqual(["/lib"]);

      await store.append("a", item("u1")); // activity moves a session to the top
      listed = await store.list();
      expect(ids(listed.sessions)).toEqual(["a", "c", "b"]);
      expect(listed.sessions[0]!.updatedAt).toBe("2025-01-01T00:00:04.000Z");
      expect(listed.sessions[0]!.createdAt).toBe("2025-01-01T00:00:01.000Z");

      expect(ids((await store.list({ cwd: "/proj/one" })).sessions)).toEqual(["a", "c"]);
      expect(ids((await store.list({ cwd: "/proj/one/" })).sessions)).toEqual(["a", "c"]);
      expect(ids((await store.list({ cwd: "/proj/two" })).sessions)).toEqual(["b"]);
      expect((await store.list({ cwd: "/proj" })).sessions).toEqual([]);
    });

    it("pages with opaque cursors: no repeats, no gaps, stable when sessions are added", async () => {
      for (let n = 0; n < 7; n++) await store.create({ sessionId: `s${n}`, cwd: n % 2 ? "/odd" : "/even" });
      const all = ids((await store.list()).sessions);
      expect(all).toEqual(["s6", "s5", "s4", "s3", "s2", "s1", "s0"]);

      const first = await store.list({ limit: 3 });
      expect(ids(first.sessions)).toEqual(["s6", "s5", "s4"]);
      expect(typeof first.nextCursor).toBe("string");
      await store.create({ sessionId: "late", cwd: "/even" }); // newest; must not shift the next page
      const second = await store.list({ limit: 3, cursor: first.nextCursor! });
      expect(ids(second.sessions)).toEqual(["s3", "s2", "s1"]);
      const third = await store.list({ limit: 3, cursor: second.nextCursor! });
      expect(ids(third.sessions)).toEqual(["s0"]);
      expect(third.nextCursor).toBeUndefined();

      const even: string[] = [];
      for (let cursor: string | undefined, guard = 0; guard < 10; guard++) {
        const page = await store.list({ cwd: "/even", limit: 2, ...(cursor ? { cursor } : {}) });
        even.push(...ids(page.sessions));
        cursor = page.nextCursor;
        if (!cursor) break;
      }
      expect(even).toEqual(["late", "s6", "s4", "s2", "s0"]);

      const exact = await store.list({ limit: 8 });
      expect(exact.sessions).toHaveLength(8);
      expect(exact.nextCursor).toBeUndefined();

      expect((await rejection(store.list({ cursor: "garbage!" }))).code).toBe("invalid_cursor");
      expect((await rejection(store.list({ limit: 0 }))).code).toBe("invalid_argument");
      expect((await rejection(store.list({ cwd: "relative" }))).code).toBe("invalid_argument");
    });

    it("orders equal updatedAt by session id", async () => {
      const fixed = "2025-06-01T00:00:00.000Z";
      for (const id of ["m", "z", "a"]) {
        await store.create({ sessionId: id, cwd: "/w" });
        await store.updateHeader(id, { updatedAt: fixed });
      }
      const first = await store.list({ limit: 2 });
      expect(ids(first.sessions)).toEqual(["a", "m"]);
      expect(ids((await store.list({ limit: 2, cursor: first.nextCursor! })).sessions)).toEqual(["z"]);
    });

    it("applies header updates (title, updatedAt, metadata, dirs) and keeps them across a reopen", async () => {
      await store.create({ sessionId: "s1", cwd: "/w", metadata: { modeId: "ask", keep: true } });
      await store.append("s1", item("u1"));
      await store.updateHeader("s1", { title: "Fix the tests" });
      await store.updateHeader("s1", { metadata: { modeId: "auto-edit", configValues: { model: "m2" } } });
      await store.updateHeader("s1", { cwd: "/w2", additionalDirectories: ["/extra"] });
      await store.append("s1", item("u2"));

      for (const s of [store, await h.reopen()]) {
        const { header, items } = (await s.load("s1"))!;
        expect(items.map((i) => i.id)).toEqual(["u1", "u2"]);
        expect(header.title).toBe("Fix the tests");
        expect(header.metadata).toEqual({ modeId: "auto-edit", keep: true, configValues: { model: "m2" } });
        expect(header.cwd).toBe("/w2");
        expect(header.additionalDirectories).toEqual(["/extra"]);
        expect(header.createdAt).toBe("2025-01-01T00:00:01.000Z");
        expect(header.updatedAt).toBe("2025-01-01T00:00:06.000Z");
        expect((await s.list()).sessions[0]).toMatchObject({ sessionId: "s1", title: "Fix the tests", cwd: "/w2", updatedAt: header.updatedAt });
      }

      await store.updateHeader("s1", { title: null, updatedAt: "2024-12-24T18:00:00+01:00" });
      const reopened = await h.reopen();
      const { header } = (await reopened.load("s1"))!;
      expect(header.title).toBeUndefined();
      expect(header.updatedAt).toBe("2024-12-24T17:00:00.000Z");
      expect((await reopened.list()).sessions[0]).not.toHaveProperty("title");
    });

    it("deletes: gone from load, exists and list; the id can be used again", async () => {
      await store.create({ sessionId: "s1", cwd: "/w", title: "Old" });
      await store.create({ sessionId: "s2", cwd: "/w" });
      await store.append("s1", item("u1"));
      expect(await store.delete("s1")).toBe(true);
      expect(await store.delete("s1")).toBe(false);
      expect(await store.load("s1")).toBeUndefined();
      expect(await store.exists("s1")).toBe(false);
      expect(ids((await store.list()).sessions)).toEqual(["s2"]);
      const reopened = await h.reopen();
      expect(await reopened.load("s1")).toBeUndefined();
      expect(ids((await reopened.list()).sessions)).toEqual(["s2"]);

      await store.create({ sessionId: "s1", cwd: "/new" });
      const fresh = (await store.load("s1"))!;
      expect(fresh.items).toEqual([]);
      expect(fresh.header.title).toBeUndefined();
      expect(fresh.header.cwd).toBe("/new");
    });

    it("archives: hidden from list by default, shown with include/only, kept across a reopen, un-archived", async () => {
      await store.create({ sessionId: "s1", cwd: "/w" });
      await store.create({ sessionId: "s2", cwd: "/w" });
      await store.updateHeader("s1", { archived: true });
      expect(ids((await store.list()).sessions)).toEqual(["s2"]);
      expect(ids((await store.list({ archived: "only" })).sessions)).toEqual(["s1"]);
      const all = (await store.list({ archived: "include" })).sessions;
      expect(ids(all)).toEqual(["s1", "s2"]);
      expect(all.find((s) => s.sessionId === "s1")?.archived).toBe(true);
      expect(all.find((s) => s.sessionId === "s2")?.archived).toBeUndefined();
      const reopened = await h.reopen();
      expect((await reopened.load("s1"))!.header.archived).toBe(true);
      expect(ids((await reopened.list()).sessions)).toEqual(["s2"]);
      await reopened.updateHeader("s1", { archived: false });
      expect((await reopened.load("s1"))!.header.archived).toBeUndefined();
      expect(ids((await reopened.list()).sessions).sort()).toEqual(["s1", "s2"]);
      expect((await rejection(store.list({ archived: "bogus" as "only" }))).code).toBe("invalid_argument");
      expect((await rejection(store.updateHeader("s1", { archived: "yes" as unknown as boolean }))).code).toBe("invalid_argument");
    });

    it("records fork lineage (forkedFrom) in the header and the summary", async () => {
      await store.create({ sessionId: "src", cwd: "/w" });
      await store.create({ sessionId: "copy", cwd: "/w", forkedFrom: "src" });
      expect((await store.load("copy"))!.header.forkedFrom).toBe("src");
      expect((await store.load("src"))!.header.forkedFrom).toBeUndefined();
      expect((await store.list()).sessions.find((s) => s.sessionId === "copy")?.forkedFrom).toBe("src");
      const reopened = await h.reopen();
      expect((await reopened.load("copy"))!.header.forkedFrom).toBe("src");
    });

    it("records each session's owner (default \"default\"), keeps it across header updates and a reopen, lists by owner", async () => {
      await store.create({ sessionId: "mine", cwd: "/w", owner: "alice", title: "alice's" });
      await store.create({ sessionId: "theirs", cwd: "/w", owner: "bob" });
      await store.create({ sessionId: "old", cwd: "/w" });
      await store.updateHeader("mine", { title: "renamed", metadata: { owner: "bob" } });
      await store.append("mine", item("u1"));
      expect((await store.load("mine"))!.header.owner).toBe("alice");
      expect((await store.load("old"))!.header.owner).toBe("default");
      expect(ids((await store.list({ owner: "alice" })).sessions)).toEqual(["mine"]);
      expect(ids((await store.list({ owner: "bob" })).sessions)).toEqual(["theirs"]);
      expect(ids((await store.list({ owner: "default" })).sessions)).toEqual(["old"]);
      expect((await store.list({ owner: "carol" })).sessions).toEqual([]);
      expect((await store.list({ owner: "alice", cwd: "/w" })).sessions.map((s) => s.owner)).toEqual(["alice"]);
      const reopened = await h.reopen();
      expect((await reopened.load("mine"))!.header.owner).toBe("alice");
      expect(ids((await reopened.list({ owner: "alice" })).sessions)).toEqual(["mine"]);
      expect((await reopened.list()).sessions.map((s) => s.owner).sort()).toEqual(["alice", "bob", "default"]);
    });

    it("pages one owner's sessions without another owner's in between", async () => {
      for (let i = 0; i < 5; i++) {
        await store.create({ sessionId: `a${i}`, cwd: "/w", owner: "alice" });
        await store.create({ sessionId: `b${i}`, cwd: "/w", owner: "bob" });
      }
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.list({ owner: "alice", limit: 2, ...(cursor ? { cursor } : {}) });
        seen.push(...ids(page.sessions));
        cursor = page.nextCursor;
      } while (cursor);
      expect(seen.sort()).toEqual(["a0", "a1", "a2", "a3", "a4"]);
    });
  });
}
