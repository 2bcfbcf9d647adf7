import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { enableOrphanWatchdog } from "../../../src/core/process/watchdog.js";
import { treeSignal } from "../../../src/core/process/group.js";
import { resolveLaunch } from "../../../src/core/process/launch.js";
import { noFollowFlag, PlatformFeatureError, platformLimits, platformTraits } from "../../../src/core/process/platform.js";
import { procReader } from "../../../src/core/process/proc.js";
import { FileSystemHost } from "../../../src/acp/client/fs-host.js";

// The platform differences of the process seam, each branch reached by injecting the platform.
const dir = mkdtempSync(join(tmpdir(), "akproc-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A fake /proc: `stat` lines as the kernel writes them (the command may hold spaces and ")"). */
function fakeProc(): string {
  const root = join(dir, "proc");
  // `children`: the reaped children's user and system clock ticks (cutime, cstime).
  const stat = (pid: number, state: string, pgrp: number, start: number, children = [0, 0]): string =>
    `${pid} (a) b) ${state} 1 ${pgrp} ${pgrp} 0 -1 4194560 0 0 0 0 0 0 ${children.join(" ")} 20 0 1 0 ${start} 0 0\n`;
  const add = (pid: number | string, files: Record<string, string>): void => {
    mkdirSync(join(root, String(pid)), { recursive: true });
    for (const [name, text] of Object.entries(files)) writeFileSync(join(root, String(pid), name), text);
  };
  add("self", { stat: stat(1, "R", 1, 1, [12, 3]), limits: "Limit  Soft Limit  Hard Limit  Units\nMax open files            1024                 4096                 files\n" });
  add(100, { stat: stat(100, "S", 100, 5000), cmdline: "node\0agent.js\0", environ: "A=1\0AGENTKIT_ORPHAN_WATCH=ab\0" });
  add(101, { stat: stat(101, "Z", 100, 5001), environ: "" });
  add(102, { stat: stat(102, "R", 100, 5002), environ: "AGENTKIT_ORPHAN_WATCH=abc\0" });
  return root;
}

describe("the process seam per platform", () => {
  it("declares what each platform allows", () => {
    expect(platformTraits("linux", 0o400000)).toEqual({ processGroups: true, procfs: true, noFollow: true });
    expect(platformTraits("darwin", 0x100)).toEqual({ processGroups: true, procfs: false, noFollow: true });
    expect(platformTraits("win32", undefined)).toEqual({ processGroups: false, procfs: false, noFollow: false });
    expect(platformLimits("linux")).toEqual([]);
    expect(platformLimits("darwin").join(" ")).toMatch(/no \/proc on darwin: .*reused its id/);
    const windows = platformLimits("win32").join(" ");
    for (const words of [/win32 is not a supported platform \(linux, darwin\)/, /taskkill \/T \/F/, /no O_NOFOLLOW on win32/]) expect(windows).toMatch(words);
  });

  it("refuses a no-follow open where the flag does not exist, instead of opening with 0", () => {
    expect(noFollowFlag("x", "linux", 0o400000)).toBe(0o400000);
    expect(() => noFollowFlag("the file-system host service", "win32", undefined)).toThrow(PlatformFeatureError);
    expect(() => noFollowFlag("the file-system host service", "linux", 0)).toThrow(/the file-system host service needs O_NOFOLLOW opens .*linux does not have/);
    // On this machine the fs host has it (the refusal itself is the line above).
    expect(() => new FileSystemHost({ roots: [dir], access: "read" })).not.toThrow();
  });

  it("reads /proc on Linux and answers unknown elsewhere", () => {
    const root = fakeProc();
    const linux = procReader({ platform: "linux", root });
    expect(linux.available).toBe(true);
    expect(linux.startTime(100)).toBe("5000");
    expect(linux.state(100)).toBe("running");
    expect(linux.state(101)).toBe("zombie");
    expect(linux.state(999)).toBe("gone");
    expect(linux.groupMembers(100)?.sort()).toEqual([100, 102]); // the zombie does not count
    expect(linux.groupsWithEnv("AGENTKIT_ORPHAN_WATCH=ab")).toEqual([100]); // whole entries only: "abc" is another
    expect(linux.commandLine(100)).toBe("node agent.js");
    expect(linux.openFileLimit()).toBe(1024);
    expect(linux.reapedChildrenCpuMs()).toBe(150); // (12 + 3) ticks of 10 ms
    for (const platform of ["darwin", "win32"] as const) {
      const other = procReader({ platform, root });
      expect(other.available).toBe(false);
      expect([other.startTime(100), other.state(100), other.groupMembers(100), other.groupsWithEnv("A=1"), other.commandLine(100), other.openFileLimit(), other.reapedChildrenCpuMs()]).toEqual([
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
      ]);
    }
  });

  it("ends a tree by its process group on POSIX and with taskkill /T /F on Windows", () => {
    expect(treeSignal(4242, "SIGTERM", "linux")).toEqual({ kind: "group", target: -4242 });
    expect(treeSignal(4242, "SIGKILL", "darwin")).toEqual({ kind: "group", target: -4242 });
    expect(treeSignal(4242, "SIGTERM", "win32")).toEqual({ kind: "taskkill", file: "taskkill", args: ["/pid", "4242", "/T", "/F"] });
    expect(treeSignal(4242, 0, "win32")).toEqual({ kind: "leader", target: 4242 });
    // No groups: the watchdog cannot run, and says so by refusing (platformLimits names it at start).
    expect(enableOrphanWatchdog({}, "win32")).toBe(false);
  });

  it("launches a shell line and an npx-style command on each platform", () => {
    expect(resolveLaunch({ shellLine: "npx -y agent" }, { platform: "linux" })).toEqual({ file: "/bin/sh", args: ["-c", "npx -y agent"] });
    expect(resolveLaunch({ command: "npx", args: ["-y", "agent"] }, { platform: "darwin" })).toEqual({ file: "npx", args: ["-y", "agent"] });
    const bin = join(dir, "bin");
    mkdirSync(join(bin, "node_modules", ".bin"), { recursive: true });
    writeFileSync(join(bin, "npx.CMD"), ""); // Windows matches names without case; this file system does not
    writeFileSync(join(bin, "tool.EXE"), "");
    const env = { PATH: `C:\\nowhere;${bin}`, PATHEXT: ".EXE;.CMD", ComSpec: "C:\\Windows\\system32\\cmd.exe" };
    expect(resolveLaunch({ shellLine: "npx -y agent" }, { platform: "win32", env })).toEqual({
      file: env.ComSpec,
      args: ["/d", "/s", "/c", '"npx -y agent"'],
      windowsVerbatimArguments: true,
    });
    expect(resolveLaunch({ command: "tool", args: ["a b"] }, { platform: "win32", env })).toEqual({ file: join(bin, "tool.EXE"), args: ["a b"] });
    // A .cmd shim runs through cmd.exe, each argument quoted and its metacharacters escaped: no injection.
    const shim = resolveLaunch({ command: "npx", args: ["-y", "a&b", 'say "hi"'] }, { platform: "win32", env });
    expect(shim.file).toBe(env.ComSpec);
    expect(shim.windowsVerbatimArguments).toBe(true);
    expect(shim.args.slice(0, 3)).toEqual(["/d", "/s", "/c"]);
    expect(shim.args[3]).toContain('^"-y^"');
    expect(shim.args[3]).toContain('^"a^&b^"');
    expect(shim.args[3]).toContain('^"say^ \\^"hi\\^"^"');
    // Not found: left as given (spawn reports ENOENT, named by the caller).
    expect(resolveLaunch({ command: "missing" }, { platform: "win32", env })).toEqual({ file: "missing", args: [] });
  });
});
