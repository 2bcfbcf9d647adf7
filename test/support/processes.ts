import { readFileSync } from "node:fs";

/** Alive = signalable and not a zombie (this VM's pid 1 never reaps orphans, so zombies stay). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/** SIGKILL to the process group `pid` leads (children are spawned detached); one already gone is fine. */
export function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** Waits for `exited`; kills the group `pid` leads if it has not gone within `timeoutMs` (bounded). */
export async function exitOrKill<T>(exited: Promise<T>, pid: number | undefined, timeoutMs: number): Promise<T> {
  const timer = setTimeout(() => killGroup(pid), timeoutMs);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}
