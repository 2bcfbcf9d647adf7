import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockModel, type MockModelServer } from "../../bench/compat/mock-model.js";
import { cleanEnv } from "../acp/agent/serve-support.js";
import { repoRoot, tempDir } from "../acp/client/helpers.js";
import { runCliProcess } from "../support/cli.js";
import { cachedDir, npmChildEnv, npmTests, npmTestsNode22 } from "../support/npm-app.js";

/**
 * `prompt --sandbox --agent codex`: a vendor agent from the compatibility matrix (Zed's
 * codex-acp, a native binary), started by its preset as a user would (`npx -y
 * @zed-industries/codex-acp` inside the sandbox, npm's registry through the sandbox's proxy,
 * `~/.npm` and `~/.codex` writable), pointed at the loopback mock model by its own
 * `~/.codex/config.toml`, runs a full turn: the model calls Codex's shell tool, Codex runs it
 * inside the agent's sandbox, the file lands in the workspace. The same agent's write outside
 * the workspace does not reach the host. The home (npm's cache: the first run downloads
 * ~110 MB) outlives the run: AGENTKIT_TEST_NPM=1 only, as other registry tests.
 */
describe.runIf(npmTests)("prompt --sandbox drives codex-acp (preset codex) through a full turn (AGENTKIT_TEST_NPM=1)", () => {
  const home = cachedDir("codex-preset-home");
  const outside = tempDir();
  let mock: MockModelServer;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    mock = await startMockModel();
    mkdirSync(join(home, ".codex"), { recursive: true });
    writeFileSync(
      join(home, ".codex", "config.toml"),
      [
        'model = "mock-model"',
        'model_provider = "mock"',
        'approval_policy = "untrusted"',
        // Codex's own sandbox would nest bubblewrap, which ours forbids (--disable-userns): ours is the boundary.
        'sandbox_mode = "danger-full-access"',
        "[model_providers.mock]",
        'name = "mock"',
        `base_url = "${mock.origin}/v1"`,
        'wire_api = "responses"',
        "",
      ].join("\n"),
    );
    // npm's own variables (set when the suite runs under npm/npx) would move its cache out of ~/.npm.
    const base = npmChildEnv(cleanEnv());
    env = { ...base, HOME: home, NO_UPDATE_NOTIFIER: "1" };
  });
  afterAll(async () => {
    await mock.close();
  });

  const prompt = (cwd: string, text: string) =>
    runCliProcess(["prompt", "--sandbox", "--sandbox-net", `allow=127.0.0.1:${new URL(mock.origin).port}`, "--agent", "codex", "--cwd", cwd, "--permissions", "allow-all", text], { cwd: repoRoot, env });

  it("writes in the workspace through its own shell tool, sandboxed", { timeout: 300_000 }, async () => {
    const workspace = tempDir();
    const run = await prompt(workspace, `Create the file ${workspace}/acp.txt containing the word ok.`);
    expect(run.code, `${run.stderr}\n${mock.log.join("\n")}`).toBe(0);
    expect(run.stderr).toContain("sandbox: the agent runs in bubblewrap");
    expect(run.stderr).toContain(`${home}/.codex`);
    expect(run.stdout).toContain("end_turn");
    expect(readFileSync(join(workspace, "acp.txt"), "utf8")).toBe("ok");
  });

  it("its write outside the workspace does not reach the host", { timeout: 300_000 }, async () => {
    const workspace = tempDir();
    const target = join(outside, "escape.txt");
    const before = mock.log.length;
    const run = await prompt(workspace, `Create the file ${target} containing the word ok.`);
    expect(run.code, run.stderr).toBe(0);
    // The model did ask for the write, and Codex ran it: only the sandbox stopped it.
    expect(mock.log.slice(before).some((line) => line.includes("tool"))).toBe(true);
    expect(run.stdout).toContain(target);
    expect(existsSync(target)).toBe(false);
  });

  it("its write to ~/.codex/config.toml (MCP servers, sandbox_mode, notify a later unsandboxed Codex trusts) fails; the file is unchanged", { timeout: 300_000 }, async () => {
    const workspace = tempDir();
    const config = join(home, ".codex", "config.toml");
    const before = readFileSync(config, "utf8");
    const requests = mock.log.length;
    const run = await prompt(workspace, `Create the file ${config} containing the word ok.`);
    expect(run.code, run.stderr).toBe(0);
    // The model asked for the write and Codex ran it in ~/.codex (writable for its state): only the protection stopped it.
    expect(mock.log.slice(requests).some((line) => line.includes("tool"))).toBe(true);
    expect(run.stdout).toContain(config);
    expect(run.stdout).toContain("end_turn");
    expect(readFileSync(config, "utf8")).toBe(before);
  });
});

/**
 * `prompt --sandbox --agent claude`: the real @agentclientprotocol/claude-agent-acp (Claude Code,
 * Node ≥ 22) through its preset's `npx -y` inside the sandbox, pointed at the loopback mock model
 * (ANTHROPIC_BASE_URL): a full turn, then `--session ID` resumes it — Claude Code reads its
 * transcript from ~/.claude/projects, which must be writable (a read-only ~/.claude failed the
 * resume with "Resource not found"), while its settings, hooks and commands stay read-only.
 */
describe.runIf(npmTestsNode22)("prompt --sandbox drives claude-agent-acp (preset claude): a turn, then --session resumes it (AGENTKIT_TEST_NPM=1 or node22, Node >= 22)", () => {
  const home = cachedDir("claude-preset-home");
  let mock: MockModelServer;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    mock = await startMockModel();
    mkdirSync(join(home, ".claude"), { recursive: true });
    const base = npmChildEnv(cleanEnv());
    const quiet = { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1", DISABLE_TELEMETRY: "1", NO_UPDATE_NOTIFIER: "1" };
    env = { ...base, ...quiet, HOME: home, ANTHROPIC_BASE_URL: mock.origin, ANTHROPIC_API_KEY: "sk-ant-mock", IS_SANDBOX: "1" };
  });
  afterAll(async () => {
    await mock.close();
  });

  const prompt = (cwd: string, text: string, session: string[] = []) =>
    runCliProcess(["prompt", "--sandbox", "--sandbox-net", `allow=127.0.0.1:${new URL(mock.origin).port}`, "--agent", "claude", "--cwd", cwd, "--permissions", "allow-all", ...session, text], { cwd: repoRoot, env });

  it("writes in the workspace, then resumes the session; its settings stay read-only", { timeout: 300_000 }, async () => {
    const workspace = tempDir();
    const first = await prompt(workspace, `Create the file ${workspace}/acp.txt containing the word ok.`);
    expect(first.code, `${first.stderr}\n${mock.log.join("\n")}`).toBe(0);
    expect(first.stdout).toContain("end_turn");
    expect(readFileSync(join(workspace, "acp.txt"), "utf8").trim()).toBe("ok");
    const session = /--session ([\w-]+)/.exec(first.stderr)?.[1];
    expect(session, first.stderr).toBeDefined();
    const resumed = await prompt(workspace, "Say hello.", ["--session", session ?? ""]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`continuing session ${session}`);
    expect(resumed.stdout).toContain("end_turn");
    // Created empty by prompt --sandbox so it could be bound read-only; Claude Code did not write it.
    expect(readFileSync(join(home, ".claude", "settings.json"), "utf8")).toBe("{}\n");
  });
});
