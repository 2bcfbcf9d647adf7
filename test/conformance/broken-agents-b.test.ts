import { describe, expect, it } from "vitest";
import { brokenAgent, check, ids, result } from "./helpers.js";

// Part 2: turn, capability and process rules (see part 1 for the method).
const cases: [flag: string, failing: string[], skipped?: string[], detail?: RegExp][] = [
  ["--accept-image", ["prompt.image-refused"]],
  ["--ignore-cancel", ["cancel.turn"], ["cancel.next-prompt"], /stopReason "end_turn" \d+ ms after session\/cancel; the agent kept working/],
  ["--cancel-error", ["cancel.turn"], ["cancel.next-prompt"]],
  ["--permission-ignores-cancel", ["cancel.permission"]],
  ["--unadvertised-fs", ["caps.client-methods"]],
  ["--ignore-mcp", ["mcp.stdio"]],
  ["--load-late", ["caps.load-session"]],
  ["--resume-replays", ["caps.session-resume"]],
  ["--close-keeps", ["caps.session-close"]],
  ["--delete-keeps", ["caps.session-delete"]],
  ["--list-bad", ["caps.session-list"]],
  ["--no-exit-on-eof", ["exit.stdin-eof"], ["exit.process-group"]],
  ["--orphan", ["exit.process-group"], [], /1 process\(es\) of its group still run .*setInterval/],
];

describe("conformance suite against deliberately broken agents (part 2)", () => {
  for (const [flag, failing, skipped = [], detail] of cases) {
    it(`${flag} fails ${failing.join(", ")}`, async () => {
      const report = await check(brokenAgent(flag));
      expect(ids(report, "fail")).toEqual(failing);
      for (const id of skipped) expect(result(report, id).status).toBe("skip");
      if (detail) expect(result(report, failing[0] as string).detail).toMatch(detail);
      const musts = failing.filter((id) => result(report, id).severity === "must");
      expect(report.summary.mustFailures).toEqual(musts);
      expect(report.ok).toBe(musts.length === 0);
    }, 90_000);
  }
});
