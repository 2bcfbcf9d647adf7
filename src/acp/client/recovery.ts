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
): Promise<string[]> {
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
    try {
      if (canResume) {
        session.applyState((await link.request(acp.methods.agent.session.resume, params, { timeoutMs })) ?? {});
      } else if (canLoad) {
        session.suppressUpdates = true;
        try {
          session.applyState((await link.request(acp.methods.agent.session.load, params, { timeoutMs })) ?? {});
          // Replay notifications dispatched just before the answer are still suppressed.
          await new Promise((resolve) => setImmediate(resolve));
        } finally {
          session.suppressUpdates = false;
        }
      } else {
        continue;
      }
      recovered.push(session.sessionId);
    } catch {
      // Left unrecovered: the agent will answer its next prompt with an error.
    }
  }
  return recovered;
}
