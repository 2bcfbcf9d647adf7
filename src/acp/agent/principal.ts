import { DEFAULT_OWNER } from "../../store/index.js";

/** The principal of a connection served without one (stdio, a single bearer token). */
export const DEFAULT_PRINCIPAL = DEFAULT_OWNER;

/**
 * A remembered-approval key scoped to a principal: one principal's "always" never answers for
 * another. The default principal keeps the bare key, so answers remembered before principals
 * existed stay its own.
 */
export function principalApprovalKey(key: string, principal: string): string {
  return principal === DEFAULT_PRINCIPAL ? key : JSON.stringify(["principal", principal, key]);
}
