// The orphan watchdog's own process: `node watchdog-main.js GRACE_MS NAME=VALUE` (started by
// watchdog.ts, which describes the protocol). It imports nothing but node: and proc.js, so it
// starts in a few milliseconds, and it must never throw: it is all that ends our groups after
// we die.
import { proc } from "./proc.js";

const [graceArg = "1000", marker = ""] = process.argv.slice(2);
const graceMs = Number(graceArg);
/** Listed groups → their leader's start time ("" where unknown). */
const groups = new Map<number, string>();
let orderly = false;
let ending = false;
let fence: NodeJS.Timeout | undefined;

/** The id now leads another process's group (its leader's start time changed): ours is gone. */
function reused(pgid: number): boolean {
  const was = groups.get(pgid);
  const now = was ? proc.startTime(pgid) : undefined;
  return now !== undefined && now !== was;
}

function signal(sig: NodeJS.Signals): void {
  for (const pgid of [...groups.keys()]) {
    if (reused(pgid)) {
      groups.delete(pgid);
      continue;
    }
    try {
      process.kill(-pgid, sig);
    } catch {
      // gone already
    }
  }
}

function alive(): boolean {
  return [...groups.keys()].some((pgid) => {
    if (reused(pgid)) return false;
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  });
}

/** The groups of processes carrying our marker (listed or not: a spawn may not have been told yet). */
function addMarked(): void {
  for (const pgid of proc.groupsWithEnv(marker) ?? []) if (!groups.has(pgid)) groups.set(pgid, "");
}

function onLine(line: string): void {
  if (line === "bye") {
    orderly = true;
  } else if (line.startsWith("d")) {
    clearTimeout(fence);
    const ms = Number(line.slice(1));
    if (ms > 0) fence = setTimeout(fenceKill, ms);
  } else {
    const [id, startedAt = ""] = line.slice(1).split(" ");
    const pgid = Number(id);
    if (!Number.isInteger(pgid) || pgid <= 1) return;
    if (line.startsWith("+")) groups.set(pgid, startedAt);
    else groups.delete(pgid);
  }
}

/** We died (stdin closed) or were reparented: end what is listed, SIGKILL what outlives the grace. */
function end(): void {
  if (ending) return;
  ending = true;
  if (!orderly) addMarked();
  if (groups.size === 0) process.exit(0);
  signal("SIGTERM");
  const deadline = Date.now() + graceMs;
  setInterval(() => {
    if (!alive()) process.exit(0);
    if (Date.now() < deadline) return;
    signal("SIGKILL");
    process.exit(0);
  }, 50);
}

/** The lease deadline passed without a renewal: nothing of ours may run on (another instance may hold the sessions). */
function fenceKill(): void {
  addMarked();
  signal("SIGKILL");
  groups.clear();
}

let buffer = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk: string) => {
  buffer += chunk;
  for (let at = buffer.indexOf("\n"); at >= 0; at = buffer.indexOf("\n")) {
    onLine(buffer.slice(0, at));
    buffer = buffer.slice(at + 1);
  }
});
process.stdin.on("end", end);
process.stdin.on("error", end);
// Also when we are reparented (the parent died) but stdin's end has not come through.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) end();
}, 250);
