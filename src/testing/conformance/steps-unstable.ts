import type { Run } from "./run.js";
import { newSession } from "./steps-session.js";
import { acpSchema, ADVERTISED } from "./spec-ref.js";
import type { ConformanceCheck } from "./types.js";
import { describeOutcome, type CallOutcome, type WireAgent } from "./wire.js";

const UNSTABLE = "Unstable (schema.unstable.json): binds only an agent that advertises the capability. " + ADVERTISED;

/**
 * Checks of the unstable ACP v1 methods (schema.unstable.json of @agentclientprotocol/sdk 2.4),
 * each quoting the schema's description of the request it exercises. Each runs only when the
 * agent advertises the method; one not advertised is skipped and named.
 */
export const unstableChecks: readonly ConformanceCheck[] = [
  {
    id: "unstable.session-fork",
    group: "session",
    severity: "must",
    title: "session/fork (when advertised) answers a new session id; an unknown source gets -32002",
    spec: acpSchema(
      "schema.unstable.json",
      "ForkSessionRequest",
      "Creates a new session based on the context of an existing one, allowing operations like generating summaries without affecting the original session's history.",
      UNSTABLE,
    ),
    fix: "Answer session/fork with {sessionId} of a new session (not the source's), or stop advertising sessionCapabilities.fork.",
  },
  {
    id: "unstable.session-set-title",
    group: "session",
    severity: "must",
    title: "session/set_title (when advertised) answers the stored title; an empty title gets -32602, an unknown session -32002",
    spec: acpSchema(
      "schema.unstable.json",
      "SetSessionTitleRequest",
      "A session that does not exist gets `-32002`. The Agent responds only after it has stored the title. … The Agent rejects a title that fails its validation, including one that is empty after normalization, with `-32602`.",
      UNSTABLE,
    ),
    fix: "Store the title and answer {title}; validate it (-32602) and answer -32002 for unknown ids, or stop advertising sessionCapabilities.title.",
  },
  {
    id: "unstable.session-status",
    group: "session",
    severity: "must",
    title: "session/status (when advertised) reports open for a live session and -32002 for an unknown one",
    spec: acpSchema(
      "schema.unstable.json",
      "SessionStatusRequest",
      "`session/status` MUST NOT have side effects. The Agent does not load, resume, create, close, or change the session, and does not attach the requesting connection to it. A session the Agent does not know gets `-32002` with the requested `sessionId` in `data`.",
    ),
    fix: "Answer {status: \"open\"} for sessions in memory, \"saved\" for stored ones, and -32002 (RequestError.sessionNotFound) otherwise.",
  },
  {
    id: "unstable.session-archive",
    group: "session",
    severity: "must",
    title: "session/archive (when advertised) hides the session from the default session/list; archived: \"only\" shows it; unarchive brings it back",
    spec: acpSchema(
      "schema.unstable.json",
      "ArchiveSessionRequest",
      "Archiving hides the session from default `session/list` results. It keeps the session ID and saved history. If the session is active, the Agent MUST cancel any ongoing work and free the session's resources as if `session/close` had been called, then archive it. Archiving an archived session succeeds. A session that does not exist gets `-32002`.",
    ),
    fix: "Keep an archived flag per session, filter session/list by the archived parameter (default exclude), and answer -32002 for unknown ids.",
  },
  {
    id: "unstable.auth-status",
    group: "initialize",
    severity: "must",
    title: "auth/status (when advertised) answers a state, never -32000, and the same state twice (no side effects)",
    spec: acpSchema(
      "schema.unstable.json",
      "AuthStatusRequest",
      "Queries the agent's current authentication state without changing it. Agents MUST NOT reject it with `auth_required` (`-32000`), since Clients call it to learn whether authentication is required.",
    ),
    fix: "Answer auth/status with {state} from what is configured, without checking credentials against a server and without -32000; or stop advertising auth.status.",
  },
  {
    id: "unstable.providers-list",
    group: "initialize",
    severity: "must",
    title: "providers/list (when advertised) lists providers with providerId, supported protocols and required",
    spec: acpSchema(
      "schema.unstable.json",
      "ListProvidersResponse",
      "providers: Configurable providers with current routing info suitable for UI display. (ProviderInfo: providerId, supported, required — \"Whether this provider is mandatory and cannot be disabled via `providers/disable`.\")",
      `${UNSTABLE} providers/set and providers/disable change agent state and are not run by the check.`,
    ),
    fix: "Answer providers/list with {providers: [{providerId, supported, required, current}]}, or stop advertising providers.",
  },
  {
    id: "rpc.cancel-request",
    group: "json-rpc",
    severity: "info",
    title: "a session/new cancelled with $/cancel_request while an MCP server starts is still answered (a result or -32800) within the cancel bound",
    spec: acpSchema(
      "schema.json",
      "CancelRequestNotification",
      "Upon receiving this notification, the receiver: 1. MAY cancel the corresponding request activity and all nested activities 2. MAY send any pending notifications. 3. MUST send one of these responses for the original request: - Valid response with appropriate data (partial results or cancellation marker) - Error response with code `-32800` (Cancelled)",
      "The MUST is to answer the original request at all; the time bound is the check's own, and an agent may ignore `$/` notifications (\"If an agent or client receives notifications starting with '$/' it is free to ignore the notification.\"), so a late answer is reported, not counted against the agent.",
    ),
    fix: "Honour the handler's AbortSignal (the SDK aborts it on $/cancel_request): stop slow work such as MCP server start-up, free what was started, and throw the signal's reason (-32800).",
  },
];

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
  if (!isError(unknown, -32002)) return run.fail(id, `session/fork of an unknown id: ${describeOutcome(unknown)}; expected -32002`);
  run.pass(id, `forked into ${forkId}; an unknown source → -32002`);
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
