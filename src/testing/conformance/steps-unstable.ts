import type { Run } from "./run.js";
import { newSession } from "./steps-session.js";
import { describeOutcome, type CallOutcome, type WireAgent } from "./wire.js";

const UNKNOWN = "agentkit-check-no-such-session";

/** The unstable session methods, each only when advertised. */
export async function checkUnstableSessions(run: Run, agent: WireAgent, sessionId: string): Promise<void> {
  const gated = async (id: string, capability: string, body: () => Promise<void>): Promise<void> => {
    if (!run.wants(id)) return;
    if (!run.advertises(capability)) return run.skip(id, `not advertised (${capability})`);
    await body();
  };
  await gated("unstable.session-status", "sessionCapabilities.status", () => checkStatus(run, agent, sessionId));
  await gated("unstable.session-set-title", "sessionCapabilities.title", () => checkTitle(run, agent, sessionId));
  await gated("unstable.session-fork", "sessionCapabilities.fork", () => checkFork(run, agent, sessionId));
  await gated("unstable.session-archive", "sessionCapabilities.archive", () => checkArchive(run, agent));
  await gated("unstable.auth-status", "auth.status", () => checkAuthStatus(run, agent));
  await gated("unstable.providers-list", "providers", () => checkProviders(run, agent));
  if (run.wants("rpc.cancel-request")) await checkCancelRequest(run, agent);
}

async function checkProviders(run: Run, agent: WireAgent): Promise<void> {
  const id = "unstable.providers-list";
  const outcome = await agent.call("providers/list", {}, run.timeoutMs);
  const providers = resultField(outcome, "providers");
  if (!Array.isArray(providers)) return run.fail(id, `providers/list: ${describeOutcome(outcome)}; expected {providers: []}`);
  const bad = providers.findIndex((p: { providerId?: unknown; supported?: unknown; required?: unknown } | null) => typeof p?.providerId !== "string" || !Array.isArray(p.supported) || typeof p.required !== "boolean");
  if (bad >= 0) return run.fail(id, `providers[${bad}] lacks providerId / supported / required: ${JSON.stringify(providers[bad])}`);
  run.pass(id, `${providers.length} provider(s): ${providers.map((p: { providerId: string }) => p.providerId).join(", ")}`);
}

async function checkAuthStatus(run: Run, agent: WireAgent): Promise<void> {
  const id = "unstable.auth-status";
  const first = await agent.call("auth/status", {}, run.timeoutMs);
  const state = resultField(first, "state");
  if (typeof state !== "string" || state.length === 0) return run.fail(id, `auth/status: ${describeOutcome(first)}; expected {state}`);
  const second = await agent.call("auth/status", {}, run.timeoutMs);
  if (resultField(second, "state") !== state) return run.fail(id, `a second auth/status changed the answer: ${describeOutcome(second)} after state "${state}"`);
  run.pass(id, `state "${state}", the same twice`);
}

/** A stdio MCP server that never answers (node reading stdin): session/new cannot finish starting it. */
function silentMcpServer(): { name: string; command: string; args: string[]; env: [] } {
  return { name: "agentkit-check-silent", command: process.execPath, args: ["-e", "process.stdin.resume()"], env: [] };
}

async function checkCancelRequest(run: Run, agent: WireAgent): Promise<void> {
  const id = "rpc.cancel-request";
  const abort = new AbortController();
  const params = { cwd: run.cwd, mcpServers: [silentMcpServer()] };
  const answer = agent.connection.agent.request<{ sessionId?: unknown }>("session/new", params, { cancellationSignal: abort.signal }).then(
    (value): CallOutcome => ({ kind: "result", value }),
    (error: unknown): CallOutcome => ({ kind: "error", code: (error as { code?: number }).code, message: String((error as { message?: unknown }).message ?? error) }),
  );
  // Long enough for the agent to begin the request; an agent that answered already passes too.
  await Promise.race([answer, new Promise((resolve) => setTimeout(resolve, 500))]);
  abort.abort();
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([answer, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), run.cancelBoundMs)))]);
  clearTimeout(timer);
  if (outcome === undefined) return run.fail(id, `no answer within ${run.cancelBoundMs} ms of $/cancel_request`);
  const sessionId = resultField(outcome, "sessionId");
  if (typeof sessionId === "string") {
    await discard(run, agent, sessionId);
    return run.pass(id, "session/new answered with a session (it finished before the cancellation took effect)");
  }
  if (isError(outcome, -32800)) return run.pass(id, "answered -32800 Request cancelled");
  run.warn(id, `answered ${describeOutcome(outcome)}; expected a result or -32800`);
}

const isError = (outcome: CallOutcome, code: number): boolean => outcome.kind === "error" && outcome.code === code;
const resultField = (outcome: CallOutcome, field: string): unknown => (outcome.kind === "result" && typeof outcome.value === "object" && outcome.value !== null ? (outcome.value as Record<string, unknown>)[field] : undefined);

