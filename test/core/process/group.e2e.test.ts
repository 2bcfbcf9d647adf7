import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { processGroupAlive, signalProcessGroup, spawnProcessGroup, untrackProcessGroup } from "../../../src/core/process/group.js";
import { proc } from "../../../src/core/process/proc.js";
import { afterEachTest } from "../../support/after-each.js";
import { until } from "../../support/until.js";
import { killGroup, pidAlive } from "../../support/processes.js";

// pid_max is 32768 on this VM and a busy machine goes through that many pids in a minute: a
// group id we tracked can come to lead someone else's group. Provoked here by asking the kernel
// for the pid (ns_last_pid, root only; the write and the fork race every other fork on the machine —
// the suite's other workers spawn all the time — so it is tried until a deadline, not a count).

const canChoosePid = ((): boolean => {
  try {
    writeFileSync("/proc/sys/kernel/ns_last_pid", "1");
    return true;
  } catch {
    return false;
  }
})();

const STRANGER_DEADLINE_MS = 20_000;
const TRIES_PER_PID = 20;

/**
 * A detached `sleep` that got exactly `pid`, started in a later clock tick than `startedAt` (as
 * any real reuse is: the pids wrap around first); undefined when other forks kept winning it —
 * or one of them kept it, so that no try can have it: the caller frees another pid.
 */
async function strangerWithPid(pid: number, startedAt: string | undefined): Promise<ChildProcess | undefined> {
  for (let attempt = 0; attempt < TRIES_PER_PID; attempt++) {
    writeFileSync("/proc/sys/kernel/ns_last_pid", String(pid - 1));
    const child = spawn("sleep", ["30"], { detached: true, stdio: "ignore" });
    await once(child, "spawn");
    if (child.pid === pid && proc.startTime(pid) !== startedAt) return child;
    child.kill("SIGKILL");
    await once(child, "exit");
  }
  return undefined;
}

/** A tracked group whose leader has ended (reaped: its pid is free again), and when it had started. */
async function endedTrackedGroup(): Promise<{ pid: number; startedAt: string | undefined }> {
  const ours = spawnProcessGroup("sleep", ["30"], { stdio: "ignore" });
  await once(ours, "spawn");
  const pid = ours.pid!;
  const startedAt = proc.startTime(pid);
  process.kill(-pid, "SIGKILL");
  await once(ours, "exit");
  return { pid, startedAt };
}

/** Frees pids (`freePid`) until a stranger gets one, within the deadline. */
async function reusedPid(freePid: () => Promise<{ pid: number; startedAt: string | undefined }>): Promise<{ pid: number; stranger: ChildProcess | undefined }> {
  let freed = await freePid();
  for (const deadline = Date.now() + STRANGER_DEADLINE_MS; ; freed = await freePid()) {
    const stranger = await strangerWithPid(freed.pid, freed.startedAt);
    if (stranger || Date.now() > deadline) return { pid: freed.pid, stranger };
  }
}

