import { mkdir, mkdtemp, readFile, readdir, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Logger } from "../../src/core/index.js";
import type { ApprovalMemoryEntry, ApprovalMemoryStore } from "../../src/store/index.js";
import { FileApprovalMemoryStore, InMemoryApprovalMemoryStore } from "../../src/store/index.js";

function capturingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug() {}, info() {}, error() {}, warn: (m) => void warnings.push(m) };
}

const key = (tool: string, target: string): string => JSON.stringify(["tool_call", "edit", tool, target]);
const allow: ApprovalMemoryEntry = { decision: "allow", createdAt: "2025-01-01T00:00:00.000Z", toolName: "write_file", target: "src/a.ts" };
const reject: ApprovalMemoryEntry = { decision: "reject", createdAt: "2025-01-02T00:00:00.000Z", toolName: "shell", target: "rm -rf /", reason: "never" };

interface Harness {
  store: ApprovalMemoryStore;
  restart(): ApprovalMemoryStore;
}

function approvalContract(name: string, make: (stateDir: string) => Harness): void {
  describe(`ApprovalMemoryStore contract: ${name}`, () => {
    let base: string;
    let rootA: string;
    let rootB: string;
    let h: Harness;
    beforeEach(async () => {
      base = await mkdtemp(join(tmpdir(), "agentkit-approvals-"));
      rootA = join(base, "ws-a");
      rootB = join(base, "ws-b");
      await mkdir(rootA);
      await mkdir(rootB);
      h = make(join(base, "state"));
    });
    afterEach(() => rm(base, { recursive: true, force: true }));

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

    it("rejects bad input", async () => {
      const { store } = h;
      await expect(store.set("relative/root", "k", allow)).rejects.toThrow(/absolute/);
      await expect(store.set(rootA, "", allow)).rejects.toThrow(/non-empty/);
      await expect(store.set(rootA, "k", { decision: "maybe" } as unknown as ApprovalMemoryEntry)).rejects.toThrow(/decision/);
      expect(await store.list(rootA)).toEqual([]);
    });
  });
}

approvalContract("InMemoryApprovalMemoryStore", () => {
  const store = new InMemoryApprovalMemoryStore();
  return { store, restart: () => store };
});

approvalContract("FileApprovalMemoryStore", (stateDir) => ({
  store: new FileApprovalMemoryStore({ stateDir, logger: capturingLogger() }),
  restart: () => new FileApprovalMemoryStore({ stateDir, logger: capturingLogger() }),
}));

describe("FileApprovalMemoryStore on disk", () => {
  let base: string;
  let root: string;
  let logger: ReturnType<typeof capturingLogger>;
  let store: FileApprovalMemoryStore;
  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), "agentkit-approvals-disk-"));
    await mkdir(join(base, "workspace"));
    root = await realpath(join(base, "workspace")); // the file records the real path
    logger = capturingLogger();
    store = new FileApprovalMemoryStore({ stateDir: join(base, "state"), logger });
  });
  afterEach(() => rm(base, { recursive: true, force: true }));

  it("writes one readable JSON file per root, named by a hash of its real path, without temp leftovers", async () => {
    await store.set(root, "k", allow);
    const file = await store.fileFor(root);
    expect(file).toMatch(/[/\\]state[/\\]approvals[/\\][0-9a-f]{32}\.json$/);
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({ version: 1, root, entries: { k: allow } });
    expect(await readdir(join(base, "state", "approvals"))).toEqual([file.split(/[/\\]/).pop()]);
  });

  it("tolerates a corrupt file: warns once, reads as empty, keeps it aside on the next write", async () => {
    const file = await store.fileFor(root);
    await mkdir(join(base, "state", "approvals"), { recursive: true });
    await writeFile(file, "{ not json");
    expect(await store.get(root, "k")).toBeUndefined();
    expect(await store.get(root, "k")).toBeUndefined();
    expect(logger.warnings.filter((w) => w.includes("is unreadable"))).toHaveLength(1);

    await store.set(root, "k", allow);
    expect(await store.get(root, "k")).toEqual(allow);
    const names = await readdir(join(base, "state", "approvals"));
    expect(names.filter((n) => n.includes(".corrupt-"))).toHaveLength(1);
    expect(logger.warnings.some((w) => w.includes("kept as"))).toBe(true);
  });

  it("drops invalid entries and files written for another root", async () => {
    const file = await store.fileFor(root);
    await mkdir(join(base, "state", "approvals"), { recursive: true });
    await writeFile(file, JSON.stringify({ version: 1, root, entries: { good: allow, bad: { decision: "perhaps" } } }));
    expect(await store.list(root)).toEqual([{ key: "good", entry: allow }]);
    expect(logger.warnings.some((w) => w.includes('invalid entry "bad"'))).toBe(true);

    await writeFile(file, JSON.stringify({ version: 1, root: "/somewhere/else", entries: { good: allow } }));
    expect(await store.get(root, "good")).toBeUndefined();
  });

  it("serializes concurrent writes to one root without losing any", async () => {
    await Promise.all(Array.from({ length: 30 }, (_, n) => store.set(root, `k${String(n).padStart(2, "0")}`, allow)));
    const listed = await new FileApprovalMemoryStore({ stateDir: join(base, "state"), logger }).list(root);
    expect(listed.map((r) => r.key)).toEqual(Array.from({ length: 30 }, (_, n) => `k${String(n).padStart(2, "0")}`));
  });
});
