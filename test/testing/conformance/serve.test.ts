import { describe, expect, it } from "vitest";
import { formatConformanceReport } from "../../../src/testing/index.js";
import { bin, check, ids, result, tempDir } from "./helpers.js";
import { sandboxOrSkip } from "../../support/sandbox-engine.js";

const engine = await sandboxOrSkip("serve's sandbox report");

/** Our own agent: `agentkit-acp serve --model demo` with a throw-away state directory. */
function serve(...extra: string[]) {
  return { command: process.execPath, args: [bin, "serve", "--model", "demo", "--log-level", "warn", ...extra], env: { AGENTKIT_STATE_DIR: tempDir() } };
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
    // Asked for v2, serve (v1 by default) answers 1: negotiation right, nothing v2 to judge.
    expect(result(report, "init.v2-negotiation")).toMatchObject({ status: "pass", detail: expect.stringMatching(/answered protocolVersion 1/) });
    expect(result(report, "v2.initialize").status).toBe("skip");
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

  it("serve --protocol auto answers v2 to v2 (v2 shape, a v2 session) and v1 to v1; --protocol v2 fails init.version (a v1 client is refused)", async () => {
    const only = ["init.version", "init.v2-negotiation", "v2.initialize"];
    const auto = await check({ ...serve("--protocol", "auto"), only, skipPrompts: true });
    expect(auto.summary.violations).toEqual([]);
    for (const id of only) expect(result(auto, id).status, `${id}: ${result(auto, id).detail}`).toBe("pass");
    expect(result(auto, "v2.initialize").detail).toMatch(/agentkit-acp .*sessionId/);

    const v2Only = await check({ ...serve("--protocol", "v2"), only, skipPrompts: true });
    expect(result(v2Only, "init.version").status).toBe("fail");
    expect(result(v2Only, "init.v2-negotiation").status).toBe("pass");
    expect(result(v2Only, "v2.initialize").status).toBe("pass");
  }, 120_000);

  it.skipIf(!engine.available)("reports what the agent says about its sandbox as an informational line, not a check", async () => {
    const off = await check({ ...serve(), only: ["init.version"], skipPrompts: true });
    expect(off.agent.sandbox).toBe("the agent's commands run unsandboxed");
    const on = await check({ ...serve("--sandbox", "--sandbox-net", "allow=registry.npmjs.org:443"), only: ["init.version"], skipPrompts: true });
    expect(on.agent.sandbox).toBe("the agent's commands run sandboxed (bubblewrap; workspace writable; network: only registry.npmjs.org:443)");
    expect(formatConformanceReport(on)).toContain("sandbox: the agent's commands run sandboxed (bubblewrap; workspace writable; network: only registry.npmjs.org:443) (as the agent reports it; informational)");
    expect(on.results.map((r) => r.id)).toEqual(["init.version"]);
  }, 60_000);
});
