import { mkdir, mkdtemp, readFile, readdir, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Logger } from "../../src/core/index.js";
import type { ApprovalMemoryEntry } from "../../src/store/index.js";
import { FileApprovalMemoryStore, InMemoryApprovalMemoryStore } from "../../src/store/index.js";
import { approvalContract } from "./approval-store.contract.js";

const allow: ApprovalMemoryEntry = { decision: "allow", createdAt: "2025-01-01T00:00:00.000Z", toolName: "write_file", target: "src/a.ts" };

function capturingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug() {}, info() {}, error() {}, warn: (m) => void warnings.push(m) };
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

});
