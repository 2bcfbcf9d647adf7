import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type CliRun, runPromptProcess } from "./support.js";
import { TextRenderer } from "../../src/cli/prompt-render.js";
import { stripControls } from "../../src/cli/terminal-safe.js";
import { agentFixture } from "../support/fixture-agents.js";

// Issue 14 case 6: nothing the agent sends reaches the terminal with control or escape
// sequences in text mode; --raw opts out; our own colours stay.

const hostile = agentFixture("hostile-agent.mjs");
const dir = mkdtempSync(join(tmpdir(), "agentkit-robust-escapes-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function prompt(extra: string[]): Promise<CliRun> {
  return runPromptProcess(["--agent", `"${process.execPath}" "${hostile}"`, "--permissions", "allow-all", "--cwd", dir, "--verbose", ...extra, "go"], dir);
}

// eslint-disable-next-line no-control-regex -- what must not be there
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe("robustness: terminal safety of prompt's text output (real CLI, hostile agent)", () => {
  it("text, thoughts, plan, tool title, diff, terminal output, tool result and --verbose stderr arrive without control sequences", async () => {
    const run = await prompt([]);
    expect(run.code, run.stderr).toBe(0);
    for (const label of ["message", "thought", "plan", "title", "diff", "result"]) expect(run.stdout).toContain(label);
    expect(run.stdout).toContain("terminal-out");
    expect(run.stderr).toContain("stderr");
    expect(run.stdout).not.toMatch(CONTROL);
    expect(run.stderr).not.toMatch(CONTROL);
    expect(run.stdout).not.toContain("pwned"); // OSC payloads are dropped with their sequence
  });

  it("--raw passes them through unchanged", async () => {
    const run = await prompt(["--raw"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("\u001b]0;pwned-message\u0007");
    expect(run.stdout).toContain("\u001b[2J");
  });

  it("our own colours are kept while the agent's are removed", () => {
    let out = "";
    const renderer = new TextRenderer({ write: (t: string) => (out += t) }, true);
    renderer.event({ type: "thought_chunk", text: "\u001b[31mred\u001b[0m", content: { type: "text", text: "" } });
    expect(out).toContain("\u001b[2m"); // our dim
    expect(out).not.toContain("\u001b[31m");
    expect(out).toContain("red");
  });

  it("stripControls: CSI, OSC (BEL and ST), DCS, C1, lone ESC, BS, CR; keeps text, newlines, tabs, non-ASCII", () => {
    expect(stripControls("a\u001b[38;5;1mb\u001b[0m")).toBe("ab");
    expect(stripControls("\u001b]8;;http://x\u001b\\link\u001b]8;;\u001b\\")).toBe("link");
    expect(stripControls("x\u001bPq#0;2;0;0;0\u001b\\y")).toBe("xy");
    expect(stripControls("é\tü\n\u009b2Jz\u0008\r\u0007")).toBe("é\tü\nz");
    expect(stripControls("end\u001b")).toBe("end");
    expect(stripControls("\u001b]0;unterminated title")).toBe("");
  });
});
