import type {
  ApprovalDecision,
  ApprovalRequest,
  CancellationHandle,
  FinishReason,
  Item,
  Logger,
  ToolCallId,
  ToolResult,
  TurnResult,
  Usage,
} from "../core/index.js";
import { StateError, activeContext, errorMessage, isAbortError, newId } from "../core/index.js";
import type { Context } from "../core/index.js";
import type { ModelAdapter, ModelFinishReason, ThinkingLevel } from "../model/types.js";
import { ModelError } from "../model/types.js";
import type { CommandRunner, FileOperations, PermissionPolicy, ToolRegistry } from "../tools/index.js";
import { errorResult } from "../tools/index.js";
import { addUsage, assistantItem, runModelStep } from "./model-step.js";
import type { ObserverHub } from "./observers.js";
import type { PendingCall, SessionScope } from "./tool-round.js";
import { applyDecision, describeCall, endToolSpan, evaluatePolicy, executeCall, notePermission, startToolSpan } from "./tool-round.js";
import type { LoopSnapshot, LoopStep } from "./types.js";

export interface DriverSettings {
  model: ModelAdapter;
  tools: ToolRegistry;
  permissions: PermissionPolicy;
  files: FileOperations;
  commands: CommandRunner;
  cancellation: CancellationHandle;
  hub: ObserverHub;
  logger: Logger;
  systemPrompt: string | undefined;
  maxTurns: number;
  maxOutputTokens: number | undefined;
  thinking: ThinkingLevel | undefined;
  metadata: Record<string, unknown>;
}

interface TurnState {
  generation: number;
  /** The context the turn started in (its `invoke_agent` span): the parent of its model calls and tools. */
  trace: Context;
  signal: AbortSignal;
  modelCalls: number;
  items: Item[];
  usage: Usage | undefined;
  calls: PendingCall[];
}

const finishFromModel: Record<ModelFinishReason, FinishReason> = {
  stop: "completed",
  tool_calls: "completed",
  length: "max_tokens",
  content_filter: "blocked",
  other: "other",
};

/**
 * Drives one session: `submitInput`, then `next()` until `finished`. Approval requests,
 * idle and after-tool-result points come back as interrupts the host resolves.
 */
export class LoopDriver {
  readonly sessionId: string;
  readonly cwd: string;
  readonly roots: string[];
  readonly #settings: DriverSettings;
  readonly #transcript: Item[];
  readonly #pendingInput: Item[] = [];
  #turn: TurnState | undefined;
  #stepping = false;

  /** @internal — use `agent.start()`. */
  constructor(scope: SessionScope, settings: DriverSettings, transcript: Item[]) {
    this.sessionId = scope.sessionId;
    this.cwd = scope.cwd;
    this.roots = scope.roots;
    this.#settings = settings;
    this.#transcript = transcript;
  }

  get transcript(): readonly Item[] {
    return this.#transcript;
  }

  get model(): ModelAdapter {
    return this.#settings.model;
  }

  get tools(): ToolRegistry {
    return this.#settings.tools;
  }

  /** True while a turn is in progress (between the first `next()` after input and `finished`). */
  get busy(): boolean {
    return this.#turn !== undefined || this.#stepping;
  }

  /** Changes settings for the next model call / tool call (model choice, mode, thinking level). */
  configure(changes: { model?: ModelAdapter; permissions?: PermissionPolicy; thinking?: ThinkingLevel; tools?: ToolRegistry }): void {
    if (changes.model) this.#settings.model = changes.model;
    if (changes.permissions) this.#settings.permissions = changes.permissions;
    if (changes.thinking) this.#settings.thinking = changes.thinking;
    if (changes.tools) this.#settings.tools = changes.tools;
  }

  /** Queues user items; they are committed when the next model call starts (or the next turn). */
  submitInput(items: Item[]): void {
    this.#pendingInput.push(...items.map((item) => ({ ...item })));
  }

