/**
 * Process-group helpers. Commands and stdio servers are spawned with `detached: true`, which
 * makes the child the leader of a new process group (pgid = its pid); signalling `-pgid`
 * then reaches every process it started, so nothing is orphaned.
 */

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
 * SIGTERM, or a grandchild, may still be around after the leader exits). The returned
 * function cancels the pending SIGKILL.
 */
export function terminateProcessGroup(pgid: number, graceMs = 1000): () => void {
  if (!signalProcessGroup(pgid, "SIGTERM")) return () => {};
  const timer = setTimeout(() => signalProcessGroup(pgid, "SIGKILL"), graceMs);
  return () => clearTimeout(timer);
}
