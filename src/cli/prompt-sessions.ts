import { AcpClient, type AcpAgentConfig, type AcpSession } from "../acp/client/index.js";
import { EXIT, type PromptArgs } from "./prompt-args.js";
import { describeFailure } from "./prompt-render.js";
import type { CliIo } from "./io.js";
import { stripControls } from "./terminal-safe.js";

/** `prompt --list | --archive ID | --unarchive ID`: one session-management call, then exit. */
export async function runSessionAction(io: CliIo, args: PromptArgs, config: AcpAgentConfig): Promise<number> {
  let client: AcpClient | undefined;
  try {
    client = await AcpClient.start(config);
    if (args.archive !== undefined) {
      await client.archiveSession(args.archive);
      io.stderr.write(`archived ${args.archive}\n`);
      return EXIT.endTurn;
    }
    if (args.unarchive !== undefined) {
      await client.unarchiveSession(args.unarchive);
      io.stderr.write(`unarchived ${args.unarchive}\n`);
      return EXIT.endTurn;
    }
    let cursor: string | undefined;
    let count = 0;
    do {
      const page = await client.listSessions({ cwd: args.cwd, ...(cursor !== undefined ? { cursor } : {}), ...(args.archived ? { archived: args.archived } : {}) });
      for (const s of page.sessions) {
        count += 1;
        if (args.json) {
          io.stdout.write(`${JSON.stringify({ type: "session", sessionId: s.sessionId, title: s.title ?? null, updatedAt: s.updatedAt ?? null, archived: s.archived === true, cwd: s.cwd })}\n`);
        } else {
          const mark = s.archived === true ? " [archived]" : "";
          const title = s.title == null ? "(untitled)" : args.raw ? s.title : stripControls(s.title);
          io.stdout.write(`${stripControls(s.sessionId)}  ${s.updatedAt ?? "-"}  ${title}${mark}\n`);
        }
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    if (count === 0 && !args.json) io.stderr.write(`(no sessions in ${args.cwd})\n`);
    return EXIT.endTurn;
  } catch (error) {
    io.stderr.write(`agentkit-acp prompt: ${describeFailure(error)}\n`);
    return EXIT.error;
  } finally {
    await client?.close();
  }
}

/** At most this long `prompt --session` waits for a dead instance's lease on the session to run out. */
const LEASE_WAIT_MS = 30_000;

/**
 * `--session ID` right after a failover: the dead instance's lease runs out by itself, at the
 * time the refusal names, so wait for that (bounded) instead of failing at once. A lease renewed
 * meanwhile (a later expiry) has a live holder: that refusal stands.
 */
export async function continueSessionWhenFree(client: AcpClient, sessionId: string, onWait: (until: string) => void, maxWaitMs = LEASE_WAIT_MS): Promise<AcpSession> {
  const deadline = Date.now() + maxWaitMs;
  let seen: number | undefined;
  for (;;) {
    try {
      return await client.continueSession(sessionId);
    } catch (error) {
      const expiresAt = leaseExpiry(error);
      const until = expiresAt === undefined ? NaN : Date.parse(expiresAt);
      if (Number.isNaN(until) || (seen !== undefined && until > seen) || until > deadline) throw error;
      if (seen === undefined) onWait(expiresAt!);
      seen = until;
      await new Promise((resolve) => setTimeout(resolve, Math.min(Math.max(until - Date.now(), 0) + 250, deadline - Date.now())));
      if (Date.now() >= deadline) throw error;
    }
  }
}

/** `leaseExpiresAt` of a "session active elsewhere" refusal. */
function leaseExpiry(error: unknown): string | undefined {
  const e = error as { code?: unknown; data?: { reason?: unknown; leaseExpiresAt?: unknown } } | null;
  return typeof e === "object" && e !== null && e.code === -32600 && e.data?.reason === "session_active_elsewhere" && typeof e.data.leaseExpiresAt === "string" ? e.data.leaseExpiresAt : undefined;
}
