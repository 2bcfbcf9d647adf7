import type * as acp from "@agentclientprotocol/sdk/unstable";
import { ClientPermissionPolicy, type PermissionAnswer, type PermissionHandler, type PermissionQuestion } from "../client/permissions.js";

/** The outer tool call a delegated permission question arises in. */
export interface OuterCall {
  /** The outer loop session (`ToolContext.sessionId`). */
  sessionId: string;
  /** The outer tool call (`ToolContext.callId`) — the delegation itself. */
  callId: string;
}

/** A permission question of the delegated agent, forwarded to whoever approves the outer agent's work. */
export interface DelegatedPermissionRequest {
  /** The delegate's tool name (e.g. "reviewer"). */
  delegate: string;
  outer: OuterCall;
  /** The inner question: title, kind, rawInput, paths, command, and the options the inner agent offered. */
  question: PermissionQuestion;
}

/**
 * Decides a forwarded question — typically by asking the human in front of the outer agent.
 * Answer like a `PermissionHandler`: `allow_once`, `reject_once`, … or `{ optionId }` of one
 * of `question.options` (checked; an id the inner agent did not offer becomes a rejection),
 * or `cancel` (the delegated turn is cancelled). `signal` aborts when the delegated turn is
 * cancelled (e.g. the outer turn was).
 */
export type OuterApprovalHandler = (request: DelegatedPermissionRequest, signal: AbortSignal) => PermissionAnswer | Promise<PermissionAnswer>;

/**
 * The policy a delegated agent's questions go through. Without `askOuter`: `own` (deny-all by
 * default). With it: `own`'s rules still decide first and every `ask` goes out; with no `own`
 * policy every question goes out.
 */
export function delegationPolicy(
  own: ClientPermissionPolicy | undefined,
  askOuter: OuterApprovalHandler | undefined,
  delegate: string,
  currentCall: () => OuterCall | undefined,
): ClientPermissionPolicy {
  if (!askOuter) return own ?? ClientPermissionPolicy.denyAll();
  const ask: PermissionHandler = (question, signal) => {
    const outer = currentCall();
    // A question outside any delegated call (a late request) has nobody to ask.
    if (!outer) return "deny";
    return askOuter({ delegate, outer, question }, signal);
  };
  return own ? own.withAsk(ask) : new ClientPermissionPolicy({ default: "ask", ask });
}

const HOST_OPTIONS: acp.PermissionOption[] = [
  { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" },
];

/** What `acpClientApprovals` needs of the outer ACP connection; `AcpClientHandle` (agent side) fits. */
export interface OuterPermissionChannel {
  requestPermission(params: acp.RequestPermissionRequest, signal?: AbortSignal): Promise<acp.RequestPermissionResponse>;
}

/**
 * Forwards delegated questions to the editor in front of the outer agent, when that agent is
 * served over ACP: a `session/request_permission` on the outer ACP session, attached to the
 * outer tool call (the delegation), offering exactly the options the inner agent offered —
 * so the editor's choice is relayed verbatim. The question is shown as the call's content
 * (its title and input stay the delegation's); the next progress line replaces it again.
 *
 * In an agent factory: `askOuter: acpClientApprovals(context.client, context.acpSessionId)`.
 */
export function acpClientApprovals(channel: OuterPermissionChannel, acpSessionId: string | ((outer: OuterCall) => string | undefined)): OuterApprovalHandler {
  return async ({ delegate, outer, question }, signal) => {
    const sessionId = typeof acpSessionId === "string" ? acpSessionId : acpSessionId(outer);
    if (sessionId === undefined) return "deny";
    // Host-service questions (fs, terminal) come without options: offer a plain yes/no.
    const hostQuestion = question.options.length === 0;
    const offered: acp.PermissionOption[] = hostQuestion ? HOST_OPTIONS : question.options;
    const lines = [`${delegate} asks permission: ${question.title} (${question.kind})`];
    if (question.command !== undefined) lines.push(`command: ${question.command}`);
    if (question.paths.length > 0) lines.push(`paths: ${question.paths.join(", ")}`);
    const response = await channel.requestPermission(
      {
        sessionId,
        toolCall: {
          toolCallId: outer.callId,
          content: [{ type: "content", content: { type: "text", text: lines.join("\n") } }],
          ...(question.paths.length > 0 ? { locations: question.paths.map((path) => ({ path })) } : {}),
          _meta: { agentkit: { delegated: { delegate, title: question.title, kind: question.kind, rawInput: question.rawInput, toolCallId: question.toolCallId ?? null } } },
        },
        options: offered,
      },
      signal,
    );
    if (response.outcome.outcome === "cancelled") return "cancel";
    const optionId = response.outcome.optionId;
    if (!hostQuestion) return { optionId };
    return optionId === "allow_once" ? "allow_once" : "reject_once";
  };
}
