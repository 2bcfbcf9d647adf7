/**
 * Process-group helpers. Commands and stdio servers are spawned with `detached: true`, which
 * makes the child the leader of a new process group (pgid = its pid); signalling `-pgid`
 * then reaches every process it started, so nothing is orphaned. Detached groups do not die
 * with us, so live groups are tracked and SIGKILLed when this process exits.
 */

const liveGroups = new Set<number>();
let exitHookInstalled = false;

/** Remembers a group so it is SIGKILLed if this process exits first. */
export function trackProcessGroup(pgid: number): void {
  liveGroups.add(pgid);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const group of liveGroups) signalProcessGroup(group, "SIGKILL");
  });
}

export function untrackProcessGroup(pgid: number): void {
  liveGroups.delete(pgid);
}

/** Sends `signal` to the whole group led by `pgid`. False when the group no longer exists. */
export function signalProcessGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * SIGTERM to the group now, SIGKILL after `graceMs` (unconditionally: a process that ignored
 * SIGTERM, or a grandchild, may still be around after the leader exits). Stops tracking the
 * group once it is gone or has been SIGKILLed.
 */
export function terminateProcessGroup(pgid: number, graceMs = 1000): void {
  if (!signalProcessGroup(pgid, "SIGTERM")) {
    untrackProcessGroup(pgid);
    return;
  }
  trackProcessGroup(pgid);
  setTimeout(() => {
    signalProcessGroup(pgid, "SIGKILL");
    untrackProcessGroup(pgid);
  }, graceMs);
}
