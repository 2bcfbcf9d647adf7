import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { cliBin } from "../support/cli.js";
import { cachedDir, npmInstall, npmTests } from "../support/npm-app.js";

const run = promisify(execFile);
const ACPX = "0.19.1";

// The acpx commands of docs/editors.md (section "acpx and other clients"), run as written against `serve`
// with the demo model: acpx is a real third-party client, installed from npm once per version
// into a cached directory. Skipped, saying why, only if it cannot be installed.
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
    mkdirSync(join(home, ".acpx"), { recursive: true });
    return { cwd, home, done: () => rmSync(root, { recursive: true, force: true }) };
  };
  const acpxRun = (args: string[], ws: { cwd: string; home: string }) =>
    run(acpx as string, args, { cwd: ws.cwd, env: { ...process.env, HOME: ws.home, AGENTKIT_STATE_DIR: join(ws.home, "state") }, timeout: 120_000 });

  it("acpx --agent '… serve --model demo' exec 'PROMPT': one turn, the tool call approved, exit 0", async (context) => {
    if (!acpx) return context.skip(skip);
    const ws = workspace();
    try {
      const { stdout } = await acpxRun(["--approve-all", "--agent", `${process.execPath} ${cliBin} serve --model demo`, "exec", "summarize this repository"], ws);
      expect(stdout).toContain("demo model");
      expect(stdout).toContain("[done] end_turn");
      expect(existsSync(join(ws.cwd, "agentkit-demo.md"))).toBe(true);
    } finally {
      ws.done();
    }
  });

  it("an agent in ~/.acpx/config.json: acpx agentkit exec, and sessions new then a bare prompt", async (context) => {
    if (!acpx) return context.skip(skip);
    const ws = workspace();
    try {
      const agents = { agentkit: { command: process.execPath, args: [cliBin, "serve", "--model", "demo"] } };
      writeFileSync(join(ws.home, ".acpx/config.json"), JSON.stringify({ agents }));
      expect((await acpxRun(["--approve-all", "agentkit", "exec", "fix the failing test"], ws)).stdout).toContain("[done] end_turn");
      await acpxRun(["agentkit", "sessions", "new"], ws);
      expect((await acpxRun(["--approve-all", "agentkit", "fix the failing test"], ws)).stdout).toContain("[done] end_turn");
    } finally {
      ws.done();
    }
  });
});
