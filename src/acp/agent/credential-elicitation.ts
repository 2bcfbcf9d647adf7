import type { Logger } from "../../core/index.js";
import { errorMessage, formatMs, newId } from "../../core/index.js";
import type { AcpCredentialEntry } from "./auth.js";
import type { AcpClientHandle } from "./client-handle.js";

/** Default lifetime of the key page (`AcpHeadlessRuntime.builder().keyPage`). */
export const DEFAULT_KEY_PAGE_LIFETIME_MS = 10 * 60_000;

/** How asking for a credential ended; anything but `stored` leaves the prompt blocked. */
export type CredentialOutcome =
  | { kind: "stored" }
  /** The human declined or dismissed the URL (`reason` from the client's `_meta.reason`). */
  | { kind: "declined"; action: string; reason: string | undefined }
  /** The turn was cancelled (session/cancel, or the prompt request was cancelled). */
  | { kind: "cancelled" }
  | { kind: "expired"; lifetimeMs: number }
  /** The client answered the request with an error (or storing the key failed). */
  | { kind: "failed"; reason: string };

/**
 * Asks the human for a missing credential out of band: opens the one-shot key page, sends
 * `elicitation/create` (mode url, scoped to the session) with its URL, waits — unbounded but for
 * the page's lifetime, since a human is waited on — for the key, stores it through `entry`, then
 * sends `elicitation/complete`. Aborting `signal` closes the page at once.
 */
export async function elicitCredential(
  client: AcpClientHandle,
  entry: AcpCredentialEntry,
  options: { sessionId: string; signal: AbortSignal; lifetimeMs: number; logger: Logger },
): Promise<CredentialOutcome> {
  // Loaded on use: it pulls in node:http (~8 ms of start-up) and few sessions ever need it.
  const { openKeyPage } = await import("./key-page.js");
  const page = await openKeyPage({ label: entry.label, lifetimeMs: options.lifetimeMs });
  const aborted = new Promise<"aborted">((resolve) => {
    if (options.signal.aborted) resolve("aborted");
    else options.signal.addEventListener("abort", () => resolve("aborted"), { once: true });
  });
  try {
    const elicitationId = newId("key");
    const message =
      `The model needs ${entry.label}. Open this page on this machine and paste the key there: ` +
      `it goes to the agent directly, not through the editor. The page closes in ${formatMs(options.lifetimeMs)}.`;
    options.logger.info("asking for a key through the client (URL elicitation)", { sessionId: options.sessionId, elicitationId });
    const asked = client.elicit({ mode: "url", sessionId: options.sessionId, elicitationId, url: page.url, message }, options.signal).then((answer) => ({ kind: "answer" as const, answer }));
    asked.catch(() => undefined); // a key typed before the client answered ends the wait; its late failure is moot
    const first = await Promise.race([asked, aborted, page.outcome]);
    if (first === "aborted") return { kind: "cancelled" };
    if (first.kind === "answer" && first.answer.action !== "accept") {
      const reason = first.answer._meta?.reason;
      return { kind: "declined", action: first.answer.action, reason: typeof reason === "string" ? reason : undefined };
    }
    // Accept means the human agreed to open the page; the key arrives (or not) on the page.
    const outcome = first.kind !== "answer" ? first : await Promise.race([page.outcome, aborted]);
    if (outcome === "aborted" || outcome.kind === "closed") return { kind: "cancelled" };
    if (outcome.kind === "expired") return { kind: "expired", lifetimeMs: options.lifetimeMs };
    await entry.store(outcome.secret);
    options.logger.info("key received on the key page", { sessionId: options.sessionId, elicitationId });
    await client.completeElicitation(elicitationId).catch((error: unknown) => options.logger.debug("elicitation/complete not sent", { error: errorMessage(error) }));
    return { kind: "stored" };
  } catch (error) {
    if (options.signal.aborted) return { kind: "cancelled" };
    return { kind: "failed", reason: errorMessage(error) };
  } finally {
    await page.close();
  }
}

/** The -32000 message for a prompt that stays blocked after asking. */
export function credentialRefusal(blocker: string, outcome: Exclude<CredentialOutcome, { kind: "stored" | "cancelled" }>): string {
  if (outcome.kind === "expired") return `${blocker} (the key page expired after ${formatMs(outcome.lifetimeMs)} without a key)`;
  if (outcome.kind === "failed") return `${blocker} (asking for the key through the client failed: ${outcome.reason})`;
  const how = outcome.action === "decline" ? "declined" : "dismissed";
  // A client's reason may say nobody was there to ask (no terminal): then no "user" did anything.
  return outcome.reason ? `${blocker} (the key page was ${how}: ${outcome.reason})` : `${blocker} (the user ${how} the key page)`;
}
