import { resolve } from "node:path";
import type { ApprovalRequest } from "../../core/index.js";
import type { AcpApprovalDecision } from "./approval.js";
import { isRememberable } from "./approval.js";
import { DEFAULT_PRINCIPAL, principalApprovalKey } from "./principal.js";

/** A remembered answer: only "always" answers are ever stored. */
export type RememberedDecision = { type: "allow_always" } | { type: "reject_always"; reason?: string };

/**
 * Turns an approval request into the key a remembered answer is stored under. The key is the
 * trust decision's scope: it must never contain call ids, timestamps or model-written text.
 * Return `undefined` to never remember this kind of request.
 */
export interface ApprovalKeyer {
  key(request: ApprovalRequest): string | undefined;
}

/**
 * Default key: request kind ("tool_call"), tool kind, tool name, workspace root (the session cwd),
 * and the normalized target (sorted absolute paths, the command with whitespace collapsed, the
 * server). So "always allow" for `edit_file src/a.ts` does not cover `src/b.ts`.
 */
export const defaultApprovalKeyer: ApprovalKeyer = {
  key(request) {
    const root = request.roots[0];
    if (root === undefined) return undefined;
    const paths = [...new Set(request.target.paths.map((p) => resolve(root, p)))].sort();
    const command = request.target.command?.trim().replace(/\s+/g, " ");
    return JSON.stringify(["tool_call", request.kind, request.toolName, resolve(root), paths, command ?? null, request.target.server ?? null]);
  },
};

/**
 * Remembered approval answers, consulted before the resolver. Async-capable so a durable
 * (file-backed) memory can implement it.
 */
export interface AcpApprovalMemory {
  /** `principal`: whose answers to consult (default `"default"`); another principal's never match. */
  lookup(request: ApprovalRequest, principal?: string): RememberedDecision | undefined | Promise<RememberedDecision | undefined>;
  /** Called only with allow_always / reject_always; anything else must be ignored. */
  remember(request: ApprovalRequest, decision: AcpApprovalDecision, principal?: string): void | Promise<void>;
}

/** Remembers nothing ("always" behaves like "once"). */
export class NoopApprovalMemory implements AcpApprovalMemory {
  lookup(): undefined {
    return undefined;
  }
  remember(): void {}
}

/** Process-lifetime memory keyed by an explicit `ApprovalKeyer`. */
export class InMemoryApprovalMemory implements AcpApprovalMemory {
  readonly #keyer: ApprovalKeyer;
  readonly #entries = new Map<string, RememberedDecision>();

  constructor(keyer: ApprovalKeyer = defaultApprovalKeyer) {
    this.#keyer = keyer;
  }

  get size(): number {
    return this.#entries.size;
  }

  lookup(request: ApprovalRequest, principal = DEFAULT_PRINCIPAL): RememberedDecision | undefined {
    const key = this.#keyer.key(request);
    return key === undefined ? undefined : this.#entries.get(principalApprovalKey(key, principal));
  }

  remember(request: ApprovalRequest, decision: AcpApprovalDecision, principal = DEFAULT_PRINCIPAL): void {
    if (!isRememberable(decision)) return;
    const key = this.#keyer.key(request);
    if (key === undefined) return;
    this.#entries.set(principalApprovalKey(key, principal), decision.type === "allow_always" ? { type: "allow_always" } : { ...decision });
  }

  clear(): void {
    this.#entries.clear();
  }
}
