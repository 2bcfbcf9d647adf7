import type { PromptResponse, StopReason } from "@agentclientprotocol/sdk";
import { RequestError } from "@agentclientprotocol/sdk/unstable";
import { toRequestError } from "../errors.js";
import type { ApprovalRequest, FinishReason, Logger, TurnResult } from "../../core/index.js";
import { SpanKind, activeContext, errorMessage, inContext, recordSpanError, startSpan, withSpanActive } from "../../core/index.js";
import { codeCacheCheckpoint } from "../../core/code-cache-hint.js";
import type { LoopDriver } from "../../loop/index.js";
import type { AcpApprovalDecision, AcpApprovalResolver } from "./approval.js";
import { isRememberable, toLoopDecision } from "./approval.js";
import type { AcpApprovalMemory } from "./approval-memory.js";
import { approvalToolCall } from "./mapping.js";
import type { AcpSessionHandle } from "./session.js";

/** The part of a LoopDriver a prompt turn uses (a host may wrap its own). */
export type TurnDriver = Pick<LoopDriver, "next" | "submitInput" | "resolveApproval" | "cancelPendingApprovals">;

export interface ApprovalDeps {
  resolver: AcpApprovalResolver;
  memory: AcpApprovalMemory;
  logger: Logger;
  /** `gen_ai.agent.name` on the turn's `invoke_agent` span. */
  agentName?: string;
}

const stopReasons: Record<Exclude<FinishReason, "error">, StopReason> = {
  completed: "end_turn",
  tool_call: "end_turn",
  max_tokens: "max_tokens",
  max_turns: "max_turn_requests",
  cancelled: "cancelled",
  blocked: "refusal",
  other: "end_turn",
};

/** The `session/prompt` answer for a finished turn; a failed run is a JSON-RPC error (-32603) with the reason. */
function promptResponseFor(result: TurnResult): PromptResponse {
  if (result.finishReason === "error") {
    const message = result.error ?? "the agent run failed";
    // The run's own message says what failed (e.g. the provider cannot be reached): no "Internal error:" label.
    throw new RequestError(-32603, message, { details: message });
  }
  const response: PromptResponse = { stopReason: stopReasons[result.finishReason] };
  if (result.usage) response._meta = { agentkit: { usage: result.usage, finishReason: result.finishReason } };
  return response;
}

const CANCELLED = Symbol("cancelled");

