import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { platformTraits } from "./platform.js";
import { proc } from "./proc.js";
import { orphanWatchEnv, readyOrphanWatchdog, unwatchGroup, watchGroup } from "./watchdog.js";

/**
 * Process-group helpers, shared by commands, MCP stdio servers, ACP agents and terminals.
 * Children are spawned with `detached: true`, which makes each the leader of a new process
 * group (pgid = its pid); signalling `-pgid` then reaches every process it started (unless one
 * left the group itself: setsid/daemon), so nothing is orphaned. Detached groups do not die
 * with us, so live groups are tracked and SIGKILLed when this process exits, and (when the
 * orphan watchdog is enabled) ended by the watchdog when this process dies without exiting.
 *
 * A group id is a pid, and pids are reused (pid_max may be 32768, and a busy machine goes
 * through that many in a minute): once a whole group is gone, its id can lead someone else's
 * new group. So a tracked group also remembers when its leader started (/proc), and an id whose
 * pid now names another process is never signalled (the kernel does not reuse the id while any
 * member of the group is left, so a leader that exited before its children is no such case).
 * Off Linux the start time is unknown, so that check cannot be made (`platformLimits` says so).
 *
 * Windows has no process groups: a tree is ended with `taskkill /T /F` (as execa does), and
 * only its leader can be probed.
 */

const { processGroups } = platformTraits();
/** Tracked groups → their leader's start time ("" where /proc cannot say). */
const liveGroups = new Map<number, string>();


/** The id of a tracked group now leads another process's group: ours is gone. */
function reused(pgid: number): boolean {
  const startedAt = liveGroups.get(pgid);
  if (!startedAt) return false;
  const now = proc.startTime(pgid);
  return now !== undefined && now !== startedAt;
}
let exitHookInstalled = false;

/** A process that never started has no group; -1 or 1 would signal everything / init. */
function validGroup(pgid: number): boolean {
  return Number.isInteger(pgid) && pgid > 1;
}

/**
 * Spawns `file` as the leader of a new process group (`detached`), tracked before this returns.
 * The orphan watchdog is started first, so telling it of the group is one write in the same tick
 * as the spawn; and the process carries the watchdog's marker in its environment, so even a
 * SIGKILL of ours that lands before that write (the command runs on another core meanwhile)
 * leaves nothing behind.
 */
export function spawnProcessGroup(file: string, args: readonly string[], options: Omit<SpawnOptions, "detached">): ChildProcess {
  readyOrphanWatchdog();
  // Marked, so the watchdog finds the group even if we die before telling it (watchdog.ts).
  const child = spawn(file, args, { windowsHide: true, ...options, env: orphanWatchEnv(options.env), detached: true });
  if (child.pid !== undefined) {
    // Still listed under this id: a group of ours that ended unnoticed; the id is the new one's now.
    liveGroups.delete(child.pid);
    trackProcessGroup(child.pid);
  }
  return child;
}

/** Remembers a group (call it right after the spawn: its leader's start time is read now) so it is SIGKILLed if this process exits first. */
export function trackProcessGroup(pgid: number): void {
  if (!validGroup(pgid) || liveGroups.has(pgid)) return;
  const startedAt = proc.startTime(pgid) ?? "";
  liveGroups.set(pgid, startedAt);
  watchGroup(pgid, startedAt);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const group of [...liveGroups.keys()]) {
      signalProcessGroup(group, "SIGKILL");
      unwatchGroup(group); // ended here: the watchdog need not wait for it
    }
  });
}

/** Forgets a group that ended (or that the caller ends itself), so its id is never signalled again. */
export function untrackProcessGroup(pgid: number): void {
  if (liveGroups.delete(pgid)) unwatchGroup(pgid);
}

/**
 * Sends `signal` to the whole group led by `pgid`; where that fails (no such group, or no
 * process groups on this platform) to `leader` alone, if given. False when nothing was signalled.
 */
