import { describe, expect, it } from "vitest";
import { conformanceChecks } from "../../../src/testing/index.js";
import { check, fixtureAgent, ids, result, tempDir } from "./helpers.js";

// The client tests' fixture agent (another author's SDK agent) with its misbehaviour flags.
// It is not fully conformant on its own, so each flag is judged against its own baseline:
// the flag must add exactly the expected failures. MCP checks are left out (this fixture
// never starts MCP servers, and judging that takes the full start-up bound).
const only = conformanceChecks.map((c) => c.id).filter((id) => !id.startsWith("mcp."));

function fixture(...flags: string[]) {
  return { command: process.execPath, args: [fixtureAgent, "--state", tempDir(), ...flags], only };
}

describe("conformance suite against the client tests' fixture agent", () => {
  // Where this fixture does what the spec leaves open, the suite reports it as informational:
  // it accepts relative cwds and media it did not advertise, and prompts after session/close.
  const known = ["prompt.audio-refused", "prompt.image-refused", "session.relative-cwd"];

  it("baseline (sessions persist with --state): no failure; the fixture's open-ended choices are informational", async () => {
    const report = await check(fixture());
    expect(ids(report, "fail")).toEqual([]);
    // cancel.turn may warn too: this fixture's turns are so short that the cancel can race the end (inconclusive).
    expect(ids(report, "warn").filter((id) => id !== "cancel.turn")).toEqual(known);
    expect(report.summary.informational.filter((id) => id !== "cancel.turn").sort()).toEqual(known);
    expect(report.ok).toBe(true);
    expect(result(report, "caps.session-close").detail).toContain("a later prompt for it got result");
  }, 90_000);

  // Each flag is judged on the checks it is about (fast: --only).
  const cases: [flag: string, id: string, status: "fail" | "warn"][] = [
    ["--garbage", "wire.stdout-json", "fail"],
    ["--early-update", "session.early-updates", "warn"],
    ["--ignore-eof", "exit.stdin-eof", "warn"],
    ["--grandchild", "exit.process-group", "warn"],
  ];
  for (const [flag, id, status] of cases) {
    it(`${flag}: ${id} ${status}`, async () => {
      const report = await check({ ...fixture(flag), only: [id] });
      expect(report.results.map((r) => [r.id, r.status])).toEqual([[id, status]]);
      expect(report.ok).toBe(status !== "fail");
    }, 90_000);
  }

  it("--v2: init.version fails and everything that needs a v1 session is skipped, saying why", async () => {
    const report = await check(fixture("--v2"));
    // It answers 2 to everything, in the v1 shape: not v2 either.
    expect(report.summary.violations).toEqual(["init.version", "v2.initialize"]);
    expect(result(report, "init.v2-negotiation").status).toBe("pass");
    expect(result(report, "v2.initialize").detail).toMatch(/info \{name, version\}/);
    expect(result(report, "init.version").detail).toContain("answered protocolVersion 2");
    expect(result(report, "session.new").status).toBe("skip");
    expect(result(report, "session.new").detail).toContain("does not speak ACP v1");
    // Process checks still run: the agent is judged on what it can be judged on.
    expect(result(report, "exit.stdin-eof").status).toBe("pass");
  }, 90_000);

  it("--silent-init: init.version fails after the timeout; the process checks still pass", async () => {
    const report = await check({ ...fixture("--silent-init"), timeoutMs: 1_500 });
    expect(report.summary.violations).toEqual(["init.version"]);
    expect(result(report, "init.version").detail).toContain("no answer within 1500 ms");
    expect(result(report, "exit.stdin-eof").status).toBe("pass");
    expect(result(report, "exit.process-group").status).toBe("pass");
  }, 90_000);

  it("--auth: sessions are skipped with the auth methods named, until an auth method is given", async () => {
    const refused = await check(fixture("--auth"));
    expect(result(refused, "session.new").status).toBe("skip");
    expect(result(refused, "session.new").detail).toContain("offered: token");
    const authenticated = await check({ ...fixture("--auth"), authMethod: "token" });
    expect(result(authenticated, "session.new").status).toBe("pass");
    expect(ids(authenticated, "fail")).toEqual([]);
    expect(ids(authenticated, "warn").filter((id) => id !== "cancel.turn")).toEqual(known);
  }, 90_000);
});
