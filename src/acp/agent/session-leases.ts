import { RequestError } from "@agentclientprotocol/sdk/unstable";
import type { Logger } from "../../core/index.js";
import { errorMessage } from "../../core/index.js";
import type { LeaseHolder, SessionLease, SessionLeases } from "../../store/index.js";

/** `data.reason` of the JSON-RPC error for a session that runs on another instance. */
export const SESSION_ACTIVE_ELSEWHERE = "session_active_elsewhere";

/**
 * -32600 for a session whose lease another instance holds: the client should retry once the
 * session is closed there or the lease has expired (a dead instance's lease runs out by itself).
 */
export function sessionActiveElsewhere(sessionId: string, holder: LeaseHolder | undefined): RequestError {
  const until = holder?.expiresAt === undefined ? "" : ` (its lease runs until ${holder.expiresAt} unless renewed)`;
  return new RequestError(
    -32600,
    `Invalid request: session ${sessionId} is active on another instance${until}; retry when it is closed there or its lease has expired`,
    { sessionId, reason: SESSION_ACTIVE_ELSEWHERE, ...(holder?.expiresAt !== undefined ? { leaseExpiresAt: holder.expiresAt } : {}) },
  );
}

/** Takes the session's lease or throws `sessionActiveElsewhere`. */
export async function takeSessionLease(leases: SessionLeases, sessionId: string, logger: Logger): Promise<SessionLease> {
  const attempt = await leases.acquire(sessionId).catch((error: unknown) => {
    throw RequestError.internalError({ details: errorMessage(error) }, `session store: cannot take the session's lease: ${errorMessage(error)}`);
  });
  if (attempt.acquired) return attempt.lease;
  logger.info("session is leased by another instance", { sessionId, holder: attempt.holder, expiresAt: attempt.expiresAt });
  throw sessionActiveElsewhere(sessionId, attempt);
}

/** Throws `sessionActiveElsewhere` when another instance holds the session (for requests about a session not open here). */
export async function refuseIfLeasedElsewhere(leases: SessionLeases | undefined, sessionId: string): Promise<void> {
  if (!leases) return;
  const holder = await leases.holderOf(sessionId).catch(() => undefined); // unknown holder: answer as for any session not open here
  if (holder && holder.holder !== leases.holder) throw sessionActiveElsewhere(sessionId, holder);
}

/** `data.reason` of the JSON-RPC error for a session closed here because its lease was lost. */
export const SESSION_LEASE_LOST = "session_lease_lost";

/**
 * -32600 for a prompt to a session this instance closed because it lost the session's lease (it
 * could not renew it in time, e.g. the database was away): the session still exists; the client
 * opens it again (and is told if it now runs elsewhere).
 */
export function sessionLeaseLost(sessionId: string): RequestError {
  return new RequestError(
    -32600,
    `Invalid request: session ${sessionId} was closed on this instance because its lease could not be renewed in time; open it again with session/resume or session/load`,
    { sessionId, reason: SESSION_LEASE_LOST },
  );
}
