import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { livePidsInGroup } from "../../src/core/process/group.js";
import { fixture, repoRoot } from "../acp/client/helpers.js";
import { killGroup, startTimeOf } from "../support/processes.js";

// Issue 14 cases 7 and 8 for `prompt`: a signal ends the agent's whole process group and the
// terminals prompt hosts within 5 s; a SIGKILLed prompt leaves nothing behind either.

const bin = join(repoRoot, "bin/agentkit-acp.js");
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** prompt --json with the fixture agent (it ignores SIGTERM and has a grandchild) running a hosted terminal. */
function startPrompt(dir: string): { child: ChildProcess; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>; session: Promise<number> } {
  const agent = `"${process.execPath}" "${fixture}" --grandchild --ignore-term`;
  const command = `term echo $$ > ${join(dir, "term.pid")}; exec sleep 600`;
  const child = spawn(process.execPath, [bin, "prompt", "--agent", agent, "--permissions", "allow-all", "--cwd", dir, "--json", command], {
    cwd: dir,
    env: { ...process.env, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  const session = new Promise<number>((resolve) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = stdout.split("\n").find((l) => l.includes('"type":"session"'));
      if (line) resolve((JSON.parse(line) as { pid: number }).pid);
    });
  });
  child.stderr!.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  return { child, exited, session };
}

describe("robustness: prompt and signals (real processes)", () => {
  const cases: Array<[NodeJS.Signals, number | null, number]> = [
    ["SIGTERM", 143, 1],
    ["SIGHUP", 129, 1],
    ["SIGINT", 130, 2], // first Ctrl-C cancels the turn, the second ends the agent (as before)
    ["SIGKILL", null, 1], // no handler runs: the orphan watchdog ends the groups
  ];
  for (const [signal, code, times] of cases) {
    it(`${signal}${times > 1 ? ` ×${times}` : ""}: the agent's group, its grandchild and the hosted terminal are gone within 5 s`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "agentkit-robust-signals-"));
      const run = startPrompt(dir);
      const pids: number[] = [];
      const startedAt = new Map<number, string | undefined>();
      cleanups.push(() => {
        for (const pid of pids) killGroup(pid, startedAt.get(pid));
        run.child.kill("SIGKILL");
        rmSync(dir, { recursive: true, force: true });
      });
      const agentPid = await run.session;
      pids.push(agentPid);
      startedAt.set(agentPid, startTimeOf(agentPid));
      const termPidFile = join(dir, "term.pid");
      await until(() => existsSync(termPidFile) && readFileSync(termPidFile, "utf8").endsWith("\n"), 20_000, "the hosted terminal to start");
      const termPid = Number(readFileSync(termPidFile, "utf8").trim());
      pids.push(termPid);
      startedAt.set(termPid, startTimeOf(termPid));
      await until(() => livePidsInGroup(agentPid).length >= 2, 10_000, "the agent's grandchild");
      expect(alive(termPid)).toBe(true);

      const sentAt = Date.now();
      for (let i = 0; i < times; i++) {
        run.child.kill(signal);
        if (i + 1 < times) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const exit = await run.exited;
      if (code !== null) expect(exit.code).toBe(code);
      await until(() => livePidsInGroup(agentPid).length === 0 && !alive(termPid), 5_000 - (Date.now() - sentAt), "everything to end");
      expect(Date.now() - sentAt).toBeLessThan(5_000);
    });
  }
});
