import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmdirSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { ConfigError } from "./errors.js";
import { formatNetAllow, type NetAllowEntry } from "./sandbox-net.js";
import { bridgedArgv, proxyEnvironment, SandboxProxy, sandboxProxySocket, type SandboxBridge } from "./sandbox-proxy.js";
import { acquirePlaceholders, entryKind, nestedBinds, protectedPathsOf, protectionPlan, realOrUndefined as realDir } from "./sandbox-protected.js";
import { seatbeltProfile } from "./sandbox-seatbelt.js";
import { writeSeccompFile } from "./sandbox-seccomp.js";

/**
 * Commands in an OS sandbox (docs/sandbox.md). Linux: bubblewrap, with the workspace roots
 * read-write, the system directories read-only, nothing else of the file system, a private
 * size-bounded /tmp, every namespace unshared (no network, own pids, no signals out) and
 * per-command resource limits (prlimit inside the sandbox; a pids cgroup where rlimits cannot
 * count processes). macOS: a Seatbelt profile (sandbox-seatbelt.ts). No engine → an error naming
 * what to install, never a silent run without a sandbox.
 */

export type SandboxMode = "off" | "workspace";
/** The values `--sandbox` accepts. */
export const sandboxModes: readonly SandboxMode[] = ["off", "workspace"];

/** Resource bounds for a sandboxed command (CPU time, memory, processes, /tmp and file sizes). */
export interface SandboxLimits {
  /** RLIMIT_CPU: CPU seconds per process (SIGXCPU, then SIGKILL). */
  cpuSeconds: number;
  /** RLIMIT_AS: address space per process, bytes. */
  memoryBytes: number;
  /** Processes (threads count) alive at once in one command: RLIMIT_NPROC, or a pids cgroup when running as root. */
  processes: number;
  /** Size of the private /tmp, bytes. */
  tmpBytes: number;
  /** RLIMIT_FSIZE: largest file a command may write, bytes. */
  fileBytes: number;
}

const MiB = 1024 * 1024;
/** The bounds used where none are given. */
export const defaultSandboxLimits: Readonly<SandboxLimits> = {
  cpuSeconds: 300,
  memoryBytes: 4096 * MiB,
  processes: 256,
  tmpBytes: 256 * MiB,
  fileBytes: 1024 * MiB,
};

/** What a sandbox allows, for `initialize`'s `_meta` and logs. */
export interface SandboxDescription {
  engine: "bubblewrap" | "seatbelt";
  writable: string[];
  /** "off": no network; else only the destinations allowed, through the proxy (docs/sandbox.md). */
  network: "off" | { allow: string[]; via: "http-proxy" };
  limits: SandboxLimits;
  /** How the process bound is enforced: "rlimit", "cgroup", or "none" (said so, not hidden). */
  processBound: "rlimit" | "cgroup" | "none";
  /** Whether commands run under the seccomp filter (sandbox-seccomp.ts; bubblewrap on x64 and arm64). */
  seccomp: boolean;
}

/**
 * What the sandbox refused or bounded for one command, as it happens (for the audit trail): a
 * destination the proxy refused, or a bound the command hit. `evidence` says how a bound was
 * known: the kernel's signal, the pids cgroup's count, or only the command's own error text
 * (which the command controls).
 */
export type SandboxRefusal =
  | { kind: "network"; host: string; port: number; reason: string }
  | { kind: "bound"; bound: SandboxBound; limit: string; evidence: "signal" | "cgroup" | "output" };

/** The per-command bounds (`--sandbox-limit`): CPU time, processes, memory, /tmp, file size. */
export type SandboxBound = "cpu" | "processes" | "memory" | "tmp" | "file";

/** A sandbox and what one session's commands may write there, with where refusals are reported. */
export interface SandboxPlacement {
  sandbox: CommandSandbox;
  writable: readonly string[];
  /** Called for each refusal of a command (network destination, bound hit); e.g. serve's audit trail. */
  onRefusal?: (refusal: SandboxRefusal) => void;
}

/** The `onRefusal` of a placement, as `WrapOptions` take it (absent when none). */
export function refusals(placement: SandboxPlacement): Pick<WrapOptions, "onRefusal"> {
  return placement.onRefusal ? { onRefusal: placement.onRefusal } : {};
}

