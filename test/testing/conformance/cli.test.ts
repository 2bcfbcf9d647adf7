import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { conformanceChecks, type ConformanceReport } from "../../../src/testing/index.js";
import { runCli, runCliProcess } from "../../support/cli.js";
import { bin, conformanceAgent, processesLeftWith, processesWith, tempDir } from "./helpers.js";

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `agentkit-acp check …` in-process (argument handling, report and exit code) or, with
 * `process: true`, as the real bin; afterwards no process it started may be alive.
 */
async function cli(args: string[], options: { process?: boolean } = {}): Promise<Ran> {
  const marker = randomUUID();
  const run = options.process ? runCliProcess : runCli;
  const { code, stdout, stderr } = await run(["check", ...args], { cwd: process.cwd(), env: { ...process.env, AGENTKIT_CONFORMANCE_TEST: marker } });
  expect(await processesLeftWith(`AGENTKIT_CONFORMANCE_TEST=${marker}`)).toEqual([]);
  return { code, stdout, stderr };
}

const agent = (...flags: string[]): string => `${JSON.stringify(process.execPath)} ${JSON.stringify(conformanceAgent)} --state ${JSON.stringify(tempDir())} ${flags.join(" ")}`;

describe("agentkit-acp check (CLI)", () => {
  it("--list prints every check with its level; --help documents the options and exit codes", async () => {
    const list = await cli(["--list"]);
    expect(list.code).toBe(0);
    for (const check of conformanceChecks) expect(list.stdout).toMatch(new RegExp(`^${check.id.replace(".", "\\.")}\\s+${check.severity}`, "m"));
    const help = await cli(["--help"]);
    expect(help.code).toBe(0);
    for (const option of ["--agent", "--cwd", "--json", "--report", "--only", "--skip-prompts", "--timeout", "Exit codes"]) expect(help.stdout).toContain(option);
  });

  it("usage errors exit 2 with the reason on stderr", async () => {
    for (const args of [["--only", "no.such-check"], ["--timeout", "soon"], ["--frobnicate"], ["--agent", ""]]) {
      const ran = await cli(args);
      expect(ran.code, args.join(" ")).toBe(2);
      expect(ran.stdout).toBe("");
      expect(ran.stderr).toMatch(/agentkit-acp check: /);
    }
  });

  it("a failed MUST check exits 1; the report shows ✗, the spec reference and the fix", async () => {
    const ran = await cli(["--agent", agent("--late-update"), "--only", "prompt.update-order,prompt.stop-reason"]);
    expect(ran.code).toBe(1);
    expect(ran.stdout).toMatch(/✗ prompt\.update-order\s+MUST/);
    expect(ran.stdout).toMatch(/✓ prompt\.stop-reason/);
    expect(ran.stdout).toContain("agent_message_chunk after the session/prompt response");
    expect(ran.stdout).toContain("https://agentclientprotocol.com/protocol/v1/prompt-turn");
    expect(ran.stdout).toMatch(/fix: +Await every notify\(\)/);
    expect(ran.stdout).toContain("NOT CONFORMANT — MUST check(s) failed: prompt.update-order");
    expect(ran.stdout).not.toMatch(/init\.version/); // --only limits the report
  }, 60_000);

  it("a failed SHOULD check alone still exits 0 and is listed as a recommendation; an info finding as informational", async () => {
    const ran = await cli(["--agent", agent("--unknown-method-ok", "--accept-image"), "--only", "rpc.unknown-method,prompt.image-refused"]);
    expect(ran.stdout).toMatch(/✗ rpc\.unknown-method\s+SHOULD/);
    expect(ran.stdout).toMatch(/! prompt\.image-refused\s+info/);
    expect(ran.stdout).toMatch(/recommendation not followed: .*expected error -32601/);
    expect(ran.stdout).toMatch(/recommendations not followed \(failed SHOULD\): +rpc\.unknown-method/);
    expect(ran.stdout).toMatch(/informational \(spec leaves it open, or inconclusive\): prompt\.image-refused/);
    expect(ran.stdout).toMatch(/spec violations \(failed MUST checks\): +none/);
    expect(ran.code).toBe(0);
  }, 60_000);

  it("--report FILE writes the JSON report and a Markdown table; a missing folder is a usage error", async () => {
    const dir = tempDir();
    const ran = await cli(["--agent", agent("--wrong-session-error"), "--only", "session.unknown-id,session.unknown-id-code", "--report", join(dir, "out.json")]);
    expect(ran.code).toBe(0);
    const report = JSON.parse(readFileSync(join(dir, "out.json"), "utf8")) as ConformanceReport;
    expect(report.results.map((r) => [r.id, r.verdict])).toEqual([["session.unknown-id", "ok"], ["session.unknown-id-code", "informational"]]);
    const markdown = readFileSync(join(dir, "out.md"), "utf8");
    expect(markdown).toContain("| check | level | result | meaning | observed | spec |");
    expect(markdown).toMatch(/\| `session\.unknown-id-code` \| info \| ! warn \| informational \| .*-32603.* \| \[schema#errorcode\]\(https:\/\/agentclientprotocol\.com\/protocol\/v1\/schema#errorcode\) \|/);
    const missing = await cli(["--agent", agent(), "--report", join(dir, "no-such-folder", "out")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("does not exist");
  }, 60_000);

  it("--agent self --json --skip-prompts (a real process): our own serve, only the JSON report on stdout, exit 0", async () => {
    const ran = await cli(["--agent", "self", "--json", "--skip-prompts", "--timeout", "20000"], { process: true });
    expect(ran.code).toBe(0);
    const report = JSON.parse(ran.stdout) as ConformanceReport;
    expect(report.ok).toBe(true);
    expect(report.agent.command).toMatch(/agentkit-acp\.js serve --model demo$/);
    expect(report.results.map((r) => r.id)).toEqual(conformanceChecks.map((c) => c.id));
    expect(report.results.find((r) => r.id === "init.version")?.status).toBe("pass");
  }, 120_000);
});

describe("agentkit-acp check interrupted", () => {
  it("Ctrl-C (SIGINT) exits 130, ends the agent's process group and leaves no scratch directory", async () => {
    const marker = `AGENTKIT_CONFORMANCE_TEST=${randomUUID()}`;
    const ownTmp = tempDir();
    const child = spawn(process.execPath, [bin, "check", "--agent", agent("--no-exit-on-eof"), "--only", "exit.stdin-eof"], {
      env: { ...process.env, AGENTKIT_CONFORMANCE_TEST: marker.split("=")[1], TMPDIR: ownTmp },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    // Wait until the agent runs (its environment carries the marker), then interrupt.
    while (processesWith(marker).filter((pid) => pid !== child.pid).length === 0) await new Promise((resolve) => setTimeout(resolve, 25));
    child.kill("SIGINT");
    expect(await closed).toBe(130);
    expect(await processesLeftWith(marker)).toEqual([]);
    // check's state dir and the run's scratch (workspace, notes); Node 24 also keeps its compile cache there.
    expect(readdirSync(ownTmp).filter((name) => name.startsWith("agentkit-check-"))).toEqual([]);
  }, 60_000);
});
