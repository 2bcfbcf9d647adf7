import * as acp from "@agentclientprotocol/sdk/unstable";
import type { Link } from "./link.js";
import type { AcpSession } from "./session.js";

/**
 * Reattaches open sessions to a freshly spawned agent: `session/resume` when advertised,
 * else `session/load` (its replay is not re-delivered to listeners). Returns the ids that
 * came back; the others fail their next call with the agent's error.
 */
export async function recoverSessions(
  link: Link,
  sessions: Iterable<AcpSession>,
  mcpServersOf: (sessionId: string) => acp.McpServer[],
  timeoutMs: number,
  /** Keep retrying a refused re-attach until this long has passed (0: one try). */
  retryForMs = 0,
): Promise<string[]> {
  const deadline = Date.now() + retryForMs;
  const caps = link.init.agentCapabilities;
  const canResume = caps?.sessionCapabilities?.resume != null;
  const canLoad = caps?.loadSession === true;
  const recovered: string[] = [];
  for (const session of sessions) {
    const params = {
      sessionId: session.sessionId,
      cwd: session.info.cwd,
      additionalDirectories: session.info.additionalDirectories,
      mcpServers: mcpServersOf(session.sessionId),
    };
    if (await attachWithRetry(() => attach(link, session, params, canResume, canLoad, timeoutMs), deadline)) recovered.push(session.sessionId);
  }
  return recovered;
}

/**
 * Retries while the agent refuses for a reason that can pass (another instance still holds the
 * session's lease until it expires); not for "no such session" or bad parameters.
 */
async function attachWithRetry(attempt: () => Promise<boolean>, deadline: number): Promise<boolean> {
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      const code = error instanceof acp.RequestError ? error.code : undefined;
      const final = code === -32002 || code === -32602 || !(error instanceof acp.RequestError);
      if (final || Date.now() + 500 > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

async function attach(
  link: Link,
  session: AcpSession,
  params: acp.LoadSessionRequest,
  canResume: boolean,
  canLoad: boolean,
  timeoutMs: number,
): Promise<boolean> {
  if (canResume) {
    session.applyState((await link.request(acp.methods.agent.session.resume, params, { timeoutMs })) ?? {});
    return true;
  }
  if (!canLoad) return false;
  session.suppressUpdates = true;
  try {
    session.applyState((await link.request(acp.methods.agent.session.load, params, { timeoutMs })) ?? {});
    // Replay notifications dispatched just before the answer are still suppressed.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    session.suppressUpdates = false;
  }
  return true;
}
