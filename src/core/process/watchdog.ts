import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { builtFile } from "../package-files.js";
import { platformTraits } from "./platform.js";

/**
 * A tiny supervisor process that ends our process groups when we die without cleaning up
 * (SIGKILL, OOM kill, crash): Node has no PR_SET_PDEATHSIG, and detached groups outlive us.
 * It reads "+pgid start" / "-pgid" lines on stdin (start: the leader's start time, so that an id
 * reused by another process's group is never signalled, see group.ts), and "bye" when
 * we exit in order. When stdin closes (our end closes on any death, the kernel sees to that) or
 * it finds itself reparented, it sends SIGTERM to the groups still listed, SIGKILL to any left
 * after `graceMs`, and exits once they are gone (at once when none is listed, so it never
 * outlives an orderly exit). It runs in its own process group, so a kill of ours does not take
 * it along, and is unref'd: it never keeps this process alive. Started just before the first
 * group is spawned.
 *
 * A group can start running before its "+" line is written (the child runs on another core
 * while we return from spawn), so a death in between would leave it unlisted. Every process we
 * spawn therefore carries a marker in its environment (`orphanWatchEnv`), and after a death that
 * was not orderly (no "bye") the watchdog also ends the groups of the marked processes it finds
 * in /proc.
 *
 * A deadline line "dMS" (from `fenceGroupsWithin`) arms a fence: unless another "d" line comes
 * within MS, the watchdog SIGKILLs every group listed and every marked process, and goes on
 * watching. We send one at each session-lease renewal, so the tools of an instance that is
 * frozen (SIGSTOP), stalled or cut off from the database are ended before its leases can expire
 * and another instance takes its sessions — the frozen process cannot end them itself.
 * "d0" disarms it (no lease held).
 *
 * Its program is watchdog-main.ts, run from the built package (dist/core/process/watchdog-main.js,
 * also when this module runs from sources). It needs process groups: on Windows it does not run
 * (`platformLimits` says so at start).
 */

let enabled = false;
let graceMs = 1000;
let watchdog: ChildProcess | undefined;
/** The environment entry every process we spawn carries while the watchdog runs (see above). */
const MARKER_NAME = "AGENTKIT_ORPHAN_WATCH";
const markerValue = randomBytes(8).toString("hex");

/** The watchdog's program (a file of the built package). */
export function watchdogProgram(): string {
  return builtFile("core", "process", "watchdog-main.js");
}

/**
 * Turns the watchdog on for this process (the CLI does; embedders may). `grace` is SIGTERM → SIGKILL.
 * False where it cannot run (no process groups: Windows; `platformLimits` names it for the start-up
 * log); throws when the package lacks its built program.
 */
export function enableOrphanWatchdog(options: { graceMs?: number } = {}, platform: NodeJS.Platform = process.platform): boolean {
  if (!platformTraits(platform).processGroups) return false;
  if (!existsSync(watchdogProgram())) throw new Error(`the orphan watchdog's program ${watchdogProgram()} is missing: build the package (npm run build)`);
  enabled = true;
  graceMs = options.graceMs ?? graceMs;
  return true;
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

/**
 * `env` (default: this process's) with the watchdog's marker, for a process about to be spawned
 * into its own group; unchanged when the watchdog is off.
 */
export function orphanWatchEnv(env: NodeJS.ProcessEnv | undefined): NodeJS.ProcessEnv | undefined {
  if (!enabled || !watchdog) return env;
  return { ...(env ?? process.env), [MARKER_NAME]: markerValue };
}

/**
 * Arms (or moves) the fence: every group we started is SIGKILLed by the watchdog unless this is
 * called again within `ms`; undefined disarms it. No-op unless the watchdog is enabled.
 */
export function fenceGroupsWithin(ms: number | undefined): void {
  if (!enabled) return;
  if (ms === undefined) {
    if (watchdog) send("d0\n");
    return;
  }
  send(`d${Math.max(1, Math.floor(ms))}\n`);
}

/** The watchdog's pid, when one runs (tests). @internal */
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
    // Without the marker we may have inherited (we may be an agent another agentkit-acp process
    // started): that process's watchdog must not take ours for one of its own and end it.
    const { [MARKER_NAME]: _inherited, ...env } = process.env;
    const child = spawn(process.execPath, [watchdogProgram(), String(graceMs), `${MARKER_NAME}=${markerValue}`], { stdio: ["pipe", "ignore", "ignore"], detached: true, env });
    child.on("error", () => undefined);
    child.stdin?.on("error", () => undefined);
    child.unref();
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    watchdog = child;
    // An orderly exit: what the exit hooks did not end is not the watchdog's to look for.
    process.once("exit", () => send("bye\n"));
    return child;
  } catch {
    enabled = false; // cannot spawn: the exit hook still covers orderly exits
    return undefined;
  }
}
