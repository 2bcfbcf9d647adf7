import { mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ApprovalMemoryEntry, ApprovalMemoryStore } from "../../src/store/index.js";

const key = (tool: string, target: string): string => JSON.stringify(["tool_call", "edit", tool, target]);
const allow: ApprovalMemoryEntry = { decision: "allow", createdAt: "2025-01-01T00:00:00.000Z", toolName: "write_file", target: "src/a.ts" };
const reject: ApprovalMemoryEntry = { decision: "reject", createdAt: "2025-01-02T00:00:00.000Z", toolName: "shell", target: "rm -rf /", reason: "never" };

export interface ApprovalHarness {
  store: ApprovalMemoryStore;
  restart(): ApprovalMemoryStore;
  cleanup?(): Promise<void>;
}

/** The behaviour every ApprovalMemoryStore must have. `make` gets a fresh state dir per test. */
export function approvalContract(name: string, make: (stateDir: string) => ApprovalHarness | Promise<ApprovalHarness>): void {
  describe(`ApprovalMemoryStore contract: ${name}`, () => {
    let base: string;
    let rootA: string;
    let rootB: string;
    let h: ApprovalHarness;
    beforeEach(async () => {
      base = await mkdtemp(join(tmpdir(), "agentkit-approvals-"));
      rootA = join(base, "ws-a");
      rootB = join(base, "ws-b");
      await mkdir(rootA);
      await mkdir(rootB);
      h = await make(join(base, "state"));
    });
    afterEach(async () => {
      await h.cleanup?.();
      await rm(base, { recursive: true, force: true });
    });

    it("remembers allow and reject per key; other keys and other roots stay unknown", async () => {
      const { store } = h;
      expect(await store.get(rootA, key("write_file", "src/a.ts"))).toBeUndefined();
      await store.set(rootA, key("write_file", "src/a.ts"), allow);
      await store.set(rootA, key("shell", "rm -rf /"), reject);
      expect(await store.get(rootA, key("write_file", "src/a.ts"))).toEqual(allow);
      expect(await store.get(rootA, key("shell", "rm -rf /"))).toEqual(reject);
      expect(await store.get(rootA, key("write_file", "src/b.ts"))).toBeUndefined();
      expect(await store.get(rootB, key("write_file", "src/a.ts"))).toBeUndefined();
      expect((await store.list(rootA)).map((r) => r.key)).toEqual([key("shell", "rm -rf /"), key("write_file", "src/a.ts")].sort());
      expect(await store.list(rootB)).toEqual([]);
    });

    it("overwrites an answer, deletes one, and hands out copies", async () => {
      const { store } = h;
      await store.set(rootA, "k", allow);
      await store.set(rootA, "k", reject);
      const got = (await store.get(rootA, "k"))!;
      expect(got).toEqual(reject);
      got.decision = "allow";
      expect((await store.get(rootA, "k"))!.decision).toBe("reject");
      expect(await store.delete(rootA, "k")).toBe(true);
      expect(await store.delete(rootA, "k")).toBe(false);
      expect(await store.get(rootA, "k")).toBeUndefined();
    });

    it("survives a restart (a new instance on the same state dir)", async () => {
      await h.store.set(rootA, "allow-key", allow);
      await h.store.set(rootA, "reject-key", reject);
      const restarted = h.restart();
      expect(await restarted.get(rootA, "allow-key")).toEqual(allow);
      expect(await restarted.get(rootA, "reject-key")).toEqual(reject);
    });

    it("scopes by the real path: a symlink to the root shares its answers", async () => {
      const link = join(base, "link-to-a");
      await symlink(rootA, link);
      await h.store.set(link, "k", allow);
      expect(await h.store.get(rootA, "k")).toEqual(allow);
      expect(await h.store.get(`${rootA}/`, "k")).toEqual(allow);
    });

    it("clears one root or all roots", async () => {
      const { store } = h;
      await store.set(rootA, "k", allow);
      await store.set(rootB, "k", reject);
      await store.clear(rootA);
      expect(await store.get(rootA, "k")).toBeUndefined();
      expect(await store.get(rootB, "k")).toEqual(reject);
      await store.set(rootA, "k2", allow);
      await store.clear();
      expect(await store.get(rootA, "k2")).toBeUndefined();
      expect(await store.get(rootB, "k")).toBeUndefined();
      expect(await h.restart().get(rootB, "k")).toBeUndefined();
    });

    it("keeps every one of many concurrent writes to one root", async () => {
      const keys = Array.from({ length: 30 }, (_, n) => `k${String(n).padStart(2, "0")}`);
      await Promise.all(keys.map((k) => h.store.set(rootA, k, allow)));
      expect((await h.restart().list(rootA)).map((r) => r.key)).toEqual(keys);
    });

    it("rejects bad input", async () => {
      const { store } = h;
      await expect(store.set("relative/root", "k", allow)).rejects.toThrow(/absolute/);
      await expect(store.set(rootA, "", allow)).rejects.toThrow(/non-empty/);
      await expect(store.set(rootA, "k", { decision: "maybe" } as unknown as ApprovalMemoryEntry)).rejects.toThrow(/decision/);
      expect(await store.list(rootA)).toEqual([]);
    });
  });
}

