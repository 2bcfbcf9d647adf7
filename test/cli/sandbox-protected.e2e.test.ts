import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanEnv } from "../acp/agent/serve-support.js";
import { repoRoot, tempDir } from "../acp/client/helpers.js";
import { cliBin, runCli } from "../support/cli.js";
import { sandboxOrSkip } from "../support/sandbox-engine.js";

const engine = await sandboxOrSkip("the protected-paths tests");

/**
 * Persistence escape through the writable roots (docs/sandbox.md "Protected paths"): a
 * sandboxed command plants a git hook, a `core.fsmonitor` command, a `commondir` redirect and
 * editor/agent config in the workspace, and tries to move `.git` aside to recreate it — each of
 * which the user's next UNSANDBOXED `git status`/`git commit` (or editor) would run. Sandboxed
 * (serve's own sandbox, and the agent process under `prompt --sandbox`), every attempt fails
 * while `git add`/`git commit` inside the sandbox still work; the same turn unsandboxed plants
 * them all, so the test proves the sandbox and not the scenario.
 */
const git = (cwd: string, ...args: string[]) => spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args], { cwd, encoding: "utf8", env: { ...cleanEnv(), GIT_CONFIG_NOSYSTEM: "1", HOME: cwd } });

describe.skipIf(!engine.available).each([
  // serve's own write_file runs in serve, outside the sandbox: it keeps off the protected paths too.
  { name: "serve --sandbox (its shell tool, its write_file)", sandboxed: true, promptFlags: [] as string[], serveFlags: ["--sandbox", "--local-tools"], fsWrite: true },
  // The agent's own write_file runs inside its sandbox (--local-tools) or through prompt's fs host (outside it).
  { name: "prompt --sandbox (the agent process, its file tool)", sandboxed: true, promptFlags: ["--sandbox"], serveFlags: ["--local-tools"], fsWrite: true },
  { name: "prompt --sandbox (its terminals, its fs/write_text_file)", sandboxed: true, promptFlags: ["--sandbox"], serveFlags: [] as string[], fsWrite: true },
  { name: "no sandbox", sandboxed: false, promptFlags: [] as string[], serveFlags: ["--local-tools"], fsWrite: true },
])("$name: a command's writes to .git/hooks, .git/config and editor config", ({ sandboxed, promptFlags, serveFlags, fsWrite }) => {
  it("fail (and git commit in the sandbox works); the host's next git status/commit runs nothing", async () => {
    const workspace = tempDir();
    const marks = tempDir();
    const evil = tempDir();
    expect(git(workspace, "init", "-q").status).toBe(0);
    expect(git(workspace, "commit", "-q", "--allow-empty", "-m", "first").status).toBe(0);
    mkdirSync(join(workspace, ".vscode"));
    writeFileSync(join(workspace, ".vscode", "tasks.json"), "{}\n");
    writeFileSync(join(workspace, ".mcp.json"), '{"mcpServers":{}}\n');
    // A git directory of the command's making: the repository's own, with a command in its config.
    expect(spawnSync("cp", ["-a", `${workspace}/.git/.`, evil]).status).toBe(0);
    appendFileSync(join(evil, "config"), `[core]\n\tfsmonitor = "touch ${marks}/commondir; false"\n`);
    const config = readFileSync(join(workspace, ".git", "config"), "utf8");
    const hook = `#!/bin/sh\ntouch ${marks}/hook\n`;
    const command = [
      `printf '${hook.replace(/\n/g, "\\n")}' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit`,
      `git config core.fsmonitor "touch ${marks}/fsmonitor; false"`,
      `echo '{"tasks":[{"runOptions":{"runOn":"folderOpen"}}]}' > .vscode/tasks.json`,
      `echo '{"mcpServers":{"x":{"command":"touch"}}}' > .mcp.json`,
      // Move .git aside and recreate it writable: the host's git would use the new one.
      `mv .git .git-old && mkdir .git && cp -a .git-old/. .git/ && rm -rf .git-old && echo moved`,
      `echo ${evil} > .git/commondir`,
      `echo inside > inside.txt && git add inside.txt && git -c user.name=s -c user.email=s@example.invalid commit -q -m inside && echo committed`,
      "echo finished",
    ].join("; ");
    // In the workspace: the sandboxed agent process reads it.
    writeFileSync(join(workspace, "script.json"), JSON.stringify({ steps: [...(fsWrite ? [{ toolCall: { name: "write_file", input: { path: ".git/hooks/post-checkout", content: hook } } }] : []), { toolCall: { name: "shell", input: { command } } }, { echo: "last_tool_result" }] }));
    const agent = `${process.execPath} ${cliBin} serve ${serveFlags.join(" ")} --no-persist --log-level warn`;
    const run = await runCli(["prompt", ...promptFlags, "--agent", agent, "--cwd", workspace, "--permissions", "allow-all", "go"], {
      cwd: repoRoot,
      env: cleanEnv({ HOME: tempDir(), AGENTKIT_MODEL: `scripted:${join(workspace, "script.json")}` }),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("finished");

    // The user's next git commands, on the host, unsandboxed.
    const status = git(workspace, "status", "--short").status;
    const commit = git(workspace, "commit", "-q", "--allow-empty", "-m", "host").status;
    const planted = { hook: existsSync(join(marks, "hook")), fsmonitor: existsSync(join(marks, "fsmonitor")), commondir: existsSync(join(marks, "commondir")) };
    if (!sandboxed) {
      // The scenario works: unsandboxed, every write lands, and the host's git runs the redirect's command.
      expect(planted.commondir).toBe(true);
      expect(existsSync(join(workspace, ".git", "hooks", "pre-commit"))).toBe(true);
      expect(existsSync(join(workspace, ".git", "hooks", "post-checkout"))).toBe(true);
      expect(readFileSync(join(workspace, ".git", "config"), "utf8")).toContain("fsmonitor");
      expect(readFileSync(join(workspace, ".vscode", "tasks.json"), "utf8")).toContain("folderOpen");
      expect(run.stdout).toContain("moved");
      return;
    }
    expect(planted).toEqual({ hook: false, fsmonitor: false, commondir: false });
    expect([status, commit]).toEqual([0, 0]);
    expect(existsSync(join(workspace, ".git", "hooks", "pre-commit"))).toBe(false);
    expect(existsSync(join(workspace, ".git", "hooks", "post-checkout"))).toBe(false);
    expect(readFileSync(join(workspace, ".git", "config"), "utf8")).toBe(config);
    expect(existsSync(join(workspace, ".git", "commondir")), "the placeholder is removed when the command ends").toBe(false);
    expect(existsSync(join(workspace, ".git-old"))).toBe(false);
    expect(run.stdout).not.toContain("moved");
    expect(readFileSync(join(workspace, ".vscode", "tasks.json"), "utf8")).toBe("{}\n");
    expect(readFileSync(join(workspace, ".mcp.json"), "utf8")).toBe('{"mcpServers":{}}\n');
    // git itself keeps working inside the sandbox: the commit made there is in the host's history.
    expect(run.stdout).toContain("committed");
    expect(git(workspace, "log", "--format=%s").stdout.split("\n")).toEqual(["host", "inside", "first", ""]);
  }, 60_000);
});
