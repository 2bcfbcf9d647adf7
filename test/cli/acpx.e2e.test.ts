import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { guideText, shellCommands, shellWords } from "../support/docs.js";
import { cachedDir, npmInstall, npmTests, repoRoot } from "../support/npm-app.js";
import { until } from "../support/until.js";

const run = promisify(execFile);
const ACPX = "0.19.1";

// The acpx commands of docs/editors.md (section "acpx and other clients") and docs/getting-started.md,
// read from the guides and run as written against `serve` with the demo model: acpx is a real
// third-party client, installed from npm once per version into a cached directory. Skipped, saying
// why, only if it cannot be installed.
const editors = guideText("editors.md");
const exec = shellCommands(editors).find((line) => line.startsWith(`npx acpx@${ACPX} `)) ?? "";
// `~/.acpx/config.json` as the guide shows it, and the acpx commands it then names.
const config = /`(\{"agents": \{"agentkit".*?\}\}\})`/.exec(editors)?.[1] ?? "";
const named = [...editors.matchAll(/`(acpx (?:--approve-all )?agentkit [^`]+)`/g)].map(([, line]) => line!);

/** Processes working in `dir` (/proc): acpx's session queue owner and the serve it started. */
function processesIn(dir: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readlinkSync(`/proc/${pid}/cwd`).replace(/ \(deleted\)$/, "") === dir;
      } catch {
        return false; // gone, or not ours to read
      }
    })
    .map(Number);
}
describe.runIf(npmTests)(`acpx ${ACPX} drives serve as docs/editors.md shows (AGENTKIT_TEST_NPM=1)`, () => {
  let acpx: string | undefined;
  let skip = "";
  beforeAll(async () => {
    const dir = cachedDir(`acpx-${ACPX}`);
    const bin = join(dir, "node_modules/.bin/acpx");
    if (!existsSync(bin)) {
      writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "acpx-cache", private: true }));
      await npmInstall(dir, [`acpx@${ACPX}`]).catch((error: unknown) => (skip = `acpx@${ACPX} could not be installed: ${String(error)}`));
    }
    if (existsSync(bin)) acpx = bin;
  }, 600_000);

  const workspace = (): { cwd: string; home: string; done: () => void } => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), "agentkit-acpx-")));
    const cwd = join(root, "ws");
    const home = join(root, "home");
    mkdirSync(cwd);
    symlinkSync(join(repoRoot, "bin"), join(cwd, "bin")); // the guide runs `node bin/agentkit-acp.js` from a checkout
    mkdirSync(join(home, ".acpx"), { recursive: true });
    return { cwd, home, done: () => rmSync(root, { recursive: true, force: true }) };
  };
  const acpxRun = (args: string[], ws: { cwd: string; home: string }) =>
    run(acpx as string, args, { cwd: ws.cwd, env: { ...process.env, HOME: ws.home, AGENTKIT_STATE_DIR: join(ws.home, "state"), AGENTKIT_MODEL: "demo" }, timeout: 120_000 });
  /** A command line of the guide: `npx acpx@V` or `acpx` is the installed acpx. */
  const acpxLine = (line: string, ws: { cwd: string; home: string }) => acpxRun(shellWords(line).slice(line.startsWith("npx ") ? 2 : 1), ws);

  it("the guides show the commands this test runs", () => {
    expect(exec).toBe(`npx acpx@${ACPX} --approve-all --agent 'node bin/agentkit-acp.js serve --model demo' exec 'summarize this repository'`);
    expect(shellCommands(guideText("getting-started.md"))).toContain(exec);
    expect(JSON.parse(config)).toEqual({ agents: { agentkit: { command: "node", args: ["/path/to/agentkit-acp/bin/agentkit-acp.js", "serve"] } } });
    expect(named).toEqual(["acpx --approve-all agentkit exec 'fix the failing test'", "acpx agentkit sessions new", "acpx --approve-all agentkit 'fix the failing test'"]);
  });

  it("npx acpx --agent '… serve --model demo' exec 'PROMPT': one turn, exit 0", async (context) => {
    if (!acpx) return context.skip(skip);
    const ws = workspace();
    try {
      const { stdout } = await acpxLine(exec, ws);
      expect(stdout).toContain("demo model");
      expect(stdout).toContain("[done] end_turn");
      expect(existsSync(join(ws.cwd, "agentkit-demo.md"))).toBe(true);
    } finally {
      ws.done();
    }
  });

  it("the agent in ~/.acpx/config.json: acpx agentkit exec, and sessions new then a bare prompt", async (context) => {
    if (!acpx) return context.skip(skip);
    const ws = workspace();
    try {
      writeFileSync(join(ws.home, ".acpx/config.json"), config.replace("/path/to/agentkit-acp", repoRoot));
      const [execLine, sessionsNew, bare] = named as [string, string, string];
      expect((await acpxLine(execLine, ws)).stdout).toContain("[done] end_turn");
      await acpxLine(sessionsNew, ws);
      expect((await acpxLine(bare, ws)).stdout).toContain("[done] end_turn");
      // A persistent session keeps acpx's queue owner and our serve running (acpx's --ttl, 300 s):
      // closing it, as a user does, ends both.
      await acpxRun(["agentkit", "sessions", "close"], ws);
      await until(() => processesIn(ws.cwd).length === 0, 15_000);
    } finally {
      for (const pid of processesIn(ws.cwd)) process.kill(pid, "SIGKILL"); // a failed test leaves none either
      ws.done();
    }
  });
});
