import type { PermissionOption, PermissionOptionKind, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { ApprovalDecision, ApprovalRequest } from "../../core/index.js";
import { approve, approveWithPatchedInput, deny } from "../../core/index.js";
import type { AcpClientHandle } from "./client-handle.js";

/** What a resolver (or the approval memory) decided about one approval request. */
export type AcpApprovalDecision =
  | { type: "allow_once" }
  | { type: "allow_always" }
  | { type: "reject_once"; reason?: string }
  | { type: "reject_always"; reason?: string }
  /** Run the call with this input instead; never remembered. */
  | { type: "patch_and_allow"; input: unknown }
  /** The client cancelled the permission prompt (or the session was cancelled): the turn ends `cancelled`. */
  | { type: "cancelled" };

/**
 * What an `AcpApprovalResolver` decides on: the sessions, the loop's approval request, the tool
 * call as ACP shows it, and the session's cancellation.
 */
export interface AcpApprovalContext {
  acpSessionId: string;
  agentSessionId: string;
  request: ApprovalRequest;
  /** The tool call as ACP shows it (what `session/request_permission` carries as `toolCall`). */
  toolCall: ToolCallUpdate;
  /** Aborted when the session is cancelled; a resolver should stop waiting then. */
  signal: AbortSignal;
}

/** Decides an approval the loop surfaced. The runtime races it against the session's cancellation. */
export interface AcpApprovalResolver {
  resolve(context: AcpApprovalContext, client: AcpClientHandle): Promise<AcpApprovalDecision>;
}

/** Approves everything. For tests and trusted non-interactive hosts only. */
export class AutoApproveResolver implements AcpApprovalResolver {
  async resolve(): Promise<AcpApprovalDecision> {
    return { type: "allow_once" };
  }
}

/** Rejects everything that needs approval (the model is told and can continue). */
export class AutoDenyResolver implements AcpApprovalResolver {
  readonly #reason: string;
  constructor(reason = "approvals are disabled for this agent (--approve deny)") {
    this.#reason = reason;
  }
  async resolve(): Promise<AcpApprovalDecision> {
    return { type: "reject_once", reason: this.#reason };
  }
}

/** Options of `ClientPermissionResolver`. */
export interface ClientPermissionOptions {
  /** Offer allow_always / reject_always (default true). Turn off when no approval memory is wired. */
  offerAlways?: boolean;
}

const optionNames: Record<PermissionOptionKind, string> = {
  allow_once: "Allow once",
  allow_always: "Always allow",
  reject_once: "Reject",
  reject_always: "Always reject",
};

/** Asks the ACP client through `session/request_permission`; the user's choice becomes the decision. */
export class ClientPermissionResolver implements AcpApprovalResolver {
  readonly #options: PermissionOption[];

  constructor(options: ClientPermissionOptions = {}) {
    const kinds: PermissionOptionKind[] =
      options.offerAlways === false ? ["allow_once", "reject_once"] : ["allow_once", "allow_always", "reject_once", "reject_always"];
    this.#options = kinds.map((kind) => ({ optionId: kind, name: optionNames[kind], kind }));
  }

  async resolve(context: AcpApprovalContext, client: AcpClientHandle): Promise<AcpApprovalDecision> {
    const response = await client.requestPermission(
      { sessionId: context.acpSessionId, toolCall: context.toolCall, options: this.#options },
      context.signal,
    );
    const outcome = response.outcome;
    if (outcome.outcome === "cancelled") return { type: "cancelled" };
    const chosen = this.#options.find((o) => o.optionId === outcome.optionId);
    if (!chosen) return { type: "reject_once", reason: `the client answered with an option that was not offered ("${outcome.optionId}")` };
    return decisionFor(chosen.kind);
  }
}

function decisionFor(kind: PermissionOptionKind): AcpApprovalDecision {
  switch (kind) {
    case "allow_once":
      return { type: "allow_once" };
    case "allow_always":
      return { type: "allow_always" };
    case "reject_once":
      return { type: "reject_once" };
    case "reject_always":
      return { type: "reject_always" };
  }
}

/** The loop-level decision for a resolver decision (`cancelled` has none: the turn is cancelled instead). */
export function toLoopDecision(decision: Exclude<AcpApprovalDecision, { type: "cancelled" }>): ApprovalDecision {
  switch (decision.type) {
    case "allow_once":
    case "allow_always":
      return approve();
    case "reject_once":
    case "reject_always":
      return deny(decision.reason);
    case "patch_and_allow":
      return approveWithPatchedInput(decision.input);
  }
}

export function isRememberable(decision: AcpApprovalDecision): decision is { type: "allow_always" } | { type: "reject_always"; reason?: string } {
  return decision.type === "allow_always" || decision.type === "reject_always";
}
