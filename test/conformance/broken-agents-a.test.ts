import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { brokenAgent, check, ids, result } from "./helpers.js";

// Each flag of the conformance fixture breaks one rule: the suite must fail exactly that check
// (the fixture without flags passes everything, so any other failure is a false alarm).
const cases: [flag: string, failing: string[]][] = [
  ["--v2", ["init.version"]],
  ["--no-init-gate", ["init.gate"]],
  ["--bad-caps", ["init.capabilities"]],
  ["--unknown-method-ok", ["rpc.unknown-method"]],
  ["--lenient-params", ["rpc.invalid-params"]],
  ["--crash-on-garbage", ["rpc.garbage-input"]],
  ["--stdout-noise", ["wire.stdout-json"]],
  ["--bad-update", ["wire.update-schema"]],
  ["--early-update", ["session.early-updates"]],
  ["--relative-cwd-ok", ["session.relative-cwd"]],
  ["--wrong-session-error", ["session.unknown-id"]],
  ["--bad-stop-reason", ["prompt.stop-reason"]],
  ["--late-update", ["prompt.update-order"]],
];

describe("conformance suite against deliberately broken agents (part 1)", () => {
  it("passes a conformant SDK agent with no failure and no warning", async () => {
    const report = await check(brokenAgent());
    expect(ids(report, "fail")).toEqual([]);
    expect(ids(report, "warn")).toEqual([]);
    expect(report.ok).toBe(true);
    expect(ids(report, "skip")).toEqual(["mcp.http", "mcp.sse", "prompt.audio", "prompt.embedded-context-refused", "prompt.image"]);
    expect(result(report, "cancel.turn").detail).toMatch(/stopReason "cancelled" \d+ ms after session\/cancel/);
    expect(result(report, "caps.load-session").detail).toMatch(/^[1-9]\d* history update\(s\) replayed/);
  }, 90_000);

  it("--no-agent-info only warns (init.agent-info is informational)", async () => {
    const report = await check(brokenAgent("--no-agent-info"));
    expect(ids(report, "fail")).toEqual([]);
    expect(ids(report, "warn")).toEqual(["init.agent-info"]);
    expect(report.ok).toBe(true);
  }, 90_000);

  for (const [flag, failing] of cases) {
    it(`${flag} fails ${failing.join(", ")}`, async () => {
      const report = await check(brokenAgent(flag));
      expect(ids(report, "fail")).toEqual(failing);
      const failed = result(report, failing[0] as string);
      expect(failed.fix).toBeTruthy();
      expect(report.ok).toBe(failed.severity !== "must");
    }, 90_000);
  }
});

describe("--skip-prompts", () => {
  it("runs no prompt turn at all (the agent's saved histories stay empty) and skips the prompt checks", async () => {
    const options = brokenAgent();
    const stateDir = options.args?.[2] as string;
    const report = await check({ ...options, skipPrompts: true });
    expect(ids(report, "fail")).toEqual([]);
    expect(result(report, "prompt.stop-reason").status).toBe("skip");
    expect(result(report, "caps.load-session").status).toBe("pass");
    const sessions = JSON.parse(readFileSync(join(stateDir, "sessions.json"), "utf8")) as [string, { history: unknown[] }][];
    expect(sessions.length).toBeGreaterThan(0);
    expect(sessions.flatMap(([, s]) => s.history)).toEqual([]);
  }, 90_000);
});
