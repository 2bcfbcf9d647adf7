import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createFileSystemHost, type HostAuditEvent } from "../../../src/acp/client/index.js";
import { ATTACKS, advertisedFs, expectZeroEscapes, type Report } from "./escape-checks.js";
import { buildLayout, driveAgent, reports, snapshot, type Layout } from "./host-support.js";

let layout: Layout | undefined;
afterEach(() => layout?.cleanup());

async function attack(access: "read" | "read-write") {
  layout = buildLayout();
  const l = layout;
  const audit: HostAuditEvent[] = [];
  const host = createFileSystemHost({ access, onRequest: (e) => audit.push(e) });
  const before = { outside: snapshot(l.outside), evil: snapshot(l.evil), extra: snapshot(l.extra), app: snapshot(l.cwd) };
  const run = await driveAgent({
    agentFile: "fs-escape-agent.mjs",
    fileSystem: host,
    sessions: [{ cwd: l.cwd, additionalDirectories: [l.extra] }],
    prompt: () => JSON.stringify({ outside: l.outside, evil: l.evil }),
  });
  expect(run.stopReasons).toEqual(["end_turn"]);
  expect(run.exitCode).toBe(0);
  const results = reports<Report>(run.text.get(run.sessions[0]!.sessionId));
  return { l, host, audit, before, results };
}

describe("fs host against an adversarial agent over stdio", () => {
  it("read-write host: every escape is refused with a clear error; controls work; the disk outside is untouched", async () => {
    const { l, audit, before, results } = await attack("read-write");
    const names = new Set(results.map((r) => r.name));
    for (const a of ATTACKS) {
      expect(names, a).toContain(`read:${a}`);
      expect(names, a).toContain(`write:${a}`);
    }
    const refusals = results.filter((r) => r.expect === "refuse");
    expect(refusals.length).toBeGreaterThanOrEqual(2 * ATTACKS.length);
    for (const r of refusals) {
      expect(r.ok, `${r.name} must be refused`).toBe(false);
      expect([-32602, -32002], r.name).toContain(r.error?.code);
      expect(r.error?.message.length, r.name).toBeGreaterThan(20);
      if (r.error?.code === -32602) expect(typeof r.error.data?.reason, r.name).toBe("string");
    }
    // Reasons are specific, not a blanket refusal.
    const reason = (name: string) => results.find((r) => r.name === name)?.error?.data?.reason;
    expect(reason("read:relative")).toBe("not_absolute");
    expect(reason("read:prefix-confusion")).toBe("outside_roots");
    expect(reason("read:symlink-dir")).toBe("outside_roots");
    expect(reason("write:dangling-symlink")).toBe("dangling_symlink");
    expect(reason("write:dangling-dir-symlink")).toBe("dangling_symlink");
    expect(reason("read:symlink-loop")).toBe("symlink");
    expect(reason("read:nul-byte")).toBe("invalid_path");
    expect(reason("read:fifo")).toBe("not_a_file");
    expect(reason("write:fifo")).toBe("not_a_file");
    expect(reason("read:hard-link")).toBe("hard_link");
    expect(reason("write:hard-link")).toBe("hard_link");
    expect(reason("write:too-large")).toBe("too_large");
    expect(results.find((r) => r.name === "read:missing")?.error?.code).toBe(-32002);
    // Messages name the requested path, never the outside target or its content.
    const link = results.find((r) => r.name === "read:symlink-file-absolute")!;
    expect(link.error?.message).toContain(`${l.cwd}/link-file`);
    expect(link.error?.message).not.toContain(l.outside);

    const byName = new Map(results.map((r) => [r.name, r]));
    expect(byName.get("read:control-file")).toMatchObject({ ok: true, content: "inside ok\nline2\nline3\n" });
    expect(byName.get("read:control-line-limit")).toMatchObject({ ok: true, content: "line2\n" });
    expect(byName.get("read:control-inner-symlink")).toMatchObject({ ok: true, content: "inside ok\nline2\nline3\n" });
    expect(byName.get("read:control-lexical-dotdot")).toMatchObject({ ok: true, content: "inside ok\nline2\nline3\n" });
    expect(byName.get("read:control-additional-dir")).toMatchObject({ ok: true, content: "extra root file\n" });
    expect(byName.get("write:control-new-nested")).toMatchObject({ ok: true });
    expect(byName.get("write:control-existing")).toMatchObject({ ok: true });
    expect(readFileSync(join(l.cwd, "new/deep/created.txt"), "utf8")).toBe("created inside");
    expect(readFileSync(join(l.cwd, "sub/inner.txt"), "utf8")).toBe("rewritten inside");

    expectZeroEscapes(l, results, before);
    // Inside the root only the two allowed writes changed something.
    const after = snapshot(l.cwd);
    for (const key of ["new", "new/deep", "new/deep/created.txt", "sub/inner.txt"]) delete after[key];
    const was = { ...before.app };
    delete was["sub/inner.txt"];
    expect(after).toEqual(was);

    // The audit hook saw every call with the same verdicts.
    expect(audit).toHaveLength(results.filter((r) => r.op !== "info").length);
    expect(audit.filter((e) => e.verdict === "allowed")).toHaveLength(results.filter((r) => r.ok && r.op !== "info").length);
    expect(advertisedFs(results)).toEqual({ readTextFile: true, writeTextFile: true });
  }, 60_000);

  it("read-only host: writes are not advertised and every write is refused; nothing on disk changes", async () => {
    const { l, host, before, results } = await attack("read");
    expect(host.canRead).toBe(true);
    expect(host.canWrite).toBe(false);
    expect(advertisedFs(results)).toEqual({ readTextFile: true, writeTextFile: false });
    const writes = results.filter((r) => r.op === "write");
    expect(writes.length).toBeGreaterThanOrEqual(ATTACKS.length + 2);
    for (const w of writes) {
      expect(w.ok, w.name).toBe(false);
      expect(w.error?.code, w.name).toBe(-32602);
      expect(w.error?.data?.reason, w.name).toBe("disabled");
    }
    expect(results.find((r) => r.name === "read:control-line-limit")).toMatchObject({ ok: true, content: "line2\n" });
    for (const r of results.filter((x) => x.op === "read" && x.expect === "refuse")) expect(r.ok, r.name).toBe(false);
    expect(snapshot(l.cwd)).toEqual(before.app);
    expectZeroEscapes(l, results, before);
  }, 60_000);
});