/** Settles with the promise, or with CANCELLED as soon as `signal` aborts (no listener is left behind). */
function raceCancel<T>(value: T | Promise<T>, signal: AbortSignal): Promise<T | typeof CANCELLED> {
  if (signal.aborted) return Promise.resolve(CANCELLED);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => resolve(CANCELLED);
    signal.addEventListener("abort", onAbort, { once: true });
    Promise.resolve(value).then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

/**
 * Decides one approval: remembered answers first, then the resolver — both raced against the
 * session's cancellation since `generation` (cancel wins). "Always" answers are remembered;
 * patched input never.
 */
export async function decideApproval(
  session: AcpSessionHandle,
  request: ApprovalRequest,
  generation: number,
  deps: ApprovalDeps,
): Promise<AcpApprovalDecision> {
  const signal = session.cancellationHandle().signalSince(generation);
  const traced = activeContext(); // the turn's: the permission request's parent
  try {
    // The client must have seen the tool_call before it is asked about it.
    await session.flush();
    const remembered = await raceCancel(deps.memory.lookup(request, session.principal), signal);
    if (remembered === CANCELLED) return { type: "cancelled" };
    if (remembered) {
      if (remembered.type === "reject_always" && !remembered.reason) return { ...remembered, reason: "the user chose “always reject” for this earlier" };
      return remembered;
    }
    const context = {
      acpSessionId: session.acpSessionId,
      agentSessionId: session.agentSessionId,
      request,
      toolCall: approvalToolCall(request),
      signal,
    };
    const decision = await raceCancel(
      inContext(traced, () => deps.resolver.resolve(context, session.client)),
      signal,
    );
    if (decision === CANCELLED) return { type: "cancelled" };
    if (isRememberable(decision)) await deps.memory.remember(request, decision, session.principal);
    return decision;
  } catch (error) {
    if (signal.aborted) return { type: "cancelled" };
    deps.logger.warn("approval could not be obtained; denying the call", { error: errorMessage(error), tool: request.toolName });
    return { type: "reject_once", reason: `the approval could not be obtained (${errorMessage(error)})` };
  }
}

/**
 * Drives one prompt turn to its end, as the seed's prompt loop: approvals go through memory and
 * the resolver (raced with cancellation), after-tool-result points take queued interjections,
 * and every update is flushed before the response is returned. Input must already be submitted.
 */
export function driveTurn(session: AcpSessionHandle, driver: TurnDriver, deps: ApprovalDeps): Promise<PromptResponse> {
  // `invoke_agent {agent}` (GenAI semantic conventions): the turn's span; model calls, tools and
  // requests to the client are its children. Started synchronously: the turn must reach
  // driver.next() in this tick (a cancel right after the prompt lands on its generation).
  const agentName = deps.agentName ?? "agent";
  const span = startSpan(`invoke_agent ${agentName}`, { kind: SpanKind.INTERNAL });
  if (span.isRecording()) {
    span.setAttributes({ "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agentName, "gen_ai.conversation.id": session.acpSessionId });
  }
  return withSpanActive(span, () => runTurn(session, driver, deps)).then(
    (response) => {
      if (span.isRecording()) {
        span.setAttribute("agentkit.stop_reason", response.stopReason);
        const meta = response._meta?.agentkit as { usage?: { inputTokens: number; outputTokens: number }; finishReason?: string } | undefined;
        if (meta?.finishReason) span.setAttribute("gen_ai.response.finish_reasons", [meta.finishReason]);
        if (meta?.usage) span.setAttributes({ "gen_ai.usage.input_tokens": meta.usage.inputTokens, "gen_ai.usage.output_tokens": meta.usage.outputTokens });
      }
      span.end();
      // A turn's code has run: the bin may write its code cache now (once; see cli/bundles.ts).
      codeCacheCheckpoint();
      return response;
    },
    (error: unknown) => {
      recordSpanError(span, error);
      span.end();
      throw error;
    },
  );
}

async function runTurn(session: AcpSessionHandle, driver: TurnDriver, deps: ApprovalDeps): Promise<PromptResponse> {
  // Captured before the first next() (same tick), so it is the generation the turn runs at.
  const generation = session.cancellationHandle().generation();
  // The turn's span, carried across the awaits below to what next() and approvals start.
  const traced = activeContext();
  try {
    for (;;) {
      const step = await inContext(traced, () => driver.next());
      if (step.type === "finished") {
        // Interjections that found no after-tool-result point go with the next turn, never lost.
        const leftover = session.takeInterjections();
        if (leftover.length > 0) driver.submitInput(leftover);
        await session.flush();
        return promptResponseFor(step.result);
      }
      const interrupt = step.interrupt;
      if (interrupt.type === "awaiting_input") {
        await session.flush();
        return { stopReason: "end_turn" };
      }
      if (interrupt.type === "after_tool_result") {
        const extra = session.takeInterjections();
        if (extra.length > 0) driver.submitInput(extra);
        continue;
      }
      const decision = await inContext(traced, () => decideApproval(session, interrupt.request, generation, deps));
      if (decision.type === "cancelled") {
        // Abort the turn (if the client cancelled only the permission prompt), settle the waiting
        // calls with error results, and let next() finish the turn as cancelled.
        if (!session.cancellationHandle().isCancelledSince(generation)) session.interrupt("permission request cancelled");
        await driver.cancelPendingApprovals();
        continue;
      }
      driver.resolveApproval(interrupt.request.callId, toLoopDecision(decision));
    }
  } catch (error) {
    await session.flush();
    throw toRequestError(error);
  }
}