async function checkStatus(run: Run, agent: WireAgent, sessionId: string): Promise<void> {
  const id = "unstable.session-status";
  const live = await agent.call("session/status", { sessionId }, run.timeoutMs);
  if (resultField(live, "status") !== "open") return run.fail(id, `session/status of the open session: ${describeOutcome(live)}; expected status "open"`);
  const unknown = await agent.call("session/status", { sessionId: UNKNOWN }, run.timeoutMs);
  if (!isError(unknown, -32002)) return run.fail(id, `session/status of an unknown id: ${describeOutcome(unknown)}; expected -32002`);
  run.pass(id, "open for the live session, -32002 for an unknown id");
}

async function checkTitle(run: Run, agent: WireAgent, sessionId: string): Promise<void> {
  const id = "unstable.session-set-title";
  const set = await agent.call("session/set_title", { sessionId, title: "agentkit-acp check title" }, run.timeoutMs);
  const title = resultField(set, "title");
  if (typeof title !== "string" || title.length === 0) return run.fail(id, `session/set_title: ${describeOutcome(set)}; expected {title: string}`);
  const empty = await agent.call("session/set_title", { sessionId, title: "   " }, run.timeoutMs);
  if (!isError(empty, -32602)) return run.fail(id, `an empty title: ${describeOutcome(empty)}; expected -32602`);
  const unknown = await agent.call("session/set_title", { sessionId: UNKNOWN, title: "x" }, run.timeoutMs);
  if (!isError(unknown, -32002)) return run.fail(id, `an unknown session: ${describeOutcome(unknown)}; expected -32002`);
  run.pass(id, `stored as ${JSON.stringify(title)}; empty → -32602, unknown → -32002`);
}

async function checkFork(run: Run, agent: WireAgent, sessionId: string): Promise<void> {
  const id = "unstable.session-fork";
  const fork = await agent.call("session/fork", { sessionId, cwd: run.cwd, mcpServers: [] }, run.timeoutMs);
  const forkId = resultField(fork, "sessionId");
  if (typeof forkId !== "string" || forkId.length === 0) return run.fail(id, `session/fork: ${describeOutcome(fork)}; expected {sessionId}`);
  if (forkId === sessionId) return run.fail(id, "session/fork answered the source's own session id");
  const unknown = await agent.call("session/fork", { sessionId: UNKNOWN, cwd: run.cwd }, run.timeoutMs);
  await discard(run, agent, forkId);
  if (unknown.kind !== "error") return run.fail(id, `session/fork of an unknown id: ${describeOutcome(unknown)}; expected an error`);
  run.pass(id, `forked into ${forkId}; an unknown source → ${unknown.code === -32002 ? "-32002" : `${describeOutcome(unknown)} (not -32002, which the schema does not require here)`}`);
}

async function checkArchive(run: Run, agent: WireAgent): Promise<void> {
  const id = "unstable.session-archive";
  const created = await newSession(run, agent);
  if (created.sessionId === undefined) return run.skip(id, `no session to archive: ${describeOutcome(created.outcome)}`);
  const target = created.sessionId;
  try {
    const archived = await agent.call("session/archive", { sessionId: target }, run.timeoutMs);
    if (archived.kind !== "result") return run.fail(id, `session/archive: ${describeOutcome(archived)}`);
    const again = await agent.call("session/archive", { sessionId: target }, run.timeoutMs);
    if (again.kind !== "result") return run.fail(id, `archiving an archived session must succeed: ${describeOutcome(again)}`);
    const unknown = await agent.call("session/archive", { sessionId: UNKNOWN }, run.timeoutMs);
    if (!isError(unknown, -32002)) return run.fail(id, `session/archive of an unknown id: ${describeOutcome(unknown)}; expected -32002`);
    if (!run.advertises("sessionCapabilities.list")) return run.pass(id, "archive answered (session/list not advertised: the filter is not checked)");
    const listed = async (archivedFilter?: string): Promise<string[] | string> => {
      const outcome = await agent.call("session/list", { cwd: run.cwd, ...(archivedFilter ? { archived: archivedFilter } : {}) }, run.timeoutMs);
      const sessions = resultField(outcome, "sessions");
      return Array.isArray(sessions) ? sessions.map((s) => String((s as { sessionId?: unknown }).sessionId)) : describeOutcome(outcome);
    };
    const hidden = await listed();
    if (typeof hidden === "string" || hidden.includes(target)) return run.fail(id, `the default session/list still shows the archived session (${typeof hidden === "string" ? hidden : "listed"})`);
    const only = await listed("only");
    if (typeof only === "string" || !only.includes(target)) return run.fail(id, `session/list archived "only" misses the archived session (${typeof only === "string" ? only : "not listed"})`);
    const back = await agent.call("session/unarchive", { sessionId: target }, run.timeoutMs);
    const shown = await listed();
    if (back.kind !== "result" || typeof shown === "string" || !shown.includes(target)) return run.fail(id, `after session/unarchive (${describeOutcome(back)}) the default list does not show the session`);
    run.pass(id, "hidden by default, listed with archived: only, back after unarchive; unknown → -32002");
  } finally {
    await discard(run, agent, target);
  }
}

/** Deletes (else closes) a session the check made, where the agent allows. */
async function discard(run: Run, agent: WireAgent, sessionId: string): Promise<void> {
  if (run.advertises("sessionCapabilities.delete")) await agent.call("session/delete", { sessionId }, run.timeoutMs);
  else if (run.advertises("sessionCapabilities.close")) await agent.call("session/close", { sessionId }, run.timeoutMs);
}
