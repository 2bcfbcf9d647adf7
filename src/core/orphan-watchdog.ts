import { spawn, type ChildProcess } from "node:child_process";

/**
 * A tiny supervisor process that ends our process groups when we die without cleaning up
 * (SIGKILL, OOM kill, crash): Node has no PR_SET_PDEATHSIG, and detached groups outlive us.
 * It reads "+pgid start" / "-pgid" lines on stdin (start: the leader's start time, so that an id
 * reused by another process's group is never signalled, see process-group.ts); when stdin
 * closes (our end closes on any death, the kernel sees to that) or it finds itself reparented,
 * it sends SIGTERM to the groups still listed, SIGKILL to any left after `graceMs`, and exits
 * once they are gone (at once when none is listed, so it never outlives an orderly exit). It runs in its own process group, so a kill of ours does not take it along, and is
 * unref'd: it never keeps this process alive. Started just before the first group is spawned.
 */
const SCRIPT = `
const fs = require("node:fs");
const groups = new Map();
let buffer = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buffer += chunk;
  let at;
  while ((at = buffer.indexOf("\\n")) >= 0) {
    const line = buffer.slice(0, at);
    buffer = buffer.slice(at + 1);
    const [id, startedAt = ""] = line.slice(1).split(" ");
    const pgid = Number(id);
    if (!Number.isInteger(pgid) || pgid <= 1) continue;
    if (line[0] === "+") groups.set(pgid, startedAt);
    else groups.delete(pgid);
  }
});
const startTime = (pid) => { try { const stat = fs.readFileSync("/proc/" + pid + "/stat", "utf8"); return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]; } catch { return undefined; } };
const reused = (g) => { const was = groups.get(g); const now = was ? startTime(g) : undefined; return now !== undefined && now !== was; };
const signal = (sig) => { for (const g of [...groups.keys()]) { if (reused(g)) { groups.delete(g); continue; } try { process.kill(-g, sig); } catch {} } };
const alive = () => [...groups.keys()].some((g) => { if (reused(g)) return false; try { process.kill(-g, 0); return true; } catch { return false; } });
let ending = false;
const end = () => {
  if (ending) return;
  ending = true;
  if (groups.size === 0) process.exit(0);
  signal("SIGTERM");
  const deadline = Date.now() + Number(process.argv[1]);
  setInterval(() => {
    if (!alive()) process.exit(0);
    if (Date.now() < deadline) return;
    signal("SIGKILL");
    process.exit(0);
  }, 50);
};
process.stdin.on("end", end);
process.stdin.on("error", end);
// Also when we are reparented (the parent died) but stdin's end has not come through.
const parent = process.ppid;
setInterval(() => { if (process.ppid !== parent) end(); }, 250);
`;

let enabled = false;
let graceMs = 1000;
let watchdog: ChildProcess | undefined;

/** Turns the watchdog on for this process (the CLI does; embedders may). `grace` is SIGTERM → SIGKILL. */
export function enableOrphanWatchdog(options: { graceMs?: number } = {}): void {
  enabled = true;
  graceMs = options.graceMs ?? graceMs;
}

/** Starts the watchdog now (when enabled), so that telling it of a group about to be spawned is one write. */
export function readyOrphanWatchdog(): void {
  if (enabled && !watchdog) start();
}

/** Tells the watchdog about a new group and when its leader started (no-op unless enabled). */
export function watchGroup(pgid: number, leaderStartTime = ""): void {
  if (!enabled) return;
  send(`+${pgid} ${leaderStartTime}\n`);
}

/** The group ended (or was ended by us): the watchdog forgets it, so a reused id is never signalled. */
export function unwatchGroup(pgid: number): void {
  if (watchdog) send(`-${pgid}\n`);
}

/** The watchdog's pid, when one runs (tests). */
export function orphanWatchdogPid(): number | undefined {
  return watchdog?.pid;
}

function send(line: string): void {
  const child = watchdog ?? start();
  if (!child?.stdin?.writable) return;
  child.stdin.write(line);
}

function start(): ChildProcess | undefined {
  try {
    const child = spawn(process.execPath, ["-e", SCRIPT, String(graceMs)], { stdio: ["pipe", "ignore", "ignore"], detached: true });
    child.on("error", () => undefined);
    child.stdin?.on("error", () => undefined);
    child.unref();
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    watchdog = child;
    return child;
  } catch {
    enabled = false; // cannot spawn: the exit hook still covers orderly exits
    return undefined;
  }
}
