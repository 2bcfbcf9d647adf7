import type * as acp from "@agentclientprotocol/sdk/unstable";

/**
 * An answer by option kind (`allow_once`, `reject_always`, …): the policy picks the agent's offered option of that
 * kind.
 */
export type PermissionChoice = acp.PermissionOptionKind;

/**
 * Which offered option kinds express a choice, in order of preference. An allow never
 * escalates (allow_once never becomes allow_always); a rejection may harden
 * (reject_once → reject_always), which is always safe.
 */
const PREFERENCE: Record<PermissionChoice, acp.PermissionOptionKind[]> = {
  allow_once: ["allow_once"],
  allow_always: ["allow_always", "allow_once"],
  reject_once: ["reject_once", "reject_always"],
  reject_always: ["reject_always", "reject_once"],
};

/** Maps a choice onto an option the agent actually offered (or none). Ids are never invented. */
export function choiceToOutcome(choice: PermissionChoice, options: acp.PermissionOption[]): { option?: acp.PermissionOption; note?: string } {
  for (const kind of PREFERENCE[choice]) {
    const option = options.find((o) => o.kind === kind);
    if (option) return { option };
  }
  if (choice.startsWith("allow")) {
    // The agent offered no way to allow as asked: deny rather than grant more than intended.
    const reject = choiceToOutcome("reject_once", options);
    return { ...reject, note: `the agent offered no ${choice} option, so the call is rejected` };
  }
  return {};
}

/** Normalizes a handler's answer; an `optionId` the agent did not offer becomes a rejection. */
export function answerToChoice(
  answer: PermissionChoice | "allow" | "deny" | "cancel" | { optionId: string } | (string & {}),
  options: acp.PermissionOption[],
): { choice: PermissionChoice | "cancel"; option?: acp.PermissionOption; note?: string } {
  if (answer === "allow") return { choice: "allow_once" };
  if (answer === "deny") return { choice: "reject_once" };
  if (answer === "cancel" || (typeof answer === "string" && Object.hasOwn(PREFERENCE, answer))) return { choice: answer as PermissionChoice | "cancel" };
  if (typeof answer !== "object" || answer === null || typeof answer.optionId !== "string") {
    return { choice: "reject_once", note: `the handler answered ${JSON.stringify(answer) ?? String(answer)}, which is no permission answer (allow_once, allow_always, reject_once, reject_always, allow, deny, cancel or { optionId }); rejected` };
  }
  const offered = options.find((o) => o.optionId === answer.optionId);
  if (offered) return { choice: offered.kind, option: offered };
  return { choice: "reject_once", note: `the handler chose option id "${answer.optionId}", which the agent did not offer; rejected` };
}