/** A command line to spawn instead of the original, and what to do once it ended. */
export interface SandboxedCommand {
  file: string;
  args: string[];
  /** Call once the command's process group is gone: removes its cgroup; returns notes naming bounds that were hit. */
  finish(output: string, exit: { code: number | null; signal: string | null }): string[];
}

/**
 * The OS sandbox cannot run here (no bubblewrap or sandbox-exec, or user namespaces refused); the message says what
 * to install or enable. Commands are never run unsandboxed instead.
 */
export class SandboxUnavailableError extends ConfigError {
  constructor(message: string) {
    super(message);
    this.name = "SandboxUnavailableError";
  }
}

/** How `CommandSandbox.create` finds its engine, which bounds it applies and what network it allows. */
export interface SandboxOptions {
  limits?: Partial<SandboxLimits>;
  /** Search path for the engine (default: PATH). */
  path?: string;
  platform?: NodeJS.Platform;
  /** `--sandbox-net allow=…`: destinations commands may reach through the proxy (none: no network). */
  netAllow?: readonly NetAllowEntry[];
  /** @internal The allow-list bridge: "node" forces node's (bench/sandbox.ts compares the two); default perl's where found. */
  bridge?: "node";
  /** @internal false: no seccomp filter (tests show what it refuses); default on where there is one for this architecture. */
  seccomp?: boolean;
}

/** What one wrapped command may see and write. */
export interface WrapOptions {
  cwd: string;
  writable: readonly string[];
  /** Further directories to see read-only (e.g. the agent program's own files). */
  readOnly?: readonly string[];
  /** "host": keep the network; an allow-list: only those destinations (through the proxy); "off": none. Default: the sandbox's `netAllow`. */
  network?: "off" | "host" | { allow: readonly NetAllowEntry[] };
  /** false: no resource bounds (a long-running agent process); default true. */
  bounds?: boolean;
  /** HOME for the process: a scratch tmpfs at this path (default: HOME is the private /tmp); `readOnly`/`writable` dirs inside it are bound over it. */
  home?: string;
  /** Told of each refusal (a destination the proxy refused, a bound hit), as it happens. */
  onRefusal?: (refusal: SandboxRefusal) => void;
}

/** A sandbox engine found on this machine; `wrap` one command with the roots it may write. */
export class CommandSandbox {
  readonly engine: "bubblewrap" | "seatbelt";
  readonly limits: SandboxLimits;
  /** What commands may reach by default (empty: no network). */
  readonly netAllow: readonly NetAllowEntry[];
  readonly #enginePath: string;
  readonly #prlimit: string | undefined;
  readonly #cgroupRoot: string | undefined;
  readonly #bridge: SandboxBridge;
  /** The seccomp filter's file, opened on fd 3 for bwrap --seccomp; undefined: none. */
  #seccompFile: string | undefined;
  #counter = 0;

  private constructor(engine: "bubblewrap" | "seatbelt", enginePath: string, limits: SandboxLimits, prlimit: string | undefined, cgroupRoot: string | undefined, netAllow: readonly NetAllowEntry[], bridge: SandboxBridge) {
    this.engine = engine;
    this.#bridge = bridge;
    this.netAllow = netAllow;
    this.#enginePath = enginePath;
    this.limits = limits;
    this.#prlimit = prlimit;
    this.#cgroupRoot = cgroupRoot;
  }

  /** Finds the engine; throws `SandboxUnavailableError` naming what to install. */
  static create(options: SandboxOptions = {}): CommandSandbox {
    const platform = options.platform ?? process.platform;
    const limits = { ...defaultSandboxLimits, ...options.limits };
    const search = options.path ?? process.env.PATH ?? "/usr/bin:/bin";
    const netAllow = [...(options.netAllow ?? [])];
    if (platform === "darwin") {
      const exec = findExecutable("sandbox-exec", search);
      if (!exec) throw new SandboxUnavailableError("the sandbox needs sandbox-exec (macOS Seatbelt), which was not found on PATH");
      if (netAllow.length > 0) throw new SandboxUnavailableError("--sandbox-net allow-lists need bubblewrap (Linux); on macOS sandboxed commands have no network");
      return new CommandSandbox("seatbelt", exec, limits, undefined, undefined, netAllow, { kind: "node", path: process.execPath });
    }
    if (platform !== "linux") throw new SandboxUnavailableError(`no sandbox engine for ${platform}: Linux (bubblewrap) and macOS (sandbox-exec) are supported`);
    const bwrap = findExecutable("bwrap", search);
    if (!bwrap) throw new SandboxUnavailableError("the sandbox needs bubblewrap (bwrap), which was not found on PATH: install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)");
    const prlimit = findExecutable("prlimit", search);
    if (!prlimit) throw new SandboxUnavailableError("the sandbox needs prlimit (util-linux) for its resource limits, which was not found on PATH: install util-linux");
    const sandbox = new CommandSandbox("bubblewrap", bwrap, limits, prlimit, process.getuid?.() === 0 ? pidsCgroupRoot() : undefined, netAllow, findBridge(search, options.bridge));
    if (options.seccomp !== false) sandbox.#seccompFile = writeSeccompFile();
    return sandbox;
  }

