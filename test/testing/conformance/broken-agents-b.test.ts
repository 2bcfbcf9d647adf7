import { describe, it } from "vitest";
import { expectBroken, type BrokenCase } from "./helpers.js";

// Part 2: turn, capability and process rules (see part 1 for the method).
const cases: BrokenCase[] = [
  { flag: "--accept-image", id: "prompt.image-refused", status: "warn", verdict: "informational", detail: /accepted although promptCapabilities\.image is not advertised/ },
  { flag: "--ignore-cancel", id: "cancel.turn", status: "fail", verdict: "violation", skipped: ["cancel.next-prompt"], detail: /stopReason "end_turn" \d+ ms after session\/cancel; the agent kept working/ },
  { flag: "--cancel-error", id: "cancel.turn", status: "fail", verdict: "violation", skipped: ["cancel.next-prompt"] },
  // codex-acp with a tool-calling model: the kit's own default rejection ends the next turn
  // "cancelled"; that says nothing about the agent's cancel handling, so it is no violation.
  { flag: "--tool-every-prompt", id: "cancel.next-prompt", status: "skip", verdict: "skipped", also: ["cancel.turn"], detail: /^inconclusive: the turn ended with stopReason "cancelled" after the agent asked permission for "Run ls" and the kit rejected it/ },
  { flag: "--permission-ignores-cancel", id: "cancel.permission", status: "fail", verdict: "violation", detail: /stopReason "end_turn" \d+ ms after session\/cancel/ },
  { flag: "--unadvertised-fs", id: "caps.client-methods", status: "fail", verdict: "violation", also: ["prompt.stop-reason"] },
  // mcp.stdio waits up to timeoutMs (at most 10 s) for a contact that never comes: 4 s is enough to see it fail.
  { flag: "--ignore-mcp", id: "mcp.stdio", status: "fail", verdict: "recommendation", bounds: { timeoutMs: 4_000 } },
  { flag: "--load-late", id: "caps.load-session", status: "fail", verdict: "violation", also: ["prompt.stop-reason"] },
  { flag: "--resume-replays", id: "caps.session-resume", status: "fail", verdict: "violation", also: ["prompt.stop-reason"] },
  { flag: "--close-keeps", id: "caps.session-close", status: "pass", verdict: "ok", detail: /a later prompt for it got .*allowed/ },
  { flag: "--delete-keeps", id: "caps.session-delete", status: "fail", verdict: "violation" },
  { flag: "--list-bad", id: "caps.session-list", status: "fail", verdict: "violation" },
  // This agent never exits on EOF, so the check sits through the whole exit bound: 1 s shows it as well as 3 s.
  { flag: "--no-exit-on-eof", id: "exit.stdin-eof", status: "warn", verdict: "informational", skipped: ["exit.process-group"], bounds: { exitBoundMs: 1_000 } },
  { flag: "--orphan", id: "exit.process-group", status: "warn", verdict: "informational", detail: /1 process\(es\) of its group still run .*setInterval/ },
];

describe("conformance suite against deliberately broken agents (part 2)", () => {
  for (const c of cases) it(`${c.flag}: ${c.id} ${c.status} (${c.verdict})`, () => expectBroken(c), 60_000);
});
