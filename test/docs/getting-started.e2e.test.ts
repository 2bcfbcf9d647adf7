import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { AcpClient, ClientPermissionPolicy } from "../../src/acp/client/index.js";
import { runCli, type CliRun } from "../support/cli.js";
import { editorSnippets, guideText, shellCommands, shellWords } from "../support/docs.js";
import { repoRoot } from "../support/npm-app.js";

const run = promisify(execFile);
const guideFile = "docs/getting-started.md";
const guide = guideText("getting-started.md");

// The guide's scratch directory and the id it tells the reader to paste, replaced here.
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "agentkit-getting-started-")));
const place = (line: string, sessionId = ""): string => line.replaceAll("/tmp/agentkit-hello", scratch).replaceAll("SESSION_ID", sessionId);
// No key of the reader's: every model is the demo model unless a command names one. npx installs
// the checkout itself into its cache the first time (a new clone's path): without ignore-scripts
// that install runs our `prepare` (npm run build), which rebuilds dist/ under the running suite.
const env: NodeJS.ProcessEnv = { ...process.env, ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "", OPENROUTER_API_KEY: "", AGENTKIT_MODEL: "", npm_config_offline: "true", npm_config_ignore_scripts: "true" };
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** `npx agentkit-acp ARGS` in-process (the CLI's own code; the agents it starts are real processes). */
const agentkit = (line: string, sessionId?: string): Promise<CliRun> => {
  const argv = shellWords(place(line, sessionId));
  expect(argv.slice(0, 2)).toEqual(["npx", "agentkit-acp"]);
  return runCli(argv.slice(2), { cwd: repoRoot, env });
};
const sessionIdOf = (result: CliRun): string => /session: (sess_\w+)/.exec(result.stderr)?.[1] ?? "";

// Every command the guide shows, and what running it must show. A command the guide shows and this
// table does not know fails the first test, so the guide cannot drift from what is run.
const NOT_RUN: Record<string, string> = {
  "npm ci": "the suite runs inside the checkout it installed",
  "export ANTHROPIC_API_KEY=sk-ant-…": "needs a key of the reader's",
  'npx agentkit-acp prompt --cwd /tmp/agentkit-hello "What is in this directory?"': "needs a model key of the reader's",
  'npx agentkit-acp prompt --model ollama:qwen3 --cwd /tmp/agentkit-hello "What is in this directory?"': "needs an Ollama server",
  "npx acpx@0.19.1 --approve-all --agent 'node bin/agentkit-acp.js serve --model demo' exec 'summarize this repository'":
    "installs acpx from npm: run as written by test/cli/acpx.e2e.test.ts (AGENTKIT_TEST_NPM=1)",
};
const RUN = [
  "npx agentkit-acp demo",
  "mkdir -p /tmp/agentkit-hello",
  'npx agentkit-acp prompt --model demo --cwd /tmp/agentkit-hello --permissions allow-all "Write a note"',
  "npx agentkit-acp prompt --cwd /tmp/agentkit-hello --list",
  'npx agentkit-acp prompt --model demo --cwd /tmp/agentkit-hello --permissions allow-all --session SESSION_ID "Add a line"',
  'npx agentkit-acp prompt --agent "npx tsx examples/own-tool/agent.ts" "What is the weather in Bern?"',
  'npx agentkit-acp check --agent "node bin/agentkit-acp.js serve --model demo"',
];

describe.concurrent(`${guideFile}: every command runs as written (demo model, no key)`, () => {
  it("shows exactly the commands this test runs or names as not run", () => {
    expect(shellCommands(guide).filter((line) => !(line in NOT_RUN))).toEqual(RUN);
    expect(Object.keys(NOT_RUN).every((line) => shellCommands(guide).includes(line))).toBe(true);
  });

  it("1. npx agentkit-acp demo (through npx itself, offline: the checkout's own bin)", { timeout: 60_000 }, async () => {
    const { stdout } = await run("/bin/sh", ["-c", RUN[0]!], { cwd: repoRoot, env, timeout: 50_000 });
    expect(stdout.match(/\[done\] end_turn/g)).toHaveLength(2);
    expect(stdout).toContain("⏺ Write agentkit-demo.md");
    expect(stdout).toContain('- Prompt 2: "Add a line saying that ACP works."');
  });

  it("2. prompt in a scratch directory, --list, then --session continues the same session", { timeout: 60_000 }, async () => {
    await run("/bin/sh", ["-c", place(RUN[1]!)]);
    const first = await agentkit(RUN[2]!);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("Created agentkit-demo.md");
    const id = sessionIdOf(first);
    expect(id).toMatch(/^sess_/);

    const list = await agentkit(RUN[3]!);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`^${id} .*Write a note$`, "m"));

    const second = await agentkit(RUN[4]!, id);
    expect(second.code).toBe(0);
    expect(sessionIdOf(second)).toBe(id);
    expect(readFileSync(join(scratch, "agentkit-demo.md"), "utf8")).toContain('- Prompt 2: "Add a line"');
  });

  it("5. a tool of your own: the example agent answers with its tool's result", { timeout: 60_000 }, async () => {
    const result = await agentkit(RUN[5]!);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("✓ Weather in Bern completed");
    expect(result.stdout).toContain("[done] end_turn");
  });

  it("6. check: our own agent is conformant", { timeout: 60_000 }, async () => {
    const result = await agentkit(RUN[6]!);
    expect(result.stdout).toMatch(/CONFORMANT on every MUST check — \d+ passed, 0 failed/);
    expect(result.code).toBe(0);
  });

  // Every command wrote to its own directories, none to the checkout the guide runs them from.
  afterAll(() => expect(existsSync(join(repoRoot, "agentkit-demo.md"))).toBe(false));
});

describe.concurrent("the editor configurations the guides show start an agent that answers a prompt", () => {
  const snippets = editorSnippets().filter((s) => ["docs/getting-started.md", "docs/editors.md"].includes(s.file));
  it("finds them (Zed in getting-started.md and editors.md, JetBrains in editors.md)", () => {
    expect(snippets.map((s) => s.file).sort()).toEqual(["docs/editors.md", "docs/editors.md", "docs/getting-started.md"]);
  });

  it.each(snippets.map((s) => [`${s.file}: ${s.name}`, s]))("%s", { timeout: 30_000 }, async (_name, { server }) => {
    const args = server.args.map((arg) => arg.replace("/path/to/agentkit-acp", repoRoot));
    // The snippet's own environment (a placeholder key), with the demo model chosen over it.
    const agentEnv = { ...env, ...server.env, AGENTKIT_MODEL: "demo" } as Record<string, string>;
    const cwd = join(scratch, "editor");
    mkdirSync(cwd, { recursive: true });
    const session = await AcpClient.startSession({ command: server.command, args, env: agentEnv, cwd }, ClientPermissionPolicy.preset("allow-all"));
    try {
      const result = await session.prompt("Write a note");
      expect(result.stopReason).toBe("end_turn");
      expect(result.text).toContain("demo model");
    } finally {
      await session.close();
    }
  });
});
