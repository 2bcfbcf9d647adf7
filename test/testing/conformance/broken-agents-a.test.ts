import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { brokenAgent, check, expectBroken, ids, result, type BrokenCase } from "./helpers.js";

// Each flag of the conformance fixture breaks one rule; a case runs only the checks it is
// about (--only) and asserts the level the spec gives that rule: a MUST is a violation, a
// SHOULD a recommendation, an info check only informs and never fails the run.
const cases: BrokenCase[] = [
  { flag: "--v2", id: "init.version", status: "fail", verdict: "violation" },
  { flag: "--no-init-gate", id: "init.gate", status: "warn", verdict: "informational", detail: /served .*the rule binds the client/ },
  { flag: "--bad-caps", id: "init.capabilities", status: "fail", verdict: "violation" },
  { flag: "--no-agent-info", id: "init.agent-info", status: "fail", verdict: "recommendation" },
  { flag: "--unknown-method-ok", id: "rpc.unknown-method", status: "fail", verdict: "recommendation" },
  { flag: "--lenient-params", id: "rpc.invalid-params", status: "warn", verdict: "informational" },
  { flag: "--crash-on-garbage", id: "rpc.garbage-input", status: "warn", verdict: "informational" },
  { flag: "--stdout-noise", id: "wire.stdout-json", status: "fail", verdict: "violation" },
  { flag: "--bad-update", id: "wire.update-schema", status: "fail", verdict: "violation", also: ["prompt.stop-reason"] },
  { flag: "--early-update", id: "session.early-updates", status: "warn", verdict: "informational" },
  { flag: "--relative-cwd-ok", id: "session.relative-cwd", status: "warn", verdict: "informational", detail: /accepted/ },
  { flag: "--wrong-session-error", id: "session.unknown-id-code", status: "warn", verdict: "informational", also: ["session.unknown-id"], detail: /-32603, not -32002/ },
  { flag: "--bad-stop-reason", id: "prompt.stop-reason", status: "fail", verdict: "violation" },
  { flag: "--late-update", id: "prompt.update-order", status: "fail", verdict: "violation" },
];

describe("conformance suite against a conformant agent and one that behaves as the vendors do", () => {
  it("passes a conformant SDK agent with no failure and no warning, exercising cancel during a real permission request", async () => {
    const report = await check(brokenAgent());
    expect(ids(report, "fail")).toEqual([]);
    expect(ids(report, "warn")).toEqual([]);
    expect(report.ok).toBe(true);
    // The fixture advertises none of the unstable methods: each is skipped, naming its capability;
    // asked for v2 it answers 1 (v1 only), so there is no v2 to judge.
    expect(result(report, "init.v2-negotiation").status).toBe("pass");
    expect(ids(report, "skip")).toEqual([
      "mcp.acp",
      "mcp.http",
      "mcp.sse",
      "prompt.audio",
      "prompt.embedded-context-refused",
      "prompt.image",
      "unstable.auth-status",
      "unstable.logout",
      "unstable.providers-disable",
      "unstable.providers-list",
      "unstable.providers-set",
      "unstable.session-archive",
      "unstable.session-fork",
      "unstable.session-set-title",
      "unstable.session-status",
      "v2.initialize",
    ]);
    expect(result(report, "cancel.turn").detail).toMatch(/stopReason "cancelled" \d+ ms after session\/cancel/);
    expect(result(report, "cancel.permission").detail).toMatch(/stopReason "cancelled" \d+ ms after session\/cancel, sent while permission for "Write acp-check.txt" was pending/);
    expect(result(report, "caps.load-session").detail).toMatch(/^[1-9]\d* history update\(s\) replayed/);
  }, 90_000);

  it("the vendors' behaviour where the spec leaves it open (-32603 for an unknown session, unadvertised media accepted, …) fails no check", async () => {
    const report = await check(brokenAgent("--vendor-like"));
    expect(ids(report, "fail")).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.summary.violations).toEqual([]);
    expect(report.summary.recommendations).toEqual([]);
    expect([...report.summary.informational].sort()).toEqual(["exit.stdin-eof", "init.gate", "prompt.audio-refused", "prompt.image-refused", "session.relative-cwd", "session.unknown-id-code"]);
    expect(result(report, "session.unknown-id").status).toBe("pass");
    expect(result(report, "session.unknown-id").detail).toContain("-32603");
    expect(result(report, "exit.process-group").status).toBe("skip");
  }, 90_000);
});

describe("conformance suite against deliberately broken agents (part 1)", () => {
  for (const c of cases) it(`${c.flag}: ${c.id} ${c.status} (${c.verdict})`, () => expectBroken(c), 60_000);
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
