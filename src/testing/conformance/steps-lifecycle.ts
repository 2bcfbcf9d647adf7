import { isAbsolute } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import type { Run } from "./run.js";
import { newSession } from "./steps-session.js";
import { isTurnContent, settle, textBlock } from "./turns.js";
import { describeOutcome, updateKind, type WireAgent } from "./wire.js";

/** session/list, close and delete on the running agent (each only when advertised). */
export async function checkSessionMethods(run: Run, agent: WireAgent): Promise<void> {
  if (run.wants("caps.session-list")) await checkList(run, agent);
  if (run.wants("caps.session-close")) await checkClose(run, agent);
  if (run.wants("caps.session-delete")) await checkDelete(run, agent);
}

interface Listed {
  ids: string[];
  problems: string[];
  error?: string;
}

/** Every page of session/list (at most 20), with shape problems. */
async function listSessions(run: Run, agent: WireAgent, cwd?: string): Promise<Listed> {
  const listed: Listed = { ids: [], problems: [] };
  let cursor: string | undefined;
  for (let page = 0; page < 20; page++) {
    const outcome = await agent.call(acp.methods.agent.session.list, { ...(cwd ? { cwd } : {}), ...(cursor ? { cursor } : {}) }, run.timeoutMs);
    if (outcome.kind !== "result") return { ...listed, error: describeOutcome(outcome) };
    const value = outcome.value as { sessions?: unknown; nextCursor?: unknown } | null;
    if (!Array.isArray(value?.sessions)) return { ...listed, error: `no sessions array: ${describeOutcome(outcome)}` };
    for (const [i, s] of (value.sessions as { sessionId?: unknown; cwd?: unknown }[]).entries()) {
      if (typeof s?.sessionId !== "string") listed.problems.push(`sessions[${i}].sessionId is not a string`);
      else listed.ids.push(s.sessionId);
      if (typeof s?.cwd !== "string" || !isAbsolute(s.cwd)) listed.problems.push(`sessions[${i}].cwd is not an absolute path (${JSON.stringify(s?.cwd)})`);
      else if (cwd !== undefined && s.cwd !== cwd) listed.problems.push(`the cwd filter ${cwd} returned a session of ${s.cwd}`);
    }
    if (typeof value.nextCursor !== "string" || value.nextCursor === "") break;
    cursor = value.nextCursor;
  }
  return listed;
}

async function checkList(run: Run, agent: WireAgent): Promise<void> {
  if (!run.advertises("sessionCapabilities.list")) return run.skip("caps.session-list", "sessionCapabilities.list is not advertised");
  const all = await listSessions(run, agent);
  const filtered = await listSessions(run, agent, run.cwd);
  const error = all.error ?? filtered.error;
  if (error !== undefined) return run.fail("caps.session-list", `session/list: ${error}`);
  const problems = [...new Set([...all.problems, ...filtered.problems])];
  if (problems.length > 0) return run.fail("caps.session-list", problems.slice(0, 5).join("; "));
  const found = run.sessionId !== undefined && filtered.ids.includes(run.sessionId);
  if (found) run.pass("caps.session-list", `${all.ids.length} session(s) listed; this run's session is listed under its cwd`);
  else run.warn("caps.session-list", `well-formed (${all.ids.length} session(s)), but this run's session ${run.sessionId ?? ""} is not listed under its cwd (after ${run.mainTurns} turn(s))`);
}

async function checkClose(run: Run, agent: WireAgent): Promise<void> {
  if (!run.advertises("sessionCapabilities.close")) return run.skip("caps.session-close", "sessionCapabilities.close is not advertised");
  const created = await newSession(run, agent);
  if (created.sessionId === undefined) return run.fail("caps.session-close", `could not create a session to close: ${describeOutcome(created.outcome)}`);
  const closed = await agent.call(acp.methods.agent.session.close, { sessionId: created.sessionId }, run.timeoutMs);
  if (closed.kind !== "result") return run.fail("caps.session-close", `session/close: ${describeOutcome(closed)}`);
  // Refusing a later prompt is allowed, not required ("Agents MAY return an error"): only reported. A refusing agent runs no turn.
  const after = await agent.call(acp.methods.agent.session.prompt, { sessionId: created.sessionId, prompt: [textBlock(run.prompts.text)] }, run.timeoutMs);
  const later = after.kind === "error" ? `a later prompt for it was refused (${describeOutcome(after)})` : `a later prompt for it got ${describeOutcome(after)} (allowed: the spec lets the agent refuse or not)`;
  run.pass("caps.session-close", `closed; ${later}`);
}

