import { existsSync, linkSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RequestError } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { createFileSystemHost, type FileSystemHostOptions, type HostAccessRequest, type HostAuditEvent } from "../../../src/acp/client/index.js";
import { buildLayout, snapshot, type Layout } from "./host-support.js";

let layout: Layout | undefined;
afterEach(() => layout?.cleanup());

const signal = new AbortController().signal;

function setup(options: Partial<FileSystemHostOptions> = {}) {
  layout = buildLayout();
  const l = layout;
  const session = { sessionId: "s1", cwd: l.cwd, additionalDirectories: [] as string[] };
  const host = createFileSystemHost({ access: "read-write", ...options });
  const read = (path: string, extra: { line?: number; limit?: number } = {}) => host.readTextFile({ sessionId: "s1", path, ...extra }, session, signal);
  const write = (path: string, content: string) => host.writeTextFile({ sessionId: "s1", path, content }, session, signal);
  return { l, host, session, read, write };
}

async function refusedWith(promise: Promise<unknown>, reason: string): Promise<RequestError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RequestError);
  const re = error as RequestError;
  expect((re.data as { reason?: string } | undefined)?.reason, re.message).toBe(reason);
  return re;
}

describe("fs host: checks between resolution and use (TOCTOU)", () => {
  // The authorize gate runs after the path was resolved and before the file is opened: the
  // ideal moment for a racing local process to swap things under the host.
  it("a file swapped for a symlink to outside after the check is not followed (O_NOFOLLOW)", async () => {
    const ref = {} as { l: Layout };
    const swap = () => {
      renameSync(join(ref.l.cwd, "ok.txt"), join(ref.l.cwd, "ok.old"));
      symlinkSync(join(ref.l.outside, "secret.txt"), join(ref.l.cwd, "ok.txt"));
      return "allow" as const;
    };
    const t = setup({ authorize: () => swap() });
    const l = (ref.l = t.l);
    const before = snapshot(l.outside);
    await refusedWith(t.read(join(ref.l.cwd, "ok.txt")), "symlink");
    writeFileSync(join(ref.l.cwd, "victim.txt"), "victim\n");
    // The write variant: an existing file becomes a symlink to outside between check and open.
    let writeSwapped = false;
    const t2 = createFileSystemHost({
      access: "read-write",
      authorize: () => {
        if (!writeSwapped) {
          writeSwapped = true;
          renameSync(join(ref.l.cwd, "victim.txt"), join(ref.l.cwd, "victim.old"));
          symlinkSync(join(ref.l.outside, "secret.txt"), join(ref.l.cwd, "victim.txt"));
        }
        return "allow";
      },
    });
    await refusedWith(t2.writeTextFile({ sessionId: "s1", path: join(ref.l.cwd, "victim.txt"), content: "PWNED" }, t.session, signal), "symlink");
    expect(snapshot(l.outside)).toEqual(before);
  });

  it("a parent directory swapped for a symlink after the check is caught on the open descriptor", async () => {
    const ref = {} as { l: Layout };
    let swapped = false;
    const swapDir = () => {
      if (!swapped) {
        swapped = true;
        renameSync(join(ref.l.cwd, "dir"), join(ref.l.cwd, "dir.old"));
        symlinkSync(l.outside, join(ref.l.cwd, "dir"));
      }
      return "allow" as const;
    };
    const t = setup({ authorize: () => swapDir() });
    const l = (ref.l = t.l);
    mkdirSync(join(l.cwd, "dir"));
    writeFileSync(join(l.cwd, "dir", "secret.txt"), "inside version\n");
    const before = snapshot(l.outside);
    const error = await refusedWith(t.read(join(l.cwd, "dir", "secret.txt")), "outside_roots");
    expect(error.message).not.toContain(l.marker);

    // Write of a new file: the create lands outside, is detected, and is removed again.
    swapped = false;
    renameSync(join(l.cwd, "dir"), join(l.cwd, "dir.link"));
    renameSync(join(l.cwd, "dir.old"), join(l.cwd, "dir"));
    await refusedWith(t.write(join(l.cwd, "dir", "new.txt"), "PWNED"), "outside_roots");
    expect(existsSync(join(l.outside, "new.txt"))).toBe(false);
    expect(snapshot(l.outside)).toEqual(before);
  });
});

