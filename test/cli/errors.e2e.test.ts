import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { Workspace, bin, serveEnv } from "../acp/agent/services-support.js";
import { fixture, repoRoot } from "../acp/client/helpers.js";
import { runCli, runCliProcess } from "../support/cli.js";

// The error messages a newcomer meets (docs/errors.md lists each with its exit code): they name
// the real cause and the flag to fix, once, without class names.
const scratch = mkdtempSync(join(tmpdir(), "agentkit-errors-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("prompt --cwd", () => {
  it("a missing directory is a usage error naming --cwd (it blamed node: spawn /usr/bin/node ENOENT)", async () => {
    const run = await runCli(["prompt", "--cwd", join(scratch, "missing"), "hello"], { cwd: repoRoot });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`agentkit-acp prompt: --cwd ${join(scratch, "missing")}: no such directory\nRun \`agentkit-acp prompt --help\` for the options.\n`);
    expect(run.stdout).toBe("");
  });

  it("a file is a usage error naming --cwd (it said spawn ENOTDIR)", async () => {
    const file = join(scratch, "a-file");
    writeFileSync(file, "x");
    const run = await runCli(["prompt", "--json", "--cwd", file, "hello"], { cwd: repoRoot });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`agentkit-acp prompt: --cwd ${file}: not a directory\n`);
    expect(run.stdout).toBe("");
  });
});

describe("prompt --model (our own agent)", () => {
  it("a bad spec is a usage error before the agent starts (it was exit 1: the agent process exited with code 2)", async () => {
    const run = await runCli(["prompt", "--model", "x:y", "hello"], { cwd: scratch });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^agentkit-acp prompt: --model: unknown provider 'x' in 'x:y'; use one of anthropic, .*, or demo\nRun `agentkit-acp prompt --help` for the options\.\n$/);
    expect(run.stdout).toBe("");
  });
});

describe("prompt --permissions", () => {
  it("a mistyped preset is a usage error listing the presets (it said: cannot read permissions file … ENOENT)", async () => {
    const run = await runCli(["prompt", "--permissions", "allow-read", "hello"], { cwd: scratch });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe("agentkit-acp prompt: --permissions allow-read: neither a preset (deny, ask, allow-reads, allow-all) nor an existing policy file\nRun `agentkit-acp prompt --help` for the options.\n");
    expect(run.stdout).toBe("");
  });
});

/** A loopback port nobody listens on (bound, then closed): connection refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("agent errors are reported once, by their message", () => {
  it("a provider that cannot be reached: one stderr line, no 'Internal error:', no class name, nothing on stdout", async () => {
    const ws = new Workspace("agentkit-errors-");
    try {
      const base = `http://127.0.0.1:${await closedPort()}/v1`;
      const agent = `"${process.execPath}" "${bin}" serve --model openai-compatible:m --base-url ${base}`;
      const run = await runCli(["prompt", "--agent", agent, "--cwd", ws.cwd, "hello"], { cwd: ws.cwd, env: serveEnv(ws) });
      expect(run.code).toBe(1);
      expect(run.stdout).toBe("");
      const lines = run.stderr.trim().split("\n");
      expect(lines).toHaveLength(2);
      expect(lines[1]).toMatch(/^session: \S+ \(continue with --session \S+\)$/);
      expect(lines[0]).toMatch(new RegExp(`^agentkit-acp prompt: could not connect to ${base.replace(/[.]/g, "\\.")}`));
      expect(run.stderr).not.toMatch(/Internal error|RequestError|AgentConnectionError/);
    } finally {
      ws.cleanup();
    }
  });

  it("a command that does not exist (a real process): the exit report only, no EPIPE warning before it", async () => {
    const run = await runCliProcess(["prompt", "--agent", "no-such-agent-command-xyz --flag", "hello"], { cwd: scratch });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^agentkit-acp prompt: the ACP agent process exited with code 127 \(during initialize\)/);
    expect(run.stderr).toContain("no-such-agent-command-xyz: not found");
    expect(run.stderr).not.toMatch(/EPIPE|stopped reading/);
  });
});

describe("conventions", () => {
  it("-V, -v and --version print the version; help CMD is CMD --help", async () => {
    const version = (await runCli(["--version"], { cwd: repoRoot })).stdout;
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    for (const flag of ["-V", "-v"]) expect(await runCli([flag], { cwd: repoRoot })).toMatchObject({ code: 0, stdout: version });
    const help = await runCli(["help", "prompt"], { cwd: repoRoot });
    expect(help.code).toBe(0);
    expect(help.stdout).toBe((await runCli(["prompt", "--help"], { cwd: repoRoot })).stdout);
    expect(help.stdout).toMatch(/^Usage: agentkit-acp prompt/);
    expect((await runCli(["--help"], { cwd: repoRoot })).stdout).toMatch(/help <command>.*\n.*-V.*\n*.*NO_COLOR/);
  });

  it("an unknown option gets the same message from every command (exit 2)", async () => {
    // inspect writes to the process's own streams: a real process.
    for (const command of ["serve", "prompt", "demo", "inspect", "check"]) {
      const run = command === "inspect" ? await runCliProcess([command, "--bogus"], { cwd: repoRoot }) : await runCli([command, "--bogus"], { cwd: repoRoot });
      expect(run.code, command).toBe(2);
      expect(run.stderr.split("\n")[0], command).toBe(`agentkit-acp ${command}: unknown option --bogus`);
    }
    const missing = await runCli(["serve", "--model"], { cwd: repoRoot });
    expect(missing.stderr.split("\n")[0]).toBe("agentkit-acp serve: --model needs a value");
  });

  it("the session id is printed at the end also when stderr is not a terminal; stdout keeps only the answer", async () => {
    const run = await runCli(["prompt", "--agent", `"${process.execPath}" "${fixture}"`, "hello"], { cwd: repoRoot });
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain("session:");
    expect(run.stderr).toMatch(/^session: (\S+) \(continue with --session \1\)\n$/m);
  });
});
