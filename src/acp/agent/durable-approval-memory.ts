import type { ApprovalRequest } from "../../core/index.js";
import type { ApprovalMemoryEntry, ApprovalMemoryStore } from "../../store/index.js";
import type { AcpApprovalDecision } from "./approval.js";
import { isRememberable } from "./approval.js";
import type { ApprovalKeyer, AcpApprovalMemory, RememberedDecision } from "./approval-memory.js";
import { defaultApprovalKeyer } from "./approval-memory.js";
import { DEFAULT_PRINCIPAL, principalApprovalKey } from "./principal.js";

/**
 * "Always allow" / "always reject" answers kept in an `ApprovalMemoryStore` (a file per workspace
 * root under the state directory with `FileApprovalMemoryStore`), so they survive restarts. The
 * key comes from the keyer (default: request kind, tool kind and name, root, normalized target);
 * the workspace root is the request's first root (the session cwd). Patched input never reaches
 * memory (only "always" answers are stored).
 */
export class DurableApprovalMemory implements AcpApprovalMemory {
  readonly #store: ApprovalMemoryStore;
  readonly #keyer: ApprovalKeyer;

  constructor(store: ApprovalMemoryStore, keyer: ApprovalKeyer = defaultApprovalKeyer) {
    this.#store = store;
    this.#keyer = keyer;
  }

  async lookup(request: ApprovalRequest, principal = DEFAULT_PRINCIPAL): Promise<RememberedDecision | undefined> {
    const scope = this.#scope(request, principal);
    if (!scope) return undefined;
    const entry = await this.#store.get(scope.root, scope.key);
    if (!entry) return undefined;
    if (entry.decision === "allow") return { type: "allow_always" };
    return entry.reason === undefined ? { type: "reject_always" } : { type: "reject_always", reason: entry.reason };
  }

  async remember(request: ApprovalRequest, decision: AcpApprovalDecision, principal = DEFAULT_PRINCIPAL): Promise<void> {
    if (!isRememberable(decision)) return;
    const scope = this.#scope(request, principal);
    if (!scope) return;
    const entry: ApprovalMemoryEntry = { decision: decision.type === "allow_always" ? "allow" : "reject", createdAt: new Date().toISOString(), toolName: request.toolName };
    const target = describeTarget(request);
    if (target) entry.target = target;
    if (decision.type === "reject_always" && decision.reason) entry.reason = decision.reason;
    await this.#store.set(scope.root, scope.key, entry);
  }

  /** The key is scoped to the principal (see `principalApprovalKey`): stores need no owner column. */
  #scope(request: ApprovalRequest, principal: string): { root: string; key: string } | undefined {
    const root = request.roots[0];
    const key = this.#keyer.key(request);
    return root === undefined || key === undefined ? undefined : { root, key: principalApprovalKey(key, principal) };
  }
}

/** Human-readable target for listings (the key is what matches). */
function describeTarget(request: ApprovalRequest): string | undefined {
  const parts = [...request.target.paths];
  if (request.target.command !== undefined) parts.push(`$ ${request.target.command}`);
  if (request.target.server !== undefined) parts.push(`server ${request.target.server}`);
  return parts.length > 0 ? parts.join(", ") : undefined;
}
