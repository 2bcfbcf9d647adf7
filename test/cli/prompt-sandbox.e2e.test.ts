import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanEnv } from "../acp/agent/serve-support.js";
import { repoRoot, tempDir } from "../acp/client/helpers.js";
import { cliBin, runCli } from "../support/cli.js";
import { sandboxOrSkip } from "../support/sandbox-engine.js";

const engine = await sandboxOrSkip("prompt --sandbox driving serve");

/**
 * `prompt --sandbox`: the agent process itself (our own `serve`, its shell tool running
 * locally) in bubblewrap, through a full turn. The same turn without --sandbox reads the
 * secret and writes outside, so the test proves the sandbox and not the scenario.
 */
describe.skipIf(!engine.available).each([
  { sandboxed: true, flags: ["--sandbox"], where: "--local-tools" },
  // serve runs the command in prompt's hosted terminal (terminal/create): sandboxed here too.
  { sandboxed: true, flags: ["--sandbox"], where: "" },
  { sandboxed: false, flags: [] as string[], where: "--local-tools" },
])("prompt $flags driving serve $where", ({ sandboxed, flags, where }) => {
  it("a full turn; the agent's command reads and writes only in the workspace", async () => {
    const workspace = tempDir();
    const home = tempDir();
    const secret = `prompt-secret-${process.pid}-${Date.now()}`;
    writeFileSync(join(home, ".secret"), secret);
    mkdirSync(join(home, "outside"));
    const command = `cat ${home}/.secret; echo x > ${home}/outside/written.txt; echo inside > inside.txt; echo finished`;
    writeFileSync(join(workspace, "script.json"), JSON.stringify({ steps: [{ toolCall: { name: "shell", input: { command } } }, { echo: "last_tool_result" }] }));
    const agent = `${process.execPath} ${cliBin} serve ${where} --no-persist --log-level warn`;
    const run = await runCli(["prompt", ...flags, "--agent", agent, "--cwd", workspace, "--permissions", "allow-all", "go"], {
      cwd: repoRoot,
      env: cleanEnv({ HOME: home, AGENTKIT_MODEL: `scripted:${join(workspace, "script.json")}` }),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("finished");
    expect(existsSync(join(workspace, "inside.txt"))).toBe(true);
    expect(run.stdout.includes(secret)).toBe(!sandboxed);
    expect(existsSync(join(home, "outside", "written.txt"))).toBe(!sandboxed);
    if (sandboxed) expect(run.stderr).toContain("sandbox: the agent runs in bubblewrap");
  }, 60_000);
});

describe("prompt --sandbox flags", () => {
  it("--sandbox-ro without --sandbox → exit 2", async () => {
    const run = await runCli(["prompt", "--sandbox-ro", "/opt", "hi"], { cwd: repoRoot, env: cleanEnv() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--sandbox-ro only applies with --sandbox");
  });

  it("--sandbox without bubblewrap → exit 2 naming what to install", async () => {
    const run = await runCli(["prompt", "--sandbox", "hi"], { cwd: repoRoot, env: cleanEnv({ PATH: "/nonexistent" }) });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("apt-get install bubblewrap");
  });
});