describe("fs host: roots, modes, limits, hooks", () => {
  it("a symlinked root is resolved: paths through it work, escapes through it do not", async () => {
    const t = setup();
    const l = t.l;
    symlinkSync(l.cwd, join(l.ws, "app-link"));
    const session = { sessionId: "s1", cwd: join(l.ws, "app-link"), additionalDirectories: [] };
    const res = await t.host.readTextFile({ sessionId: "s1", path: join(l.ws, "app-link", "ok.txt") }, session, signal);
    expect(res.content).toBe("inside ok\nline2\nline3\n");
    await refusedWith(t.host.readTextFile({ sessionId: "s1", path: join(l.ws, "app-link", "..", "outside", "secret.txt") }, session, signal), "outside_roots");
    await t.host.writeTextFile({ sessionId: "s1", path: join(l.ws, "app-link", "via-link.txt"), content: "ok" }, session, signal);
    expect(readFileSync(join(l.cwd, "via-link.txt"), "utf8")).toBe("ok");
  });

  it("extra roots and replaceSessionRoots", async () => {
    layout = buildLayout();
    const l = layout;
    const session = { sessionId: "s1", cwd: l.cwd, additionalDirectories: [] };
    const withExtra = createFileSystemHost({ access: "read", roots: [l.extra] });
    expect((await withExtra.readTextFile({ sessionId: "s1", path: join(l.extra, "extra.txt") }, session, signal)).content).toBe("extra root file\n");
    const only = createFileSystemHost({ access: "read", roots: (s) => [join(s.cwd, "sub")], replaceSessionRoots: true });
    expect((await only.readTextFile({ sessionId: "s1", path: join(l.cwd, "sub", "inner.txt") }, session, signal)).content).toBe("inner\n");
    await refusedWith(only.readTextFile({ sessionId: "s1", path: join(l.cwd, "ok.txt") }, session, signal), "outside_roots");
  });

  it("access flags: canRead/canWrite follow the mode", async () => {
    expect(createFileSystemHost({ access: "read" })).toMatchObject({ canRead: true, canWrite: false });
    expect(createFileSystemHost({ access: "read-write" })).toMatchObject({ canRead: true, canWrite: true });
    const writeOnly = createFileSystemHost({ access: { read: false, write: true } });
    expect(writeOnly).toMatchObject({ canRead: false, canWrite: true });
    layout = buildLayout();
    await refusedWith(writeOnly.readTextFile({ sessionId: "s1", path: join(layout.cwd, "ok.txt") }, { sessionId: "s1", cwd: layout.cwd, additionalDirectories: [] }, signal), "disabled");
  });

  it("line/limit are honoured (1-based; past the end → empty)", async () => {
    const t = setup();
    const p = join(t.l.cwd, "ok.txt");
    expect((await t.read(p, { line: 1, limit: 2 })).content).toBe("inside ok\nline2\n");
    expect((await t.read(p, { line: 3 })).content).toBe("line3\n");
    expect((await t.read(p, { line: 9 })).content).toBe("");
    expect((await t.read(p, { limit: 0 })).content).toBe("");
    await refusedWith(t.read(p, { line: 0 }), "invalid_argument");
    await refusedWith(t.read(p, { limit: -1 }), "invalid_argument");
  });

  it("read cap: a whole oversized file is refused, a window of it is served; non-UTF-8 is refused", async () => {
    const t = setup({ maxReadBytes: 1000 });
    const big = join(t.l.cwd, "big.txt");
    writeFileSync(big, Array.from({ length: 500 }, (_, i) => `line ${i + 1}`).join("\n"));
    const e = await refusedWith(t.read(big), "too_large");
    expect(e.message).toContain("1000-byte limit");
    expect((await t.read(big, { line: 400, limit: 2 })).content).toBe("line 400\nline 401\n");
    await refusedWith(t.read(big, { line: 1, limit: 400 }), "too_large");
    writeFileSync(join(t.l.cwd, "bin.dat"), Buffer.from([0x66, 0x6f, 0xff, 0xfe, 0x00]));
    await refusedWith(t.read(join(t.l.cwd, "bin.dat")), "not_text");
    writeFileSync(join(t.l.cwd, "utf8.txt"), "héllo wörld ✓ 𝄞\n");
    expect((await t.read(join(t.l.cwd, "utf8.txt"))).content).toBe("héllo wörld ✓ 𝄞\n");
  });

  it("write cap and parent creation policy", async () => {
    const t = setup({ maxWriteBytes: 10 });
    await refusedWith(t.write(join(t.l.cwd, "w.txt"), "12345678901"), "too_large");
    await t.write(join(t.l.cwd, "w.txt"), "é12345678"); // exactly 10 UTF-8 bytes
    const strict = createFileSystemHost({ access: "read-write", createDirectories: false });
    await refusedWith(strict.writeTextFile({ sessionId: "s1", path: join(t.l.cwd, "nope", "x.txt"), content: "x" }, t.session, signal), "no_parent");
    expect(existsSync(join(t.l.cwd, "nope"))).toBe(false);
    await strict.writeTextFile({ sessionId: "s1", path: join(t.l.cwd, "sub", "y.txt"), content: "y" }, t.session, signal);
    // A file in the way of a parent directory.
    await refusedWith(t.write(join(t.l.cwd, "ok.txt", "child.txt"), "x"), "not_a_directory");
  });

  it("hard links: refused by default, reads allowed with refuse-writes, both with allow", async () => {
    const t = setup();
    const hard = join(t.l.cwd, "hard");
    await refusedWith(t.read(hard), "hard_link");
    const readsOk = createFileSystemHost({ access: "read-write", hardLinks: "refuse-writes" });
    expect((await readsOk.readTextFile({ sessionId: "s1", path: hard }, t.session, signal)).content).toContain(t.l.marker);
    await refusedWith(readsOk.writeTextFile({ sessionId: "s1", path: hard, content: "x" }, t.session, signal), "hard_link");
    linkSync(join(t.l.cwd, "ok.txt"), join(t.l.cwd, "ok-twin.txt"));
    const allow = createFileSystemHost({ access: "read-write", hardLinks: "allow" });
    await allow.writeTextFile({ sessionId: "s1", path: join(t.l.cwd, "ok-twin.txt"), content: "both" }, t.session, signal);
    expect(readFileSync(join(t.l.cwd, "ok.txt"), "utf8")).toBe("both");
  });

  it("editor buffers: read returns the buffer, write goes to it; never consulted for refused paths", async () => {
    const buffers = new Map<string, string>();
    const asked: string[] = [];
    const t = setup({
      buffers: {
        read: (path) => {
          asked.push(path);
          return buffers.get(path);
        },
        write: (path, content) => {
          if (!buffers.has(path)) return false;
          buffers.set(path, content);
          return true;
        },
      },
    });
    const ok = join(t.l.cwd, "ok.txt");
    buffers.set(ok, "unsaved 1\nunsaved 2\n");
    expect((await t.read(ok)).content).toBe("unsaved 1\nunsaved 2\n");
    expect((await t.read(ok, { line: 2 })).content).toBe("unsaved 2\n");
    await t.write(ok, "edited in buffer");
    expect(buffers.get(ok)).toBe("edited in buffer");
    expect(readFileSync(ok, "utf8")).toBe("inside ok\nline2\nline3\n");
    await t.write(join(t.l.cwd, "plain.txt"), "to disk");
    expect(readFileSync(join(t.l.cwd, "plain.txt"), "utf8")).toBe("to disk");
    await refusedWith(t.read(join(t.l.cwd, "link-file")), "outside_roots");
    expect(asked.every((p) => p.startsWith(t.l.cwd + "/"))).toBe(true);
    expect(asked).not.toContain(join(t.l.cwd, "link-file"));
  });

  it("authorize gate: a policy can deny writes outside a sub-tree; the observer sees every verdict", async () => {
    const seen: HostAccessRequest[] = [];
    const audit: HostAuditEvent[] = [];
    const t = setup({
      authorize: (request) => {
        seen.push(request);
        return request.kind === "fs_write" && !request.resolvedPath.startsWith(`${request.roots[0]}/sub/`) ? "deny" : "allow";
      },
      onRequest: (e) => audit.push(e),
    });
    await t.write(join(t.l.cwd, "sub", "allowed.txt"), "ok");
    const e = await refusedWith(t.write(join(t.l.cwd, "denied.txt"), "no"), "denied");
    expect(e.message).toContain("permission policy");
    expect(existsSync(join(t.l.cwd, "denied.txt"))).toBe(false);
    expect((await t.read(join(t.l.cwd, "ok.txt"))).content).toContain("inside ok");
    await refusedWith(t.read(join(t.l.outside, "secret.txt")), "outside_roots");
    expect(seen.map((s) => s.kind)).toEqual(["fs_write", "fs_write", "fs_read"]);
    expect(audit.map((a) => [a.kind, a.verdict, a.reason ?? null])).toEqual([
      ["fs_write", "allowed", null],
      ["fs_write", "refused", "denied"],
      ["fs_read", "allowed", null],
      ["fs_read", "refused", "outside_roots"],
    ]);
    expect(audit[0]).toMatchObject({ source: "disk", bytes: 2, resolvedPath: join(t.l.cwd, "sub", "allowed.txt") });
  });

  it("a cancelled request answers -32800; a mismatched session id is refused", async () => {
    const t = setup();
    const aborted = AbortSignal.abort();
    const e = await t.host.readTextFile({ sessionId: "s1", path: join(t.l.cwd, "ok.txt") }, t.session, aborted).catch((x: unknown) => x);
    expect((e as RequestError).code).toBe(-32800);
    await refusedWith(t.host.readTextFile({ sessionId: "other", path: join(t.l.cwd, "ok.txt") }, t.session, signal), "invalid_argument");
  });

  it("no approved root exists: everything is refused", async () => {
    const host = createFileSystemHost({ access: "read-write" });
    const session = { sessionId: "s1", cwd: "/nonexistent-root-for-test", additionalDirectories: [] };
    await refusedWith(host.readTextFile({ sessionId: "s1", path: "/nonexistent-root-for-test/x" }, session, signal), "outside_roots");
  });
});