describe.skipIf(!canChoosePid)("process groups: an id reused by another process's group", () => {
  it("is neither signalled nor reported alive, and the stranger lives on", async () => {
    const freed: number[] = [];
    const { pid, stranger } = await reusedPid(async () => {
      const ended = await endedTrackedGroup();
      freed.push(ended.pid);
      return ended;
    });
    afterEachTest(() => {
      stranger?.kill("SIGKILL");
      for (const id of freed) untrackProcessGroup(id);
    });
    expect(stranger, `no process got the freed pid within ${STRANGER_DEADLINE_MS} ms`).toBeDefined();
    expect(processGroupAlive(pid)).toBe(false);
    expect(signalProcessGroup(pid, "SIGKILL")).toBe(false);
    expect(pidAlive(pid)).toBe(true);
  });

  it("is left alone by the orphan watchdog of a process that dies", async () => {
    // A node process with the watchdog on tracks a group, which ends; its id goes to a stranger;
    // then the process is SIGKILLed and its watchdog ends what it still lists. Each stdin line asks
    // for one more group (when another process kept the pid freed before).
    const script = `
      const { enableOrphanWatchdog, orphanWatchdogPid } = await import(${JSON.stringify(new URL("../../../dist/core/process/watchdog.js", import.meta.url).href)});
      const { spawnProcessGroup } = await import(${JSON.stringify(new URL("../../../dist/core/process/group.js", import.meta.url).href)});
      enableOrphanWatchdog({ graceMs: 200 });
      const group = () => {
        const child = spawnProcessGroup("sleep", ["30"], { stdio: "ignore" });
        child.once("exit", () => process.stdout.write("ended\\n"));
        process.stdout.write(child.pid + " " + orphanWatchdogPid() + "\\n");
      };
      group();
      process.stdin.on("data", group);
      setInterval(() => undefined, 1000);`;
    const owner = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["pipe", "pipe", "inherit"] });
    const started: { stranger?: ChildProcess | undefined } = {};
    afterEachTest(() => {
      owner.kill("SIGKILL");
      started.stranger?.kill("SIGKILL");
    });
    let out = "";
    const line = (pattern: RegExp): Promise<string> =>
      new Promise((resolve) => {
        const check = (): void => {
          const match = pattern.exec(out);
          if (match) {
            out = out.slice(match.index + match[0].length); // consumed: the next group's lines come after
            resolve(match[0]);
          }
          else owner.stdout!.once("data", (chunk: Buffer) => ((out += chunk.toString()), check()));
        };
        check();
      });
    let watchdog = 0;
    let asked = 0;
    const { pid, stranger } = await reusedPid(async () => {
      if (asked++ > 0) owner.stdin!.write("again\n");
      const [groupPid, watchdogPid] = (await line(/\d+ \d+\n/)).trim().split(" ").map(Number) as [number, number];
      watchdog = watchdogPid;
      const startedAt = proc.startTime(groupPid);
      killGroup(groupPid);
      await line(/ended\n/);
      return { pid: groupPid, startedAt };
    });
    started.stranger = stranger;
    expect(stranger, `no process got the freed pid within ${STRANGER_DEADLINE_MS} ms`).toBeDefined();
    owner.kill("SIGKILL");
    await once(owner, "exit");
    // The watchdog has done all it would do once it exits (it SIGTERMs at once, SIGKILLs after the grace).
    await until(() => !pidAlive(watchdog)).catch(() => undefined); // asserted below
    expect(pidAlive(watchdog)).toBe(false);
    expect(stranger!.exitCode).toBeNull();
    expect(stranger!.signalCode).toBeNull();
    expect(pidAlive(pid)).toBe(true);
  });
});

describe("the orphan watchdog and a group it was never told of", () => {
  // The "+pgid" line is written after spawn() returns, while the command already runs on another
  // core: a SIGKILL in between left the command behind (seen as a flaky test under load). Every
  // process we spawn carries the watchdog's marker in its environment, so the watchdog finds it.
  it("ends a marked group after the owner's SIGKILL, even with no line about it", async () => {
    const script = `
      const { enableOrphanWatchdog, orphanWatchdogPid, unwatchGroup } = await import(${JSON.stringify(new URL("../../../dist/core/process/watchdog.js", import.meta.url).href)});
      const { spawnProcessGroup } = await import(${JSON.stringify(new URL("../../../dist/core/process/group.js", import.meta.url).href)});
      enableOrphanWatchdog({ graceMs: 200 });
      const child = spawnProcessGroup("sleep", ["30"], { stdio: "ignore" });
      unwatchGroup(child.pid); // as if the "+" line had never been written
      process.stdout.write(child.pid + " " + orphanWatchdogPid() + "\\n");
      setInterval(() => undefined, 1000);`;
    // The owner is itself an agent some other agentkit-acp process started (it carries that one's marker).
    const owner = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, AGENTKIT_ORPHAN_WATCH: "parent" } });
    const ids: number[] = [];
    afterEachTest(() => {
      owner.kill("SIGKILL");
      for (const pid of ids) killGroup(pid);
    });
    const [pid, watchdog] = await new Promise<number[]>((resolve) => {
      let out = "";
      owner.stdout!.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.endsWith("\n")) resolve(out.trim().split(" ").map(Number));
      });
    });
    ids.push(pid!);
    expect(pidAlive(pid!)).toBe(true);
    // The group carries the owner's watchdog's marker; the watchdog itself none (else the parent's would end it).
    const environ = (p: number): string[] => readFileSync(`/proc/${p}/environ`, "latin1").split("\0");
    expect(environ(pid!).filter((entry) => entry.startsWith("AGENTKIT_ORPHAN_WATCH="))).toEqual([expect.stringMatching(/^AGENTKIT_ORPHAN_WATCH=[0-9a-f]{16}$/)]);
    expect(environ(watchdog!).some((entry) => entry.startsWith("AGENTKIT_ORPHAN_WATCH="))).toBe(false);
    owner.kill("SIGKILL");
    await once(owner, "exit");
    await until(() => !pidAlive(watchdog!) && !pidAlive(pid!)).catch(() => undefined); // asserted below
    expect(pidAlive(pid!)).toBe(false);
    expect(pidAlive(watchdog!)).toBe(false);
  });
});
