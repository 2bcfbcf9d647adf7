import { proc } from "../../src/core/process/proc.js";

/** Alive = signalable and not a zombie (this VM's pid 1 never reaps orphans, so zombies stay). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  return proc.state(pid) === "running";
}

/** When process `pid` started (`ProcReader.startTime`): with the pid, it names one process even after the pid is reused. */
export function startTimeOf(pid: number | undefined): string | undefined {
  return pid === undefined ? undefined : proc.startTime(pid);
}

/** SIGKILL to the process group `pid` leads (children are spawned detached); one already gone is fine. */
export function killGroup(pid: number | undefined, startedAt?: string): void {
  if (pid === undefined) return;
  // pid_max is 32768 here and a suite uses more pids than that: a cleanup long after the leader
  // ended must not kill the new group of a process (another test's) that got the same pid.
  const now = startTimeOf(pid);
  if (startedAt !== undefined && now !== undefined && now !== startedAt) return;
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
