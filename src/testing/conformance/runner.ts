import type { Run as RunType } from "./run.js";
import { Run } from "./run.js";
import { checkGarbageInput, checkExit, checkWholeRun } from "./steps-exit.js";
import { checkInitGate, checkInitialize, checkRpcErrors, judgeGateCrash } from "./steps-init.js";
import { checkReopen, checkSessionMethods } from "./steps-lifecycle.js";
import { checkMcp } from "./steps-mcp.js";
import { checkPrompts } from "./steps-prompt.js";
import { checkSessionErrors, checkSessionNew } from "./steps-session.js";
import { checkUnstableSessions } from "./steps-unstable.js";
import { checkProtocolV2 } from "./steps-v2.js";
import { checkStateChanging } from "./steps-unstable-state.js";
import type { ConformanceOptions, ConformanceReport } from "./types.js";
import type { WireAgent } from "./wire.js";

/**
 * Runs the ACP v1 conformance suite against an agent launched over stdio and reports each
 * check. Every process it starts is ended (with its process group) before this resolves.
 * Prompt checks send real prompts: an agent backed by a paid model spends tokens unless
 * `skipPrompts` is set.
 */
export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  if (options.shellLine === undefined && !options.command) throw new TypeError("runConformance needs a command or a shellLine");
  const run = new Run(options);
  try {
    const gate = await checkInitGate(run, run.launch());
    let agent = gate.agent;
    const v1 = await checkInitialize(run, agent);
    judgeGateCrash(run, gate.crashed, run.init !== undefined);
    // A fresh launch asked for v2, when initialize was answered at all (a v2-only agent refuses v1 with an error).
    if (run.initAnswered) await checkProtocolV2(run);
    if (v1) await againstSession(run, agent);
    agent = await checkGarbageInput(run, agent);
    await checkExit(run, agent);
    if (v1 && run.sessionId !== undefined) await checkReopen(run);
    // Last, in a launch of their own: they sign out / reroute providers (only with changeState).
    if (v1 && run.blocked === undefined) await checkStateChanging(run);
    // Whole-run checks need every process ended, so the SDK has handled all that was read.
    await Promise.all(run.agents.map((a) => a.kill(run.exitBoundMs)));
    checkWholeRun(run);
    return run.finish();
  } finally {
    await run.dispose();
  }
}

async function againstSession(run: RunType, agent: WireAgent): Promise<void> {
  await checkRpcErrors(run, agent);
  if (!(await run.authenticate(agent))) {
    run.blocked = "authenticate with the given method failed";
    return;
  }
  if (!(await checkSessionNew(run, agent)) || run.sessionId === undefined) return;
  await checkSessionErrors(run, agent);
  await checkPrompts(run, agent, run.sessionId);
  await checkMcp(run, agent);
  await checkUnstableSessions(run, agent, run.sessionId);
  await checkSessionMethods(run, agent);
}