export function signalProcessGroup(pgid: number, signal: NodeJS.Signals, leader?: ChildProcess): boolean {
  if (!validGroup(pgid)) return false;
  if (reused(pgid)) {
    untrackProcessGroup(pgid);
    return false;
  }
  try {
    const plan = treeSignal(pgid, signal);
    if (plan.kind === "taskkill") spawn(plan.file, plan.args, { stdio: "ignore", windowsHide: true }).on("error", () => undefined);
    else process.kill(plan.target, signal);
    return true;
  } catch {
    try {
      return leader?.kill(signal) ?? false;
    } catch {
      return false; // already gone
    }
  }
}

/** How a signal reaches the tree led by `pgid` on `platform`: its POSIX group, or `taskkill /T /F` (Windows: no groups, no signals). */
export function treeSignal(
  pgid: number,
  signal: NodeJS.Signals | 0,
  platform: NodeJS.Platform = process.platform,
): { kind: "group"; target: number } | { kind: "leader"; target: number } | { kind: "taskkill"; file: string; args: string[] } {
  if (platformTraits(platform).processGroups) return { kind: "group", target: -pgid };
  // A probe (0) can only ask about the leader; any real signal ends the tree.
  if (signal === 0) return { kind: "leader", target: pgid };
  return { kind: "taskkill", file: "taskkill", args: ["/pid", String(pgid), "/T", "/F"] };
}

/**
 * True while a non-zombie member of the group exists. Zombies do not count: an orphan is
 * reaped by pid 1, and some init processes (containers, micro-VMs) never reap, so a zombie may
 * stay, and `kill(-pgid, 0)` succeeds for it; on Linux /proc tells them apart.
 */
export function processGroupAlive(pgid: number): boolean {
  if (!validGroup(pgid) || reused(pgid)) return false;
  try {
    process.kill(processGroups ? -pgid : pgid, 0);
  } catch (error) {
    // EPERM: a member exists but is not ours to signal; /proc can still say whether it runs.
    if ((error as { code?: unknown }).code !== "EPERM") return false;
  }
  // Unknown (no /proc): the group exists, so it counts as alive.
  const members = proc.groupMembers(pgid);
  return members === undefined || members.length > 0;
}

/** Pids of running (non-zombie) processes in group `pgid`; empty where /proc cannot say (see `ProcReader.groupMembers`). */
export function livePidsInGroup(pgid: number): number[] {
  return proc.groupMembers(pgid) ?? [];
}

export interface TerminateProcessGroupOptions {
  /** Time between SIGTERM and SIGKILL. Default 1000 ms. */
  graceMs?: number;
  /** Signalled alone where the group cannot be (see `signalProcessGroup`). */
  leader?: ChildProcess;
}

/**
 * SIGTERM to the group now (synchronously, before the first await); SIGKILL to whatever still
 * runs after `graceMs`; then waits (bounded) until no member runs. Resolves once the group is
 * gone (and untracked) or the bound passed (it then stays tracked for the exit hook).
 */
export async function terminateProcessGroup(pgid: number, options: TerminateProcessGroupOptions | number = {}): Promise<void> {
  const { graceMs = 1000, leader } = typeof options === "number" ? { graceMs: options } : options;
  // Where groups cannot be seen (no process groups on this platform), the leader still counts.
  const alive = (): boolean => processGroupAlive(pgid) || (leader !== undefined && leader.exitCode === null && leader.signalCode === null);
  if (!alive()) {
    untrackProcessGroup(pgid);
    return;
  }
  trackProcessGroup(pgid);
  signalProcessGroup(pgid, "SIGTERM", leader);
  if (!(await waitUntilGone(alive, graceMs))) {
    signalProcessGroup(pgid, "SIGKILL", leader);
    if (!(await waitUntilGone(alive, Math.max(graceMs, 2000)))) return;
  }
  untrackProcessGroup(pgid);
}

/** Polls until the group is gone (true) or `withinMs` passed (false). */
export function waitProcessGroupGone(pgid: number, withinMs: number): Promise<boolean> {
  return waitUntilGone(() => processGroupAlive(pgid), withinMs);
}

/** No event exists for the death of a non-child process: poll. */
async function waitUntilGone(alive: () => boolean, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (alive()) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

/** True when `promise` settled within `ms` (waiting for a process's exit event, bounded). */
export async function settledWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true, () => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
