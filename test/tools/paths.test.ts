import { mkdir, symlink } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PathAccessError, displayPath, isInsideRoots, isPathInside, resolveInsideRoots } from "../../src/tools/index.js";
import { makeWorkspace } from "./support.js";
import type { Workspace } from "./support.js";

let ws: Workspace;
beforeEach(async () => {
  ws = await makeWorkspace();
});
afterEach(async () => {
  await ws.cleanup();
});

async function refusal(p: string, mode: "read" | "write" = "read", roots = [ws.root], cwd: string | null = ws.root): Promise<PathAccessError> {
  const error = await resolveInsideRoots(p, roots, cwd === null ? { mode } : { mode, cwd }).then(
    (resolved) => new Error(`accepted as ${resolved}`),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PathAccessError);
  return error as PathAccessError;
}

describe("isPathInside", () => {
  it("compares whole segments", () => {
    expect(isPathInside("/ws/app", "/ws/app")).toBe(true);
    expect(isPathInside("/ws/app/x/y", "/ws/app")).toBe(true);
    expect(isPathInside("/ws/app-evil", "/ws/app")).toBe(false);
    expect(isPathInside("/ws/app-evil/x", "/ws/app")).toBe(false);
    expect(isPathInside("/ws", "/ws/app")).toBe(false);
    expect(isPathInside("/ws/app/..foo", "/ws/app")).toBe(true);
    expect(isPathInside("/anything", "/")).toBe(true);
  });

  it("displays paths relative to cwd when inside it", () => {
    expect(displayPath("/ws/app/src/a.ts", "/ws/app")).toBe("src/a.ts");
    expect(displayPath("/ws/app", "/ws/app")).toBe(".");
    expect(displayPath("/ws/app-evil/a.ts", "/ws/app")).toBe("/ws/app-evil/a.ts");
  });
});

describe("resolveInsideRoots", () => {
  it("accepts paths inside, relative or absolute, existing or not, and returns the real path", async () => {
    const opts = { mode: "read" as const, cwd: ws.root };
    expect(await resolveInsideRoots("inside.txt", [ws.root], opts)).toBe(path.join(ws.root, "inside.txt"));
    expect(await resolveInsideRoots(path.join(ws.root, "sub/nested.txt"), [ws.root], opts)).toBe(path.join(ws.root, "sub/nested.txt"));
    expect(await resolveInsideRoots("sub/../inside.txt", [ws.root], opts)).toBe(path.join(ws.root, "inside.txt"));
    expect(await resolveInsideRoots("../app/inside.txt", [ws.root], opts)).toBe(path.join(ws.root, "inside.txt"));
    expect(await resolveInsideRoots("new/deep/file.txt", [ws.root], { mode: "write", cwd: ws.root })).toBe(path.join(ws.root, "new/deep/file.txt"));
    expect(await resolveInsideRoots(".", [ws.root], opts)).toBe(ws.root);
  });

  it("follows a symlink that stays inside to its real target", async () => {
    expect(await resolveInsideRoots("link-in", [ws.root], { mode: "write", cwd: ws.root })).toBe(path.join(ws.root, "inside.txt"));
  });

  it("realpaths the roots themselves (a root given through a symlink)", async () => {
    const viaLink = path.join(ws.base, "root-link");
    await symlink(ws.root, viaLink);
    expect(await resolveInsideRoots(path.join(viaLink, "inside.txt"), [viaLink], { mode: "read" })).toBe(path.join(ws.root, "inside.txt"));
    expect(await resolveInsideRoots(path.join(ws.root, "inside.txt"), [viaLink], { mode: "read" })).toBe(path.join(ws.root, "inside.txt"));
  });

  it("accepts any of several roots", async () => {
    expect(await resolveInsideRoots(ws.secret, [ws.root, ws.outside], { mode: "read", cwd: ws.root })).toBe(ws.secret);
  });

  it("refuses .. escapes", async () => {
    const error = await refusal("../../outside/secret.txt");
    expect(error.code).toBe("outside_roots");
    expect(error.message).toContain("../../outside/secret.txt");
    expect(error.message).toContain(ws.root);
  });

  it("refuses absolute paths outside", async () => {
    expect((await refusal(ws.secret)).code).toBe("outside_roots");
    expect((await refusal("/etc/passwd")).code).toBe("outside_roots");
  });

  it("refuses a sibling that shares the root's prefix (/ws/app-evil next to /ws/app)", async () => {
    expect((await refusal(path.join(ws.evil, "file.txt"))).code).toBe("outside_roots");
    expect((await refusal("../app-evil/file.txt", "write")).code).toBe("outside_roots");
    expect((await refusal(ws.evil)).code).toBe("outside_roots");
  });

  it("refuses symlinks pointing out (file and directory), naming the real target", async () => {
    const file = await refusal("link-out-file");
    expect(file.code).toBe("outside_roots");
    expect(file.message).toContain(ws.secret);
    expect((await refusal("link-out-dir/secret.txt", "write")).code).toBe("outside_roots");
    expect((await refusal("link-out-dir/not-yet.txt", "write")).code).toBe("outside_roots");
  });

  it("refuses a dangling symlink, and paths below one", async () => {
    const error = await refusal("dangling", "write");
    expect(error.code).toBe("dangling_symlink");
    expect(error.message).toContain("dangling");
    expect((await refusal("dangling", "read")).code).toBe("dangling_symlink");
    await symlink(path.join(ws.outside, "no-such-dir"), path.join(ws.root, "dangling-dir"));
    expect((await refusal("dangling-dir/file.txt", "write")).code).toBe("dangling_symlink");
  });

  it("refuses NUL bytes, empty paths, relative paths without cwd, and no roots", async () => {
    expect((await refusal("inside.txt\0.png")).code).toBe("nul_byte");
    expect((await refusal("")).code).toBe("empty_path");
    expect((await refusal("inside.txt", "read", [ws.root], null)).code).toBe("not_absolute");
    expect((await refusal("inside.txt", "read", [ws.root], "relative/cwd")).code).toBe("not_absolute");
    expect((await refusal("inside.txt", "read", [])).code).toBe("no_roots");
  });

  it("refuses a symlink loop as unresolvable", async () => {
    await symlink(path.join(ws.root, "loop-b"), path.join(ws.root, "loop-a"));
    await symlink(path.join(ws.root, "loop-a"), path.join(ws.root, "loop-b"));
    expect((await refusal("loop-a/x")).code).toBe("unresolvable");
  });

  it("treats a root that does not exist yet by its parent's real path", async () => {
    const future = path.join(ws.base, "ws", "future");
    expect(await resolveInsideRoots(path.join(future, "a.txt"), [future], { mode: "write" })).toBe(path.join(future, "a.txt"));
    await mkdir(future);
    expect((await refusal(path.join(ws.base, "ws", "futurex", "a.txt"), "write", [future])).code).toBe("outside_roots");
  });

  it("isInsideRoots is the boolean form", async () => {
    expect(await isInsideRoots("inside.txt", [ws.root], { mode: "read", cwd: ws.root })).toBe(true);
    expect(await isInsideRoots("link-out-file", [ws.root], { mode: "read", cwd: ws.root })).toBe(false);
  });
});