  /** What serves the proxy on a sandbox's loopback under an allow-list: `perl` (~5 ms a command) or `node` (~50 ms; no perl found). */
  get bridge(): SandboxBridge["kind"] {
    return this.#bridge.kind;
  }

  /** How the process bound is enforced here: rlimits do not count root's processes. */
  get processBound(): SandboxDescription["processBound"] {
    if (this.engine === "seatbelt") return "rlimit";
    if (this.#cgroupRoot) return "cgroup";
    return process.getuid?.() === 0 ? "none" : "rlimit";
  }

  describe(writable: readonly string[], netAllow: readonly NetAllowEntry[] = this.netAllow): SandboxDescription {
    const network = netAllow.length > 0 ? { allow: netAllow.map(formatNetAllow), via: "http-proxy" as const } : ("off" as const);
    return { engine: this.engine, writable: [...writable], network, limits: { ...this.limits }, processBound: this.processBound, seccomp: this.#seccompFile !== undefined };
  }

  /** `file args…` run in `cwd`, able to write only `writable` (resolved through symlinks). */
  wrap(file: string, args: readonly string[], options: WrapOptions): SandboxedCommand {
    const real = (dirs: readonly string[] | undefined) => (dirs ?? []).map((dir) => realDir(dir)).filter((dir): dir is string => dir !== undefined);
    const writable = real(options.writable);
    const cwd = realDir(options.cwd) ?? options.cwd;
    const network = options.network ?? { allow: this.netAllow };
    if (this.engine === "seatbelt") {
      const profile = seatbeltProfile({ writable, readable: [dirname(dirname(process.execPath))], protect: protectedPathsOf(writable) });
      const limited = ["/bin/sh", "-c", `${ulimitLine(this.limits)}; exec "$0" "$@"`, file, ...args];
      return { file: this.#enginePath, args: ["-p", profile, ...limited], finish: (output, exit) => this.#bounded(limitHits(this.limits, output, exit, false), options) };
    }
    // An allow-list: a proxy of this command's own (its refusals are this command's), bridged in.
    const proxy = typeof network === "object" && network.allow.length > 0 ? SandboxProxy.open(network.allow, {}, options.onRefusal) : undefined;
    const netArgs = proxy && typeof network === "object" ? { proxy: { socket: proxy.socketPath, env: proxyEnvironment(network.allow) } } : {};
    const bridged = (argv: readonly string[]) => (proxy ? bridgedArgv(this.#bridge, argv) : [...argv]);
    const home = options.home !== undefined ? { home: options.home } : {};
    const seccomp = this.#seccompFile !== undefined ? { seccompFd: SECCOMP_FD } : {};
    // The protected paths inside the writable roots (sandbox-protected.ts), placeholders held until the command ends.
    const protect = protectionPlan(writable);
    const releasePlaceholders = acquirePlaceholders(protect.placeholders);
    const base = { writable, cwd, tmpBytes: this.limits.tmpBytes, extraReadOnly: nodePrefix(), readOnly: real(options.readOnly), shareNet: network === "host", protect, ...netArgs, ...home, ...seccomp };
    const closeProxy = (): string[] => {
      releasePlaceholders();
      proxy?.close();
      return proxy?.notes() ?? [];
    };
    if (options.bounds === false) return { ...this.#launch(undefined, [this.#enginePath, ...bubblewrapArgs(base), "--", ...bridged([file, ...args])]), finish: closeProxy };
    const inner = bridged([this.#prlimit ?? "prlimit", ...prlimitArgs(this.limits, this.processBound === "rlimit"), "--", file, ...args]);
    const cgroup = this.#cgroupRoot ? this.#newCgroup() : undefined;
    return {
      ...this.#launch(cgroup, [this.#enginePath, ...bubblewrapArgs(base), "--", ...inner]),
      finish: (output, exit) => {
        const hitProcesses = cgroup !== undefined && cgroupMaxEvents(cgroup) > 0;
        if (cgroup) removeCgroup(cgroup);
        return [...closeProxy(), ...this.#bounded(limitHits(this.limits, output, exit, hitProcesses), options)];
      },
    };
  }

  /**
   * bwrap directly, or through a shell that first moves itself into the pids cgroup (nothing
   * runs outside it) and opens the seccomp filter on fd 3 for `--seccomp 3`, then becomes bwrap.
   */
  #launch(cgroup: string | undefined, bwrap: readonly string[]): { file: string; args: string[] } {
    if (cgroup === undefined && this.#seccompFile === undefined) {
      const [first, ...rest] = bwrap;
      return { file: first ?? "bwrap", args: rest };
    }
    const script = 'if [ -n "$0" ]; then echo $$ > "$0" || exit 125; fi; f=$1; shift; if [ -z "$f" ]; then exec "$@"; fi; exec "$@" 3<"$f"';
    return { file: "/bin/sh", args: ["-c", script, cgroup !== undefined ? join(cgroup, "cgroup.procs") : "", this.#seccompFile ?? "", ...bwrap] };
  }

  /** Reports the bounds hit and returns their notes. */
  #bounded(hits: readonly LimitHit[], options: WrapOptions): string[] {
    for (const hit of hits) options.onRefusal?.({ kind: "bound", bound: hit.bound, limit: hit.limit, evidence: hit.evidence });
    return hits.map((hit) => hit.note);
  }

  #newCgroup(): string | undefined {
    const dir = join(this.#cgroupRoot ?? "", `agentkit-sandbox-${process.pid}-${++this.#counter}`);
    try {
      mkdirSync(dir);
      writeFileSync(join(dir, "pids.max"), String(this.limits.processes));
      return dir;
    } catch {
      removeCgroup(dir);
      return undefined;
    }
  }
}

/** bubblewrap's arguments (before `--` and the command): a root of read-only system directories plus the writable roots. */
export interface BubblewrapOptions {
  writable: readonly string[];
  cwd: string;
  tmpBytes: number;
  extraReadOnly?: string | undefined;
  readOnly?: readonly string[];
  /** Keep the host's network namespace (an agent process without an allow-list). */
  shareNet?: boolean;
  /** The allow-list proxy's Unix socket, bound at `sandboxProxySocket`, and the variables that point clients at it. */
  proxy?: { socket: string; env: Record<string, string> };
  /** A scratch HOME (tmpfs) at this path instead of /tmp; binds inside it come after it. */
  home?: string;
  /** The fd bwrap reads the seccomp filter from (`--seccomp FD`), opened by the launcher. */
  seccompFd?: number;
  /** Paths kept read-only inside the writable roots, and the directories pinned in place above them (`protectionPlan`). */
  protect?: { readOnly: readonly string[]; pins: readonly string[]; placeholders?: ReadonlyArray<{ path: string }> };
}

export function bubblewrapArgs(options: BubblewrapOptions): string[] {
  const args = ["--die-with-parent", "--new-session", "--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL"];
  // The network namespace is the host's only for an agent process (its model); a resolv.conf link into /run stays resolvable.
  if (options.shareNet) args.push("--share-net");
  for (const dir of ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"]) {
    const kind = entryKind(dir);
    if (kind === "symlink") args.push("--symlink", readlinkSync(dir), dir);
    else if (kind === "dir") args.push("--ro-bind", dir, dir);
  }
  // Secrets in /etc are masked (an empty file / directory in their place).
  for (const file of etcSecretFiles()) args.push("--ro-bind", "/dev/null", file);
  for (const dir of ["/etc/ssl/private"]) if (entryKind(dir) === "dir") args.push("--tmpfs", dir);
  if (options.shareNet && entryKind("/run/systemd/resolve") === "dir") args.push("--ro-bind", "/run/systemd/resolve", "/run/systemd/resolve");
  args.push("--dev", "/dev", "--proc", "/proc", "--size", String(options.tmpBytes), "--perms", "1777", "--tmpfs", "/tmp");
  const home = options.home !== undefined && options.home !== "/tmp" && options.home.startsWith("/") ? options.home : undefined;
  if (home) args.push("--size", String(options.tmpBytes), "--perms", "0700", "--tmpfs", home);
  // After /tmp's tmpfs, so a directory under /tmp (a Node installed there, as CI's Node 24 is) is
  // not hidden by it; writable roots last.
  if (options.extraReadOnly && !isUnder(options.extraReadOnly, ["/usr", "/bin", "/lib"])) args.push("--ro-bind", options.extraReadOnly, options.extraReadOnly);
  args.push(...nestedBinds(options.readOnly ?? [], options.writable, options.protect));
  // Read-only is enough: connecting to a Unix socket is not a write to its file system.
  if (options.proxy) args.push("--ro-bind", options.proxy.socket, sandboxProxySocket);
  for (const [name, value] of Object.entries(options.proxy?.env ?? {})) args.push("--setenv", name, value);
  args.push("--setenv", "HOME", home ?? "/tmp", "--setenv", "TMPDIR", "/tmp", "--chdir", options.cwd);
  if (options.seccompFd !== undefined) args.push("--seccomp", String(options.seccompFd));
  return args;
}

/** prlimit's options: soft = hard, so a command cannot raise them. */
export function prlimitArgs(limits: SandboxLimits, countProcesses: boolean): string[] {
  const args = [`--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`, `--as=${limits.memoryBytes}`, `--fsize=${limits.fileBytes}`];
  if (countProcesses) args.push(`--nproc=${limits.processes}`);
  return args;
}

/** The same bounds as a POSIX shell `ulimit` line (macOS, where prlimit does not exist). */
export function ulimitLine(limits: SandboxLimits): string {
  return `ulimit -t ${limits.cpuSeconds} -v ${Math.floor(limits.memoryBytes / 1024)} -f ${Math.floor(limits.fileBytes / 512)} -u ${limits.processes}`;
}

/** A bound a command appears to have hit: which, its value, how it is known, and the note for the tool result. */
export interface LimitHit {
  bound: SandboxBound;
  limit: string;
  evidence: "signal" | "cgroup" | "output";
  note: string;
}

/** Which bounds a command appears to have hit (by its exit, the cgroup's count and its output: the kernel reports no more). */
export function limitHits(limits: SandboxLimits, output: string, exit: { code: number | null; signal: string | null }, processesHit: boolean): LimitHit[] {
  const hits: LimitHit[] = [];
  const tail = output.slice(-8192);
  const mib = (bytes: number) => `${Math.round(bytes / MiB)} MiB`;
  const cpuSignal = exit.signal === "SIGXCPU" || exit.code === 152;
  if (cpuSignal || /CPU time limit exceeded/i.test(tail)) {
    hits.push({ bound: "cpu", limit: `${limits.cpuSeconds} s`, evidence: cpuSignal ? "signal" : "output", note: `[sandbox: the command hit the CPU time limit (${limits.cpuSeconds} s per process)]` });
  }
  if (processesHit || /Cannot fork|fork: (retry: )?Resource temporarily unavailable|EAGAIN.*spawn|spawn.*EAGAIN/i.test(tail)) {
    hits.push({ bound: "processes", limit: String(limits.processes), evidence: processesHit ? "cgroup" : "output", note: `[sandbox: the command hit the process limit (${limits.processes} at once)]` });
  }
  if (/Cannot allocate memory|out of memory|ENOMEM|allocation failed/i.test(tail)) {
    hits.push({ bound: "memory", limit: mib(limits.memoryBytes), evidence: "output", note: `[sandbox: the command may have hit the memory limit (${mib(limits.memoryBytes)} of address space per process)]` });
  }
  if (/No space left on device|ENOSPC/i.test(tail)) hits.push({ bound: "tmp", limit: mib(limits.tmpBytes), evidence: "output", note: `[sandbox: /tmp is full (${mib(limits.tmpBytes)}) or the workspace's disk is]` });
  const fileSignal = exit.signal === "SIGXFSZ" || exit.code === 153;
  if (fileSignal || /File size limit exceeded/i.test(tail)) {
    hits.push({ bound: "file", limit: mib(limits.fileBytes), evidence: fileSignal ? "signal" : "output", note: `[sandbox: the command hit the file size limit (${mib(limits.fileBytes)})]` });
  }
  return hits;
}

/** Lines saying which bound a command appears to have hit (`limitHits`' notes). */
export function limitNotes(limits: SandboxLimits, output: string, exit: { code: number | null; signal: string | null }, processesHit: boolean): string[] {
  return limitHits(limits, output, exit, processesHit).map((hit) => hit.note);
}

/** Files under /etc no command needs and none should read: password hashes, host private keys. */
function etcSecretFiles(): string[] {
  const files = ["/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/security/opasswd", "/etc/sudoers"];
  try {
    for (const name of readdirSync("/etc/ssh")) if (/^ssh_host_.*_key$/.test(name)) files.push(`/etc/ssh/${name}`);
  } catch {
    // no /etc/ssh
  }
  return files.filter((file) => entryKind(file) === "file");
}

function isUnder(path: string, roots: readonly string[]): boolean {
  return roots.some((root) => path === root || path.startsWith(`${root}/`));
}

/** Node's install prefix (…/bin/node → …), so `node` runs in the sandbox wherever it is installed. */
function nodePrefix(): string | undefined {
  return realDir(dirname(dirname(process.execPath)));
}

/** The fd the launcher opens the seccomp filter on. */
const SECCOMP_FD = 3;

/** perl's bridge when a perl is on the search path and visible in the sandbox (under /usr or /bin), else node's. */
function findBridge(search: string, force: "node" | undefined): SandboxBridge {
  const perl = force === "node" ? undefined : findExecutable("perl", search);
  const real = perl !== undefined ? realDir(perl) : undefined;
  if (real !== undefined && isUnder(real, ["/usr", "/bin"])) return { kind: "perl", path: real };
  return { kind: "node", path: process.execPath };
}

/** The first executable `name` in the directories of `search` (a PATH value); undefined when none. */
export function findExecutable(name: string, search: string): string | undefined {
  for (const dir of search.split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** A writable pids cgroup (v1 hierarchy) to bound root's processes; undefined where there is none. */
function pidsCgroupRoot(): string | undefined {
  const root = "/sys/fs/cgroup/pids";
  if (!existsSync(join(root, "cgroup.procs"))) return undefined;
  try {
    accessSync(root, constants.W_OK);
  } catch {
    return undefined;
  }
  // Cgroups left by a server that died: empty ones of pids no longer running are removed.
  for (const name of readdirSync(root)) {
    const match = /^agentkit-sandbox-(\d+)-\d+$/.exec(name);
    if (match && !pidRuns(Number(match[1]))) removeCgroup(join(root, name));
  }
  return root;
}

function pidRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === "EPERM";
  }
}

function cgroupMaxEvents(dir: string): number {
  try {
    return Number(/^max (\d+)/m.exec(readFileSync(join(dir, "pids.events"), "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Removes a cgroup once empty: its last members may take a moment to go with their pid namespace. */
function removeCgroup(dir: string, attempts = 50): void {
  try {
    rmdirSync(dir);
  } catch (error) {
    if ((error as { code?: unknown }).code === "EBUSY" && attempts > 1) setTimeout(() => removeCgroup(dir, attempts - 1), 100).unref();
  }
}

/** The sandbox an agent reports in `_meta.agentkit.sandbox` (serve's initialize and first update), if any. */
function reportedSandbox(meta: unknown): { mode?: unknown; engine?: unknown; network?: unknown } | undefined {
  const sandbox = (meta as { agentkit?: { sandbox?: unknown } } | null | undefined)?.agentkit?.sandbox;
  return typeof sandbox === "object" && sandbox !== null ? sandbox : undefined;
}

/** Whether that report says the agent's commands run sandboxed. */
export function reportsSandboxOn(meta: unknown): boolean {
  return reportedSandbox(meta)?.mode === "workspace";
}

/**
 * One line from an agent's `initialize` `_meta.agentkit.sandbox` (what `serve` sends), for
 * `prompt` and `check`: undefined when the agent says nothing about a sandbox. Values come from
 * the agent: callers print them through their control-character filter.
 */
export function sandboxMetaText(meta: unknown): string | undefined {
  const sandbox = reportedSandbox(meta);
  if (sandbox === undefined) return undefined;
  const { mode, engine, network } = sandbox;
  if (mode === "off") return "the agent's commands run unsandboxed";
  if (mode !== "workspace") return undefined;
  const allow = (network as { allow?: unknown } | undefined)?.allow;
  const net = Array.isArray(allow) && allow.length > 0 ? `only ${allow.map(String).join(", ")}` : "none";
  return `the agent's commands run sandboxed (${String(engine)}; workspace writable; network: ${net})`;
}
