import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** Process groups of agents still running; SIGKILLed if this process exits without closing them. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

export function trackGroup(pgid: number): void {
  liveGroups.add(pgid);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const group of liveGroups) killGroup(group, "SIGKILL");
  });
}

export function untrackGroup(pgid: number): void {
  liveGroups.delete(pgid);
}

/** Signals the whole group; falls back to the leader alone where groups are unavailable. */
export function killGroup(pgid: number, signal: NodeJS.Signals, leader?: ChildProcess): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    try {
      leader?.kill(signal);
    } catch {
      // already gone
    }
  }
}

/**
 * True while a non-zombie process of the group exists. On Linux this reads /proc, because
 * `kill(-pgid, 0)` also succeeds for zombies that an init without reaping leaves behind.
 */
export function groupAlive(pgid: number): boolean {
  if (process.platform === "linux") {
    try {
      return livePidsInGroup(pgid).length > 0;
    } catch {
      // fall through to kill(0)
    }
  }
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === "EPERM";
  }
}

/** Pids of running (non-zombie) processes whose process group is `pgid` (Linux /proc). */
export function livePidsInGroup(pgid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    // Fields after the parenthesised command: state ppid pgrp …
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (rest[0] !== "Z" && rest[0] !== "X" && Number(rest[2]) === pgid) pids.push(Number(entry));
  }
  return pids;
}
