import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";
import { errnoCode } from "./host-common.js";

// Process-group helpers for the terminal host. A terminal's command is the leader of its own
// group (spawned detached), so signalling -pgid reaches every child it started, unless one of
// them left the group itself (setsid/daemon), which nothing short of cgroups can follow.

const hasProc = process.platform === "linux" && existsSync("/proc/self/stat");

/** Groups of running terminals; SIGKILLed if the host process exits without releasing them. */
const liveGroups = new Set<number>();
let exitHook = false;

/** A process that never started has no group; -1 or 1 would signal everything / init. */
function validGroup(pgid: number): boolean {
  return Number.isInteger(pgid) && pgid > 1;
}

export function trackGroup(pgid: number): void {
  if (!validGroup(pgid)) return;
  liveGroups.add(pgid);
  if (exitHook) return;
  exitHook = true;
  process.once("exit", () => {
    for (const group of liveGroups) signalGroup(group, "SIGKILL");
  });
}

export function untrackGroup(pgid: number): void {
  liveGroups.delete(pgid);
}

export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  if (!validGroup(pgid)) return;
  try {
    process.kill(-pgid, signal);
  } catch (error) {
    // ESRCH: already gone; EPERM: the id now belongs to someone else's group.
    if (errnoCode(error) !== "ESRCH" && errnoCode(error) !== "EPERM") throw error;
  }
}

/**
 * True while a member of the group still runs. Zombies do not count: an orphan is reaped by
 * pid 1, and some init processes (containers, micro-VMs) never reap, so a zombie may stay.
 */
export async function groupHasLiveMembers(pgid: number): Promise<boolean> {
  if (!validGroup(pgid)) return false;
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    return errnoCode(error) === "EPERM";
  }
  if (!hasProc) return true;
  // Some member exists; it may only be a zombie.
  const entries = await readdir("/proc").catch(() => [] as string[]);
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => undefined);
    if (stat === undefined) continue;
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") return true;
  }
  return false;
}

/**
 * SIGTERM to the group; SIGKILL to whatever is left after `graceMs`; then waits (bounded)
 * until no member runs. Resolves once the group is gone or the bound passed.
 */
export async function terminateGroup(pgid: number, leaderExit: Promise<unknown>, graceMs: number, leaderRunning: boolean): Promise<void> {
  if (!leaderRunning && !(await groupHasLiveMembers(pgid))) return;
  signalGroup(pgid, "SIGTERM");
  const leaderGone = leaderRunning ? await within(leaderExit, graceMs) : true;
  // Children usually die with the leader; give them the same grace before SIGKILL.
  if (leaderGone) await waitGroupGone(pgid, graceMs);
  if (await groupHasLiveMembers(pgid)) {
    signalGroup(pgid, "SIGKILL");
    await waitGroupGone(pgid, Math.max(graceMs, 2000));
  }
}

/** True when `promise` settled within `ms`. */
export async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const timer = new AbortController();
  try {
    return await Promise.race([promise.then(() => true), delay(ms, false, { signal: timer.signal }).catch(() => false)]);
  } finally {
    timer.abort();
  }
}

/** No event exists for the death of a non-child process: poll /proc until the group is gone or `withinMs` passed. */
async function waitGroupGone(pgid: number, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (await groupHasLiveMembers(pgid)) {
    if (Date.now() >= deadline) return;
    await delay(20);
  }
}
