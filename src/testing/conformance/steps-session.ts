import * as acp from "@agentclientprotocol/sdk";
import type { Run } from "./run.js";
import { textBlock } from "./turns.js";
import { describeOutcome, updateKind, type CallOutcome, type WireAgent } from "./wire.js";

export interface NewSession {
  outcome: CallOutcome;
  sessionId: string | undefined;
  /** session/update lines for the new id that came before the session/new answer. */
  early: string[];
}

/** session/new, noting updates for the new session that arrive before its answer. */
export async function newSession(run: Run, agent: WireAgent, params: acp.NewSessionRequest = run.newSessionParams()): Promise<NewSession> {
  const from = run.log.nextSeq;
  const outcome = await agent.call(acp.methods.agent.session.new, params, run.timeoutMs);
  const value = outcome.kind === "result" ? (outcome.value as { sessionId?: unknown } | null) : null;
  const sessionId = typeof value?.sessionId === "string" && value.sessionId !== "" ? value.sessionId : undefined;
  if (sessionId === undefined) return { outcome, sessionId, early: [] };
  const response = run.log.responseTo("session/new", from);
  const early = response ? run.log.updates(sessionId, from, response.seq).map(updateKind) : [];
  return { outcome, sessionId, early };
}

/** The main session (session.new, session.early-updates, auth); false when no session could be made. */
export async function checkSessionNew(run: Run, agent: WireAgent): Promise<boolean> {
  const created = await newSession(run, agent);
  if (created.sessionId !== undefined) {
    run.sessionId = created.sessionId;
    run.pass("session.new", `session ${created.sessionId}`);
    if (created.early.length === 0) run.pass("session.early-updates", "no update for the session arrived before the session/new answer");
    else run.fail("session.early-updates", `${created.early.length} update(s) arrived before the session/new answer: ${created.early.join(", ")}`);
    return true;
  }
  const { outcome } = created;
  if (outcome.kind === "error" && outcome.code === -32000) {
    const methods = Array.isArray(run.init?.authMethods) ? (run.init.authMethods as { id?: unknown }[]).map((m) => String(m.id)).join(", ") : "";
    run.skip("session.new", `the agent requires authentication (-32000); log in first${methods ? ` or pass an auth method (offered: ${methods})` : ""}`);
    run.blocked = "the agent requires authentication; no session could be created";
    return false;
  }
  run.fail("session.new", outcome.kind === "result" ? `the answer has no sessionId string: ${describeOutcome(outcome)}` : `session/new: ${describeOutcome(outcome)}`);
  run.blocked = "session/new did not succeed (see session.new)";
  return false;
}

/** Relative cwd (informational) and unknown session id (any JSON-RPC error; the code is informational). */
export async function checkSessionErrors(run: Run, agent: WireAgent): Promise<void> {
  if (run.wants("session.relative-cwd")) {
    const outcome = await agent.call(acp.methods.agent.session.new, { cwd: "relative/dir", mcpServers: [] }, run.timeoutMs);
    if (outcome.kind === "error") run.pass("session.relative-cwd", `cwd "relative/dir" was refused (${describeOutcome(outcome)})`);
    else run.fail("session.relative-cwd", `cwd "relative/dir" was accepted (${describeOutcome(outcome)}); allowed, since the rule binds the client`);
    await discard(run, agent, outcome);
  }
  if (run.wantsAny("session.unknown-id", "session.unknown-id-code")) {
    // A conforming agent answers without running a turn, so this costs no tokens even with --skip-prompts.
    const outcome = await agent.call(acp.methods.agent.session.prompt, { sessionId: "agentkit-check-no-such-session", prompt: [textBlock(run.prompts.text)] }, run.timeoutMs);
    const what = "session/prompt for an unknown session id";
    if (outcome.kind === "error") {
      run.pass("session.unknown-id", `${what} was refused (${describeOutcome(outcome)})`);
      if (outcome.code === -32002) run.pass("session.unknown-id-code", `${what} was answered with -32002 Resource not found`);
      else run.fail("session.unknown-id-code", `${what} was answered with ${outcome.code}, not -32002 Resource not found; the spec fixes no code`);
    } else {
      run.fail("session.unknown-id", `${what}: ${describeOutcome(outcome)}`);
      run.skip("session.unknown-id-code", "no error was answered (see session.unknown-id)");
    }
  }
}

/** Removes a session this run should not have got (so it does not spoil session/list), where the agent allows. */
async function discard(run: Run, agent: WireAgent, outcome: CallOutcome): Promise<void> {
  const sessionId = outcome.kind === "result" ? (outcome.value as { sessionId?: unknown } | null)?.sessionId : undefined;
  if (typeof sessionId !== "string") return;
  if (run.advertises("sessionCapabilities.delete")) await agent.call(acp.methods.agent.session.delete, { sessionId }, run.timeoutMs);
  else if (run.advertises("sessionCapabilities.close")) await agent.call(acp.methods.agent.session.close, { sessionId }, run.timeoutMs);
}
