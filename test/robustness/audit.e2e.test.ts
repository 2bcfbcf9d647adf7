import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type CliRun, runPrompt } from "./support.js";
import { fixture } from "../acp/client/helpers.js";

// Issue 14 case 10: what the agent did on this machine is visible: `--json` events and
// `--audit-log FILE` (JSONL, text mode too) for every host operation and permission decision.

const agent = `"${process.execPath}" "${fixture}"`;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function prompt(dir: string, args: string[]): Promise<CliRun> {
  return runPrompt(["--agent", agent, "--cwd", dir, ...args], dir);
}

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), "agentkit-robust-audit-"));
  dirs.push(dir);
  writeFileSync(join(dir, "notes.txt"), "héllo");
  return dir;
}

const jsonLines = (text: string): Array<Record<string, unknown>> =>
  text
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("robustness: the audit trail of host operations (the CLI in-process)", () => {
  it("--json: fs read and write with path and byte count", async () => {
    const dir = workspace();
    const read = await prompt(dir, ["--permissions", "allow-all", "--json", `readfile ${join(dir, "notes.txt")}`]);
    expect(read.code).toBe(0);
    expect(jsonLines(read.stdout)).toContainEqual(expect.objectContaining({ type: "host", op: "fs_read", path: join(dir, "notes.txt"), bytes: 6, verdict: "allowed" }));
    const write = await prompt(dir, ["--permissions", "allow-all", "--json", `writefile ${join(dir, "out.txt")} abc`]);
    expect(jsonLines(write.stdout)).toContainEqual(expect.objectContaining({ type: "host", op: "fs_write", path: join(dir, "out.txt"), bytes: 3, verdict: "allowed" }));
  });

  it("--json: terminal create and exit with command line, cwd and exit code; refusals recorded with the reason", async () => {
    const dir = workspace();
    const run = await prompt(dir, ["--permissions", "allow-all", "--json", "term sh -c 'exit 7'"]);
    expect(run.code).toBe(0);
    const lines = jsonLines(run.stdout).filter((l) => l.type === "host");
    const created = lines.find((l) => l.op === "terminal_create");
    expect(created).toMatchObject({ commandLine: "sh -c 'exit 7'", cwd: dir, verdict: "allowed", terminalId: expect.any(String) });
    expect(lines).toContainEqual(expect.objectContaining({ op: "terminal_exit", terminalId: created?.terminalId, commandLine: "sh -c 'exit 7'", cwd: dir, exitCode: 7 }));
    const refused = await prompt(dir, ["--permissions", "deny", "--json", `writefile ${join(dir, "no.txt")} x`]);
    expect(jsonLines(refused.stdout)).toContainEqual(expect.objectContaining({ type: "host", op: "fs_write", verdict: "refused", reason: "denied" }));
  });

  it("--audit-log in text mode: host operations and permission questions/answers with the option and the rule, appended as JSONL", async () => {
    const dir = workspace();
    const log = join(dir, "audit.jsonl");
    const rules = join(dir, "rules.json");
    writeFileSync(rules, JSON.stringify({ rules: [{ name: "edits ok", kind: "edit", action: "allow" }] }));
    const first = await prompt(dir, ["--permissions", rules, "--audit-log", log, `edit ${join(dir, "notes.txt")}`]);
    expect(first.code).toBe(0);
    expect(first.stdout).not.toContain('"type"'); // text mode: nothing JSON on stdout
    const second = await prompt(dir, ["--permissions", "allow-all", "--audit-log", log, `readfile ${join(dir, "notes.txt")}`]);
    expect(second.code).toBe(0);
    const lines = jsonLines(readFileSync(log, "utf8"));
    expect(lines.every((l) => typeof l.time === "string")).toBe(true);
    const asked = lines.find((l) => l.type === "permission_requested") as { request: { options: unknown[] } } | undefined;
    expect(asked?.request.options.length).toBeGreaterThan(0);
    expect(lines).toContainEqual(
      expect.objectContaining({
        type: "permission_answered",
        answer: expect.objectContaining({ decision: "allow", optionKind: "allow_once", outcome: { outcome: "selected", optionId: "opt-allow-once" }, source: "rule", reason: expect.stringContaining('"edits ok"') }),
      }),
    );
    // Appended, not replaced: the second run's read follows the first run's lines.
    expect(lines.at(-1)).toMatchObject({ type: "host", op: "fs_read", bytes: 6 });
  });

  it("--audit-log to a place that cannot be written: exit 2 with a message saying so", async () => {
    const dir = workspace();
    const run = await prompt(dir, ["--audit-log", join(dir, "missing-dir", "a.jsonl"), "hello"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--audit-log: cannot append to");
  });
});