  pendingApprovals(): ApprovalRequest[] {
    return (this.#turn?.calls ?? []).flatMap((c) => (c.state === "awaiting_approval" && c.approval ? [c.approval] : []));
  }

  resolveApproval(callId: ToolCallId, decision: ApprovalDecision): void {
    const turn = this.#turn;
    const index = turn?.calls.findIndex((c) => c.callId === callId && c.state === "awaiting_approval") ?? -1;
    const call = turn?.calls[index];
    if (!turn || !call) throw new StateError(`no approval is pending for tool call ${callId}`);
    notePermission(call, decision.type);
    const next: PendingCall = applyDecision(this.#settings.tools, this.#scope(), call, decision);
    // Patched input builds a new call: it keeps the span and the permission outcome.
    if (call.span) next.span = call.span;
    if (call.permission) next.permission = call.permission;
    turn.calls[index] = next;
    this.#settings.hub.emit({ type: "approval_resolved", callId, decision });
    if (next.state === "done") this.#emitResult(next);
  }

  /**
   * Ends every unresolved approval with an error tool result (so the transcript stays valid for
   * the provider). Used when a turn is cancelled while waiting for a decision.
   */
  async cancelPendingApprovals(reason = "The approval was cancelled by the user."): Promise<void> {
    const turn = this.#turn;
    if (!turn || turn.calls.length === 0) return;
    await this.#settleUnrunCalls(turn, reason);
  }

  snapshot(): LoopSnapshot {
    return { version: 1, sessionId: this.sessionId, items: structuredClone(this.#transcript), metadata: { ...this.#settings.metadata } };
  }

  async next(): Promise<LoopStep> {
    if (this.#stepping) throw new StateError("next() is already running for this session");
    this.#stepping = true;
    try {
      return await this.#step();
    } finally {
      this.#stepping = false;
    }
  }

  async #step(): Promise<LoopStep> {
    if (!this.#turn) {
      if (this.#pendingInput.length === 0) return { type: "interrupt", interrupt: { type: "awaiting_input" } };
      const generation = this.#settings.cancellation.generation();
      this.#turn = {
        generation,
        trace: activeContext(),
        signal: this.#settings.cancellation.signalSince(generation),
        modelCalls: 0,
        items: [],
        usage: undefined,
        calls: [],
      };
      this.#settings.hub.emit({ type: "run_started" });
    }
    const turn = this.#turn;
    for (;;) {
      if (turn.signal.aborted) return this.#finishCancelled(turn);
      if (turn.calls.length > 0) {
        const step = await this.#advanceTools(turn);
        if (step) return step;
        continue;
      }
      if (turn.modelCalls >= this.#settings.maxTurns) {
        this.#settings.hub.emit({ type: "warning", message: `stopped after ${this.#settings.maxTurns} model calls in one turn (max turns)` });
        return this.#finish(turn, "max_turns");
      }
      const finished = await this.#modelCall(turn);
      if (finished) return finished;
    }
  }

  /** Resolves policy, asks for approval, executes; returns a step when the host must act. */
  async #advanceTools(turn: TurnState): Promise<LoopStep | undefined> {
    const scope = this.#scope();
    for (const [i, call] of turn.calls.entries()) {
      if (call.state === "done") continue;
      if (call.state === "awaiting_approval") return { type: "interrupt", interrupt: { type: "approval_request", request: call.approval! } };
      let current = call;
      if (current.state === "new") {
        if (!current.parsed.ok) {
          turn.calls[i] = { ...current, state: "done", result: errorResult(current.parsed.error) };
          this.#emitResult(turn.calls[i]!);
          continue;
        }
        const decision = await evaluatePolicy(this.#settings.permissions, scope, current);
        if (decision.verdict !== "ask") notePermission(current, `policy_${decision.verdict}`);
        if (decision.verdict === "deny") {
          turn.calls[i] = { ...current, state: "done", result: errorResult(`Not permitted: ${decision.reason}`) };
          this.#emitResult(turn.calls[i]!);
          continue;
        }
        if (decision.verdict === "ask") {
          const approval: ApprovalRequest = {
            sessionId: this.sessionId,
            callId: current.callId,
            toolName: current.toolName,
            title: current.title,
            kind: current.kind,
            input: current.parsed.value,
            locations: current.locations,
            target: current.target,
            roots: this.roots,
            reason: decision.reason,
          };
          turn.calls[i] = { ...current, state: "awaiting_approval", approval, approvalAt: performance.now() };
          this.#settings.hub.emit({ type: "approval_required", request: approval });
          return { type: "interrupt", interrupt: { type: "approval_request", request: approval } };
        }
        current = { ...current, state: "approved" };
      }
      const { result, cancelled } = await executeCall(current, {
        scope,
        signal: turn.signal,
        files: this.#settings.files,
        commands: this.#settings.commands,
        hub: this.#settings.hub,
        logger: this.#settings.logger,
      });
      turn.calls[i] = { ...current, state: "done", result };
      this.#emitResult(turn.calls[i]!);
      if (cancelled) return this.#finishCancelled(turn);
    }
    const results = turn.calls.map((c) => ({ callId: c.callId, toolName: c.toolName, result: c.result! }));
    await this.#commitToolResults(turn);
    return { type: "interrupt", interrupt: { type: "after_tool_result", results } };
  }

  /** Runs one model call; returns a finished step, or undefined to keep driving (tool calls). */
  async #modelCall(turn: TurnState): Promise<LoopStep | undefined> {
    await this.#commitPendingInput(turn);
    turn.modelCalls += 1;
    const { hub, model } = this.#settings;
    hub.emit({ type: "turn_started", turn: turn.modelCalls });
    const scope = this.#scope();
    const outcome = await runModelStep(
      model,
      {
        ...(this.#settings.systemPrompt === undefined ? {} : { system: this.#settings.systemPrompt }),
        items: [...this.#transcript],
        tools: this.#settings.tools.specs(),
        ...(this.#settings.maxOutputTokens === undefined ? {} : { maxOutputTokens: this.#settings.maxOutputTokens }),
        ...(this.#settings.thinking === undefined ? {} : { thinking: this.#settings.thinking }),
      },
      turn.signal,
      hub,
      turn.trace,
      (call) => {
        const pending = describeCall(this.#settings.tools, scope, call.callId, call.toolName, call.input);
        pending.span = startToolSpan(pending, turn.trace);
        hub.emit({
          type: "tool_call_requested",
          callId: call.callId,
          toolName: call.toolName,
          title: pending.title,
          kind: pending.kind,
          input: call.input,
          locations: pending.locations,
        });
        turn.calls.push(pending);
      },
    );
    const item = assistantItem(outcome.parts);
    if (item) await this.#commit(turn, item);
    if (outcome.usage) {
      turn.usage = addUsage(turn.usage, outcome.usage);
      const contextWindow = model.capabilities.contextWindow;
      hub.emit(contextWindow === undefined ? { type: "usage", usage: outcome.usage } : { type: "usage", usage: outcome.usage, contextWindow });
    }
    if (outcome.error !== undefined) {
      if (turn.signal.aborted || isAbortError(outcome.error)) return this.#finishCancelled(turn);
      const message = outcome.error instanceof ModelError ? outcome.error.message : `model call failed: ${errorMessage(outcome.error)}`;
      hub.emit({ type: "run_failed", message });
      await this.#settleUnrunCalls(turn, "The model call failed before this tool ran.");
      return this.#finish(turn, "error", message);
    }
    if (outcome.toolCalls.length > 0) return undefined;
    return this.#finish(turn, finishFromModel[outcome.finish ?? "other"]);
  }

  async #commitPendingInput(turn: TurnState): Promise<void> {
    while (this.#pendingInput.length > 0) await this.#commit(turn, this.#pendingInput.shift()!);
  }

  async #commit(turn: TurnState, item: Item): Promise<void> {
    this.#transcript.push(item);
    turn.items.push(item);
    await this.#settings.hub.commit(item);
  }

  async #commitToolResults(turn: TurnState): Promise<void> {
    const parts = turn.calls.map((c) => ({
      type: "tool_result" as const,
      callId: c.callId,
      toolName: c.toolName,
      result: c.result ?? errorResult("no result"),
    }));
    const meta = { calls: turn.calls.map((c) => ({ callId: c.callId, title: c.title, kind: c.kind, locations: c.locations })) };
    turn.calls = [];
    if (parts.length > 0) await this.#commit(turn, { id: newId("item"), role: "tool", parts, createdAt: new Date().toISOString(), meta });
  }

  async #settleUnrunCalls(turn: TurnState, reason: string): Promise<void> {
    if (turn.calls.length === 0) return;
    for (const [i, call] of turn.calls.entries()) {
      if (call.state !== "done") {
        turn.calls[i] = { ...call, state: "done", result: errorResult(reason) };
        this.#emitResult(turn.calls[i]!);
      }
    }
    await this.#commitToolResults(turn);
  }

  #emitResult(call: PendingCall): void {
    endToolSpan(call);
    this.#settings.hub.emit({ type: "tool_result", callId: call.callId, toolName: call.toolName, result: call.result as ToolResult });
  }

  async #finishCancelled(turn: TurnState): Promise<LoopStep> {
    await this.#settleUnrunCalls(turn, "Cancelled by the user before this tool ran.");
    return this.#finish(turn, "cancelled");
  }

  #finish(turn: TurnState, finishReason: FinishReason, error?: string): LoopStep {
    const result: TurnResult = { finishReason, items: turn.items };
    if (turn.usage) result.usage = turn.usage;
    if (error !== undefined) result.error = error;
    this.#turn = undefined;
    this.#settings.hub.emit({ type: "turn_finished", result });
    return { type: "finished", result };
  }

  #scope(): SessionScope {
    return { sessionId: this.sessionId, cwd: this.cwd, roots: this.roots };
  }
}
