import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectGroupGone, fixture, repoRoot, tempDir } from "../acp/client/helpers.js";
import { cliBin, runCli, runCliProcess, type CliRun, type CliRunOptions } from "../support/cli.js";

const agent = `"${process.execPath}" "${fixture}"`;

// Argument handling, output and exit codes run the CLI in-process (runCli); what a user sees of
// the process itself (stdout purity, Ctrl-C, exit) runs the real bin (runCliProcess).
const cli = (args: string[], options: Partial<CliRunOptions> = {}): Promise<CliRun> => runCli(args, { cwd: repoRoot, ...options });

async function noAgentLeft(run: CliRun): Promise<void> {
  const session = run.lines.find((l) => l.type === "session");
  expect(session, "a session line").toBeDefined();
  await expectGroupGone(session?.pid as number);
}

describe("agentkit-acp prompt", () => {
  it("--json (a real process): NDJSON events only on stdout, a first session line and a last line carrying stopReason; exit 0", async () => {
    const run = await runCliProcess(["prompt", "--agent", agent, "--json", "hello"], { cwd: repoRoot });
    expect(run.code).toBe(0);
    expect(run.lines[0]).toMatchObject({ type: "session", agent: { name: "fixture-agent" } });
    expect(run.lines.filter((l) => l.type === "message_chunk").map((l) => l.text)).toEqual(["Hello", ", ", "world"]);
    expect(run.lines.at(-1)).toMatchObject({ type: "done", stopReason: "end_turn", result: { text: "Hello, world" } });
    expect(run.stdout.trim().split("\n").every((l) => l.startsWith("{"))).toBe(true);
    await noAgentLeft(run);
  });

  it("maps stop reasons to documented exit codes (refusal 4, max_tokens 5)", async () => {
    const refusal = await cli(["prompt", "--agent", agent, "--json", "refuse"]);
    expect(refusal.code).toBe(4);
    expect(refusal.lines.at(-1)).toMatchObject({ stopReason: "refusal" });
    const max = await cli(["prompt", "--agent", agent, "--json", "max"]);
    expect(max.code).toBe(5);
    expect(max.lines.at(-1)).toMatchObject({ stopReason: "max_tokens" });
  });

  it("an agent crash: exit 1, last line an error with stopReason null, exit code and stderr tail", async () => {
    const run = await cli(["prompt", "--agent", agent, "--json", "crash"]);
    expect(run.code).toBe(1);
    expect(run.lines.at(-1)).toMatchObject({
      type: "error",
      stopReason: null,
      exitCode: 1,
      error: { name: "AgentExitedError", exitCode: 3, stderrTail: expect.arrayContaining(["fatal: simulated crash in the middle of a prompt"]) },
    });
    expect(run.stderr).toMatch(/exited with code 3/);
    await noAgentLeft(run);
  });

  it("Ctrl-C cancels the turn (exit 3); a second Ctrl-C ends an agent that ignores the cancel (exit 130)", async () => {
    let sent = false;
    const cancelled = await runCliProcess(["prompt", "--agent", agent, "--json", "slow"], {
      cwd: repoRoot,
      onLine: (line, pid) => {
        if (line.type === "message_chunk" && !sent) {
          sent = true;
          process.kill(pid, "SIGINT");
        }
      },
    });
    expect(cancelled.code).toBe(3);
    expect(cancelled.lines.at(-1)).toMatchObject({ type: "done", stopReason: "cancelled" });
    await noAgentLeft(cancelled);

    let ticks = 0;
    const killed = await runCliProcess(["prompt", "--agent", agent, "--json", "stubborn"], {
      cwd: repoRoot,
      onLine: (line, pid) => {
        if (line.type !== "message_chunk") return;
        ticks += 1;
        if (ticks === 1 || ticks === 10) process.kill(pid, "SIGINT");
      },
    });
    expect(killed.code).toBe(130);
    expect(killed.lines.at(-1)).toMatchObject({ type: "error", stopReason: null, exitCode: 130 });
    await noAgentLeft(killed);
  });

  it("stdout closed by its reader (`prompt … | head`): the turn is cancelled, exit 3, no crash, the agent ended", async () => {
    const child = spawn(process.execPath, [cliBin, "prompt", "--agent", agent, "--json", "slow"], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    let agentPid: number | undefined;
    let buffered = "";
    // Like `head -n 2`: read the session line and the first chunk, then close the pipe.
    child.stdout.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>);
      agentPid ??= lines.find((l) => l.type === "session")?.pid as number | undefined;
      if (lines.some((l) => l.type === "message_chunk")) child.stdout.destroy();
    });
    const [code] = (await once(child, "close")) as [number | null];
    expect(stderr).toContain("stdout closed (EPIPE): cancelling the turn");
    expect(stderr).not.toMatch(/Error|at .*\.js/);
    expect(code).toBe(3);
    expect(agentPid).toBeDefined();
    await expectGroupGone(agentPid as number);
  });

  it("denies permissions by default without a terminal; --permissions allow-all and FILE.json change that", async () => {
    const denied = await cli(["prompt", "--agent", agent, "--json", "edit /tmp/cli-x.txt"]);
    expect(denied.code).toBe(0);
    expect(denied.lines.find((l) => l.type === "permission_answered")).toMatchObject({ answer: { decision: "deny", optionKind: "reject_once" } });

    const allowed = await cli(["prompt", "--agent", agent, "--permissions", "allow-all", "--json", "edit /tmp/cli-x.txt"]);
    expect(allowed.lines.find((l) => l.type === "permission_answered")).toMatchObject({ answer: { decision: "allow", optionKind: "allow_once" } });
    expect(allowed.lines.find((l) => l.type === "tool_call_update" && (l.diffs as unknown[]).length > 0)).toBeDefined();

    const file = join(tempDir(), "perms.json");
    writeFileSync(file, JSON.stringify({ rules: [{ command: "git status", action: "allow", always: true }] }));
    const byFile = await cli(["prompt", "--agent", agent, "--permissions", file, "--json", "run git status"]);
    expect(byFile.lines.find((l) => l.type === "permission_answered")).toMatchObject({ answer: { decision: "allow", optionKind: "allow_always", source: "rule" } });
  });

  it("reads the prompt from stdin with -, and continues a session with --session", async () => {
    const state = tempDir();
    const first = await cli(["prompt", "--agent", `${agent} --state ${state}`, "--json", "-"], { input: "hello\n" });
    expect(first.code).toBe(0);
    const sessionId = first.lines[0]?.sessionId as string;
    const second = await cli(["prompt", "--agent", `${agent} --state ${state}`, "--session", sessionId, "--json", "refuse"]);
    expect(second.lines[0]).toMatchObject({ type: "session", sessionId });
    expect(second.code).toBe(4);
  });

  it("prints readable text without --json, and help / usage errors with exit codes 0 / 2", async () => {
    const text = await cli(["prompt", "--agent", agent, "--permissions", "allow-all", "edit /tmp/cli-y.txt"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("⏺ Edit /tmp/cli-y.txt");
    expect(text.stdout).toContain("- old line");
    expect(text.stdout).toContain("+ new line");
    expect(text.stdout).toContain("[done] end_turn");

    const help = await cli(["prompt", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Exit codes:");
    const bad = await cli(["prompt", "--frobnicate"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown option --frobnicate");
    const dirs = await cli(["prompt", "--agent", `${agent} --minimal`, "--add-dir", "/tmp", "--json", "hello"]);
    expect(dirs.code).toBe(1);
    expect(dirs.lines.at(-1)).toMatchObject({ type: "error", error: { name: "CapabilityError", capability: "sessionCapabilities.additionalDirectories" } });
    const empty = await cli(["prompt", "--agent", agent]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain("no prompt text");
  });
});

describe("agentkit-acp demo", () => {
  it("runs the flow in a temporary workspace and says permissions are auto-answered without a terminal", async () => {
    const run = await cli(["demo", "--agent", agent, "--prompt", "edit /tmp/demo-fixture.txt"]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('permission requests are answered "allow once" automatically');
    expect(run.stdout).toContain("permission: allowed (allow once");
    expect(run.stdout).toContain("+ new line");
    const workspace = /workspace: (\S+)/.exec(run.stderr)?.[1];
    expect(workspace).toBeDefined();
    expect(existsSync(workspace as string)).toBe(false);
  });

  it("end to end (a real process) against our own `serve` with the demo model: streaming, permission, diff", async () => {
    const run = await runCliProcess(["demo"], { cwd: repoRoot });
    expect(run.stderr).toContain("our own agent");
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/⏺ Write agentkit-demo\.md/);
    expect(run.stdout).toContain("permission: allowed (allow once");
    expect(run.stdout).toMatch(/new file .*agentkit-demo\.md/);
    expect(run.stdout).toMatch(/⏺ Edit agentkit-demo\.md/);
    expect(run.stdout).toContain('+ - Prompt 2: "Add a line saying that ACP works."');
    expect(run.stdout.match(/\[done\] end_turn/g)).toHaveLength(2);
  });

  it("prompt --agent self --json against our own serve (deny by default)", async () => {
    const cwd = tempDir();
    const run = await cli(["prompt", "--agent", "self", "--cwd", cwd, "--json", "Write a note"], { env: { ...process.env, AGENTKIT_MODEL: "demo" } });
    expect(run.code, run.stderr).toBe(0);
    expect(run.lines[0]).toMatchObject({ type: "session" });
    expect(run.lines.find((l) => l.type === "permission_answered")).toMatchObject({ answer: { decision: "deny" } });
    expect(run.lines.at(-1)).toMatchObject({ type: "done", stopReason: "end_turn" });
    expect(existsSync(join(cwd, "agentkit-demo.md"))).toBe(false);
    await noAgentLeft(run);
  });
});
