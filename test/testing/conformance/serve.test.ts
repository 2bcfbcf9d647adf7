import { describe, expect, it } from "vitest";
import { bin, check, ids, result, tempDir } from "./helpers.js";

/** Our own agent: `agentkit-acp serve --model demo` with a throw-away state directory. */
function serve() {
  return { command: process.execPath, args: [bin, "serve", "--model", "demo", "--log-level", "warn"], env: { AGENTKIT_STATE_DIR: tempDir() } };
}

describe("conformance of agentkit-acp serve (demo model)", () => {
  it("passes every MUST check, with prompts, cancellation, permissions, load/resume and MCP", async () => {
    const report = await check(serve());
    expect(report.summary.violations).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.agent.info?.name).toBe("agentkit-acp");
    // The checks that exercise the most machinery really ran (not skipped):
    for (const id of ["prompt.stop-reason", "prompt.update-order", "cancel.turn", "cancel.next-prompt", "cancel.permission", "mcp.stdio", "exit.stdin-eof", "exit.process-group", "wire.stdout-json"]) {
      expect(result(report, id).status, `${id}: ${result(report, id).detail}`).toBe("pass");
    }
    // The demo model asks permission for a write on every prompt: the suite answered it `cancelled` after session/cancel.
    expect(result(report, "cancel.permission").detail).toMatch(/stopReason "cancelled"/);
    for (const id of ["caps.load-session", "caps.session-resume", "caps.session-list"]) {
      if (result(report, id).status !== "skip") expect(result(report, id).status, `${id}: ${result(report, id).detail}`).toBe("pass");
    }
  }, 120_000);

  it("--skip-prompts runs no prompt turn and still passes every MUST check it can judge", async () => {
    const report = await check({ ...serve(), skipPrompts: true });
    expect(report.ok).toBe(true);
    expect(report.skipPrompts).toBe(true);
    const skipped = ids(report, "skip");
    for (const id of ["prompt.stop-reason", "cancel.turn", "cancel.permission", "prompt.resource-link"]) expect(skipped).toContain(id);
    expect(result(report, "cancel.turn").detail).toContain("--skip-prompts");
    expect(result(report, "init.version").status).toBe("pass");
    expect(result(report, "exit.stdin-eof").status).toBe("pass");
  }, 120_000);
});
