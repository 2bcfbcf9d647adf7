import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { expect } from "vitest";
import { agentFixture } from "../../support/fixture-agents.js";
import { runConformance, type CheckResult, type CheckStatus, type CheckVerdict, type ConformanceOptions, type ConformanceReport } from "../../../src/testing/index.js";

export const conformanceAgent = agentFixture("conformance-agent.mjs");
export const fixtureAgent = agentFixture("fixture-agent.mjs");
export const bin = new URL("../../../bin/agentkit-acp.js", import.meta.url).pathname;

import { tempDir } from "../../support/temp.js";
export { tempDir };

/** Generous bounds for a busy 2-core machine; the fixtures answer at once. */
export const bounds = { timeoutMs: 15_000, cancelBoundMs: 5_000, exitBoundMs: 3_000, settleMs: 50 } as const;

/**
 * Runs the suite with a marker in the agent's environment (inherited by everything it starts)
 * and checks afterwards that no process carrying the marker survived the run.
 */
export async function check(options: ConformanceOptions): Promise<ConformanceReport> {
  const marker = `AGENTKIT_CONFORMANCE_TEST=${randomUUID()}`;
  const [name, value] = marker.split("=") as [string, string];
  const report = await runConformance({ ...bounds, ...options, env: { ...(options.env ?? {}), [name]: value } });
  expect(await processesLeftWith(marker), "processes left behind by the run").toEqual([]);
  return report;
}

/** The conformance fixture with `flags` (and its own state directory, so load/resume work across launches). */
export function brokenAgent(...flags: string[]): ConformanceOptions {
  return { command: process.execPath, args: [conformanceAgent, "--state", tempDir(), ...flags] };
}

export function ids(report: ConformanceReport, status: CheckStatus): string[] {
  return report.results.filter((r) => r.status === status).map((r) => r.id).sort();
}

export function result(report: ConformanceReport, id: string): CheckResult {
  const found = report.results.find((r) => r.id === id);
  if (!found) throw new Error(`no result for ${id}`);
  return found;
}

/**
 * The processes carrying `marker` that are still alive after `withinMs` (pid and command line).
 * A process may take a moment to go after the agent's group ended: serve's orphan watchdog
 * (its own group) exits when it reads EOF, which a busy machine can delay; one that stays is a leak.
 */
export async function processesLeftWith(marker: string, withinMs = 5_000): Promise<string[]> {
  const deadline = Date.now() + withinMs;
  let pids = processesWith(marker);
  while (pids.length > 0 && Date.now() < deadline) {
    // No event exists for the exit of a process that is not our child: poll /proc.
    await new Promise((resolve) => setTimeout(resolve, 25));
    pids = processesWith(marker);
  }
  return pids.map((pid) => `${pid}: ${commandLine(pid)}`);
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").trim().slice(0, 200);
  } catch {
    return "(gone)";
  }
}

/** Pids of live processes whose environment contains `marker` (Linux /proc). */
export function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const state = readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]?.[0];
      if (state === "Z") continue;
      if (readFileSync(`/proc/${entry}/environ`, "utf8").split("\0").includes(marker)) pids.push(Number(entry));
    } catch {
      // gone, or not ours
    }
  }
  return pids;
}

/** One deliberately broken flag: the checks it is about, and the status and verdict `id` must get. */
export interface BrokenCase {
  flag: string;
  id: string;
  status: CheckStatus;
  verdict: CheckVerdict;
  /** Other checks the case runs (prerequisites such as a text turn); they must pass or skip. */
  also?: string[];
  /** Checks that must be skipped as a consequence. */
  skipped?: string[];
  detail?: RegExp;
  /** Shorter bounds for a case that sits through one (the check's wait is what is tested, not its length). */
  bounds?: Partial<Record<keyof typeof bounds, number>>;
}

/** Runs only the checks a case is about (fast) and asserts the result, its verdict and `ok`. */
export async function expectBroken(c: BrokenCase): Promise<void> {
  const only = [c.id, ...(c.also ?? []), ...(c.skipped ?? [])];
  const report = await check({ ...brokenAgent(c.flag), ...c.bounds, only });
  expect(report.results.map((r) => r.id).sort()).toEqual([...only].sort());
  const found = result(report, c.id);
  expect(found.status, found.detail).toBe(c.status);
  expect(found.verdict).toBe(c.verdict);
  if (c.status === "fail" || c.status === "warn") expect(found.fix).toBeTruthy();
  if (c.detail) expect(found.detail).toMatch(c.detail);
  for (const id of c.skipped ?? []) expect(result(report, id).status).toBe("skip");
  for (const id of c.also ?? []) expect(["pass", "skip"], `${id}: ${result(report, id).detail}`).toContain(result(report, id).status);
  expect(report.ok).toBe(c.verdict !== "violation");
  expect(report.summary.violations).toEqual(c.verdict === "violation" ? [c.id] : []);
}
