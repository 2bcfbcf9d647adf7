import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ScriptFileStep } from "../../src/testing/scripted-script.js";
import { Workspace, serveEnv } from "../acp/agent/services-support.js";
import { runCli, type CliRun } from "../support/cli.js";
import { serveBehindBridge } from "../acp/agent/serve-support.js";

// `agentkit-acp prompt --fs … --terminal …` driving our own serve: the CLI's real hosts are
// offered by default and used by the agent; `off` runs everything in the agent.

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

type Run = CliRun;

/** The CLI in-process driving serve (its hosts are what is tested): serve in-process behind the agent process it launches, a bridge. */
async function runPrompt(ws: Workspace, steps: ScriptFileStep[], flags: string[]): Promise<Run> {
  const agent = await serveBehindBridge(["--model", `scripted:${ws.script(steps)}`, "--approve", "auto-all"], { cwd: ws.cwd, env: serveEnv(ws) });
  return runCli(["prompt", "--agent", agent.line, "--cwd", ws.cwd, ...flags, "go"], { cwd: ws.cwd, env: serveEnv(ws) });
}

function workspace(): Workspace {
  const ws = new Workspace("agentkit-cli-services-");
  cleanups.push(() => ws.cleanup());
  return ws;
}

const editAndRun: ScriptFileStep[] = [
  { toolCall: { name: "edit_file", input: { path: "a.txt", old_text: "one", new_text: "two" } } },
  { toolCall: { name: "shell", input: { command: "echo out-$((6*7))" } } },
  { text: "done" },
];

type Update = { type: string; toolCall: { title: string; status: string; content: unknown[] }; terminalIds: string[]; diffs: unknown[] };
const updates = (run: Run, title: RegExp): Update[] =>
  run.lines.filter((l): l is Record<string, unknown> & Update => l.type === "tool_call_update" && title.test((l as unknown as Update).toolCall.title));

describe("agentkit-acp prompt --fs / --terminal", () => {
  it("by default offers its fs (read-write) and terminals: the edit is written through the client, the shell runs in a client terminal", async () => {
    const ws = workspace();
    ws.file("a.txt", "one\n");
    const run = await runPrompt(ws, editAndRun, ["--json", "--permissions", "allow-all"]);
    expect(run.code, run.stderr).toBe(0);
    expect(ws.read("a.txt")).toBe("two\n");
    expect(updates(run, /^Edit /).at(-1)?.diffs).toHaveLength(1);
    const shell = updates(run, /^Run /);
    expect(shell.some((u) => u.toolCall.status === "in_progress" && u.terminalIds.length === 1)).toBe(true);
    expect(shell.at(-1)).toMatchObject({ toolCall: { status: "completed" }, terminalIds: [expect.any(String)] });
  });

  it("--fs off --terminal off: the same prompt runs in the agent (local edit, shell output as text)", async () => {
    const ws = workspace();
    ws.file("a.txt", "one\n");
    const run = await runPrompt(ws, editAndRun, ["--json", "--permissions", "allow-all", "--fs", "off", "--terminal", "off"]);
    expect(run.code, run.stderr).toBe(0);
    expect(ws.read("a.txt")).toBe("two\n");
    const last = updates(run, /^Run /).at(-1)!;
    expect(last.terminalIds).toEqual([]);
    expect(JSON.stringify(last.toolCall.content)).toContain("out-42");
  });

  it("text output shows a client terminal's output once the command is done", async () => {
    const ws = workspace();
    ws.file("a.txt", "one\n");
    const run = await runPrompt(ws, editAndRun, ["--permissions", "allow-all"]);
    expect(run.code, run.stderr).toBe(0);
    // While it runs the terminal is named; when it completes its output is printed under the call.
    expect(run.stdout).toMatch(/\[terminal term_[^\]]+\]\n.*Run `echo out-\$\(\(6\*7\)\)` completed\n\s+out-42\n/);
  });

  it("a --permissions file's deny rules also gate the hosts (a write under a sub-tree, a command prefix)", async () => {
    const ws = workspace();
    mkdirSync(join(ws.cwd, "locked"));
    ws.file("locked/b.txt", "one\n");
    const policy = join(ws.root, "policy.json");
    writeFileSync(
      policy,
      JSON.stringify({
        default: "allow",
        rules: [
          { kind: "edit", path: "locked/**", action: "deny" },
          { command: "touch", action: "deny" },
        ],
      }),
    );
    const run = await runPrompt(
      ws,
      [
        { toolCall: { name: "edit_file", input: { path: "locked/b.txt", old_text: "one", new_text: "two" } } },
        { toolCall: { name: "shell", input: { command: "touch made.txt" } } },
        { text: "done" },
      ],
      ["--json", "--permissions", policy],
    );
    expect(run.code, run.stderr).toBe(0);
    expect(ws.read("locked/b.txt")).toBe("one\n");
    expect(existsSync(join(ws.cwd, "made.txt"))).toBe(false);
    for (const title of [/^Edit /, /^Run /]) {
      const last = updates(run, title).at(-1)!;
      expect(last.toolCall.status).toBe("failed");
      expect(JSON.stringify(last.toolCall.content)).toMatch(/denied by the client's permission policy/);
    }
  });

  it("bad values are usage errors (exit 2)", async () => {
    const ws = workspace();
    for (const flags of [["--fs", "write"], ["--terminal", "maybe"], ["--fs", "read", "--fs", "off"]]) {
      const run = await runPrompt(ws, [{ text: "x" }], flags);
      expect(run.code, flags.join(" ")).toBe(2);
      expect(run.stderr).toMatch(/--(fs|terminal)/);
    }
  });
});
