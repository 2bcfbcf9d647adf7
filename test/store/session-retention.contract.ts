import { describe, expect, it } from "vitest";
import type { SessionLeases, SessionStore, StoredItem } from "../../src/store/index.js";
import { cursorBefore, openSessionReader } from "../../src/store/index.js";
import { pruneSessions } from "../../src/store/retention.js";
import { freshStoreEachTest, item, type StoreHarness } from "./session-store.contract.js";

/** Two instances' leases on the same store (for "leased elsewhere"). */
export interface RetentionHarness extends StoreHarness {
  leases(): Promise<{ mine: SessionLeases; theirs: SessionLeases }>;
}

async function all(items: AsyncIterable<StoredItem>): Promise<StoredItem[]> {
  const out: StoredItem[] = [];
  for await (const i of items) out.push(i);
  return out;
}

/** Reading item by item, the cutoff cursor and pruning: the same on every store. */
export function sessionRetentionContract(name: string, make: (clock: () => Date) => Promise<RetentionHarness>): void {
  describe(`SessionStore read / retention contract: ${name}`, () => {
    let h: RetentionHarness;
    let store: SessionStore;
    // One second per write from 2025-01-01: session N is written at second N.
    freshStoreEachTest(make, (fresh) => {
      h = fresh;
      store = fresh.store;
    });

    it("reads a session item by item, with the header's later updates applied at the end", async () => {
      await store.create({ sessionId: "s1", cwd: "/w", title: "First" });
      // Appends to one session keep their call order (and go out together: one write).
      await Promise.all(Array.from({ length: 1203 }, (_, i) => store.append("s1", item(`i${i}`))));
      await store.updateHeader("s1", { title: "Renamed", metadata: { mode: "ask" } });
      await store.append("s1", item("last"));
      const reader = (await openSessionReader(store, "s1"))!;
      expect(reader.created).toMatchObject({ sessionId: "s1", owner: "default", cwd: "/w" });
      const read = await all(reader.items());
      await reader.close();
      expect(read.map((r) => r.item.id)).toEqual([...Array.from({ length: 1203 }, (_, i) => `i${i}`), "last"]);
      expect(read.every((r) => !Number.isNaN(Date.parse(r.at)))).toBe(true);
      const loaded = (await store.load("s1"))!;
      expect(reader.result()).toEqual({ header: loaded.header, warnings: [] });
      expect(read.map((r) => r.item)).toEqual(loaded.items);
      expect(await openSessionReader(store, "missing")).toBeUndefined();
    });

    it("a reader opened and closed without reading costs nothing and changes nothing", async () => {
      await store.create({ sessionId: "s1", cwd: "/w", owner: "alice" });
      await store.append("s1", item("a"));
      const reader = (await openSessionReader(store, "s1"))!;
      expect(reader.created.owner).toBe("alice");
      await reader.close();
      expect((await store.load("s1"))!.items.map((i) => i.id)).toEqual(["a"]);
    });

    it("cursorBefore pages the sessions updated at or before a time, and nothing newer", async () => {
      for (let i = 1; i <= 6; i++) await store.create({ sessionId: `s${i}`, cwd: "/w" }); // s1 at 00:00:01 … s6 at 00:00:06
      const page = await store.list({ cursor: cursorBefore("2025-01-01T00:00:03.500Z"), limit: 2 });
      expect(page.sessions.map((s) => s.sessionId)).toEqual(["s3", "s2"]);
      const rest = await store.list({ cursor: page.nextCursor! });
      expect(rest.sessions.map((s) => s.sessionId)).toEqual(["s1"]);
      expect(rest.nextCursor).toBeUndefined();
    });

    it("prunes what was not updated since the cutoff: dry run lists, a run deletes, archived as asked, leased kept, bounded per run", async () => {
      for (let i = 1; i <= 8; i++) await store.create({ sessionId: `old${i}`, cwd: "/w", owner: i % 2 === 0 ? "alice" : "bob" });
      await store.updateHeader("old1", { archived: true, updatedAt: "2025-01-01T00:00:01.000Z" });
      await store.create({ sessionId: "new", cwd: "/w", createdAt: "2030-01-01T00:00:00.000Z" });
      const { mine, theirs } = await h.leases();
      const held = await theirs.acquire("old2");
      expect(held.acquired).toBe(true);
      const before = "2025-06-01T00:00:00.000Z";

      const dry = await pruneSessions(store, { before, dryRun: true, leases: mine });
      expect(dry.deleted.map((s) => s.sessionId).sort()).toEqual(["old1", "old3", "old4", "old5", "old6", "old7", "old8"]);
      expect(dry.leased.map((l) => l.session.sessionId)).toEqual(["old2"]);
      expect((await store.list({ archived: "include", limit: 100 })).sessions).toHaveLength(9);

      const alice = await pruneSessions(store, { before, owner: "alice", keepArchived: true, leases: mine, limit: 2 });
      expect(alice.deleted.map((s) => s.owner)).toEqual(["alice", "alice"]);
      expect(alice.leased.length + alice.deleted.length).toBeLessThanOrEqual(2);
      expect(alice.more).toBe(true);

      const rest = await pruneSessions(store, { before, keepArchived: true, leases: mine });
      expect(rest.more).toBe(false);
      expect(rest.leased.map((l) => l.session.sessionId)).toEqual(["old2"]);
      const left = (await store.list({ archived: "include", limit: 100 })).sessions.map((s) => s.sessionId).sort();
      expect(left).toEqual(["new", "old1", "old2"]);

      if (held.acquired) await held.lease.release();
      const last = await pruneSessions(store, { before, leases: mine });
      expect(last.deleted.map((s) => s.sessionId).sort()).toEqual(["old1", "old2"]);
      expect((await store.list({ archived: "include" })).sessions.map((s) => s.sessionId)).toEqual(["new"]);
      // The pruner gave its leases back: the session it kept can be opened by anyone.
      expect(await mine.holderOf("old2")).toBeUndefined();
    });
  });
}