async function checkDelete(run: Run, agent: WireAgent): Promise<void> {
  if (!run.advertises("sessionCapabilities.delete")) return run.skip("caps.session-delete", "sessionCapabilities.delete is not advertised");
  const created = await newSession(run, agent);
  if (created.sessionId === undefined) return run.fail("caps.session-delete", `could not create a session to delete: ${describeOutcome(created.outcome)}`);
  const sessionId = created.sessionId;
  const canList = run.advertises("sessionCapabilities.list");
  const before = canList ? (await listSessions(run, agent)).ids.includes(sessionId) : undefined;
  const deleted = await agent.call(acp.methods.agent.session.delete, { sessionId }, run.timeoutMs);
  if (deleted.kind !== "result") return run.fail("caps.session-delete", `session/delete: ${describeOutcome(deleted)}`);
  if (!canList) return run.pass("caps.session-delete", "session/delete answered (not verified: session/list is not advertised)");
  const after = await listSessions(run, agent);
  if (after.ids.includes(sessionId)) run.fail("caps.session-delete", `session ${sessionId} is still listed after session/delete`);
  else run.pass("caps.session-delete", `deleted; no longer listed${before === false ? " (it was not listed before either: a fresh session without history)" : ""}`);
}

/** session/load and session/resume of the main session, each in a fresh launch (as an editor does after a restart). */
export async function checkReopen(run: Run): Promise<void> {
  for (const [id, capability, method] of [
    ["caps.load-session", "loadSession", acp.methods.agent.session.load],
    ["caps.session-resume", "sessionCapabilities.resume", acp.methods.agent.session.resume],
  ] as const) {
    if (!run.wants(id)) continue;
    if (!run.advertises(capability)) {
      run.skip(id, `${capability} is not advertised`);
      continue;
    }
    const sessionId = run.sessionId;
    if (sessionId === undefined) continue;
    const agent = await run.launchReady();
    if (!agent) {
      run.fail(id, "a second launch of the agent did not initialize");
      continue;
    }
    const from = run.log.nextSeq;
    const outcome = await agent.call(method, { sessionId, cwd: run.cwd, mcpServers: [] }, run.timeoutMs);
    const response = run.log.responseTo(method, from);
    if (outcome.kind !== "result" || !response) {
      run.fail(id, `${method} of session ${sessionId} (from an earlier launch, ${run.mainTurns} turn(s)): ${describeOutcome(outcome)}`);
    } else {
      await settle(run, agent);
      const before = run.log.updates(sessionId, from, response.seq).filter(isTurnContent);
      const late = run.log.updates(sessionId, response.seq + 1, run.log.nextSeq).filter(isTurnContent);
      if (id === "caps.load-session") judgeLoad(run, before.length, late.map(updateKind));
      else if (before.length > 0) run.fail(id, `session/resume replayed ${before.length} history update(s) (${[...new Set(before.map(updateKind))].join(", ")}); resume must not replay`);
      else run.pass(id, "resumed in a fresh launch without replaying history");
    }
    await agent.kill(run.exitBoundMs);
  }
}

function judgeLoad(run: Run, replayed: number, late: string[]): void {
  if (late.length > 0) run.fail("caps.load-session", `${late.length} history update(s) arrived after the session/load response (${[...new Set(late)].join(", ")}); replay must come first`);
  else if (run.mainTurns > 0 && replayed === 0) run.fail("caps.load-session", `session/load answered without replaying anything, although the session had ${run.mainTurns} turn(s)`);
  else if (run.mainTurns === 0) run.pass("caps.load-session", "loaded in a fresh launch; nothing to replay, as no prompt turn ran in the session (prompt checks were not run)");
  else run.pass("caps.load-session", `${replayed} history update(s) replayed before the answer (fresh launch)`);
}
