import type {
  ApprovalDecision,
  ApprovalRequest,
  Logger,
  PermissionTarget,
  SessionId,
  ToolCallId,
  ToolKind,
  ToolLocation,
  ToolResult,
} from "../core/index.js";
import type { Context, Span } from "../core/index.js";
import { SpanKind, SpanStatusCode, bindMethods, capturedText, contentCaptured, contextWith, errorMessage, inContext, isAbortError, startSpan } from "../core/index.js";
import type { CommandRunner, FileOperations, PermissionPolicy, Tool, ToolRegistry } from "../tools/index.js";
import { errorResult } from "../tools/index.js";
import type { ObserverHub } from "./observers.js";

/** One tool call from the model, tracked from request to result. */
export interface PendingCall {
  callId: ToolCallId;
  toolName: string;
  rawInput: unknown;
  tool: Tool | undefined;
  parsed: { ok: true; value: unknown } | { ok: false; error: string };
  title: string;
  kind: ToolKind;
  locations: ToolLocation[];
  target: PermissionTarget;
  state: "new" | "awaiting_approval" | "approved" | "done";
  approval?: ApprovalRequest;
  result?: ToolResult;
  /** `execute_tool {name}`: from the model's request to the result (ended by endToolSpan). */
  span?: Span;
  /** When the approval was asked for (performance.now()), for the permission wait time. */
  approvalAt?: number;
  /** The permission outcome (policy_allow, policy_deny, approve, deny …), for the span. */
  permission?: string;
}

export interface SessionScope {
  sessionId: SessionId;
  cwd: string;
  roots: string[];
}

/** Parses the model's input and derives title, kind, locations and target (all safe to fail). */
export function describeCall(
  registry: ToolRegistry,
  scope: SessionScope,
  callId: ToolCallId,
  toolName: string,
  rawInput: unknown,
): PendingCall {
  const tool = registry.get(toolName);
  const base = { callId, toolName, rawInput, tool, state: "new" as const };
  if (!tool) {
    return { ...base, parsed: { ok: false, error: `unknown tool "${toolName}"` }, title: toolName, kind: "other", locations: [], target: { paths: [] } };
  }
  const context = { cwd: scope.cwd, roots: scope.roots };
  try {
    const value = tool.parse(rawInput);
    return {
      ...base,
      parsed: { ok: true, value },
      title: safe(() => tool.title(value, context), toolName),
      kind: tool.kind,
      locations: safe(() => tool.locations(value, context), []),
      target: safe(() => tool.target(value, context), { paths: [] }),
    };
  } catch (error) {
    return { ...base, parsed: { ok: false, error: errorMessage(error) }, title: toolName, kind: tool.kind, locations: [], target: { paths: [] } };
  }
}

function safe<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}

/** Applies a decision; patched input is re-parsed so the tool only ever sees valid input. */
export function applyDecision(registry: ToolRegistry, scope: SessionScope, call: PendingCall, decision: ApprovalDecision): PendingCall {
  if (decision.type === "deny") {
    const why = decision.reason ? `: ${decision.reason}` : "";
    return { ...call, state: "done", result: errorResult(`The user denied this ${call.toolName} call${why}. Do not retry it unchanged.`) };
  }
  if (decision.type === "approve_with_patched_input") {
    const patched = describeCall(registry, scope, call.callId, call.toolName, decision.input);
    if (!patched.parsed.ok) return { ...patched, state: "done", result: errorResult(patched.parsed.error) };
    return { ...patched, state: "approved" };
  }
  return { ...call, state: "approved" };
}

export async function evaluatePolicy(
  policy: PermissionPolicy,
  scope: SessionScope,
  call: PendingCall,
): Promise<{ verdict: "allow" | "deny" | "ask"; reason: string }> {
  return policy.evaluate({
    sessionId: scope.sessionId,
    toolName: call.toolName,
    kind: call.kind,
    input: call.parsed.ok ? call.parsed.value : call.rawInput,
    target: call.target,
    roots: scope.roots,
    cwd: scope.cwd,
  });
}

export interface ExecuteOptions {
  scope: SessionScope;
  signal: AbortSignal;
  files: FileOperations;
  commands: CommandRunner;
  hub: ObserverHub;
  logger: Logger;
}

/** Runs an approved call. Failures (thrown or returned) become error results; a cancel is reported as such. */
export async function executeCall(call: PendingCall, options: ExecuteOptions): Promise<{ result: ToolResult; cancelled: boolean }> {
  const { hub, signal, scope } = options;
  if (!call.tool || !call.parsed.ok) {
    return { result: errorResult(call.parsed.ok ? `unknown tool "${call.toolName}"` : call.parsed.error), cancelled: false };
  }
  hub.emit({ type: "tool_execution_started", callId: call.callId, toolName: call.toolName, input: call.parsed.value });
  try {
    const tool = call.tool;
    const input = call.parsed.value;
    // Client fs/terminal requests, MCP calls and delegated agents become children of the tool's
    // span: its context is active while execute starts, and bound to the file and command
    // operations it calls later (after its own awaits).
    const traced = call.span ? contextWith(call.span) : undefined;
    const run = () => tool.execute(input, {
      sessionId: scope.sessionId,
      callId: call.callId,
      cwd: scope.cwd,
      roots: scope.roots,
      signal,
      files: traced ? bindMethods(options.files, traced) : options.files,
      commands: traced ? bindMethods(options.commands, traced) : options.commands,
      progress: (progress) => hub.emit({ type: "tool_execution_progress", callId: call.callId, progress }),
    });
    const result = await (traced ? inContext(traced, run) : run());
    if (signal.aborted) return { result: withCancelNote(result), cancelled: true };
    return { result, cancelled: false };
  } catch (error) {
    if (signal.aborted || isAbortError(error)) return { result: errorResult("The tool call was cancelled by the user."), cancelled: true };
    options.logger.debug("tool threw", { tool: call.toolName, error: errorMessage(error) });
    return { result: errorResult(`${call.toolName} failed: ${errorMessage(error)}`), cancelled: false };
  }
}

function withCancelNote(result: ToolResult): ToolResult {
  return { ...result, isError: true, text: `${result.text}\n[cancelled by the user]`.trim() };
}

/** Starts the call's `execute_tool {name}` span (GenAI semantic conventions); a child of the active turn. */
export function startToolSpan(call: PendingCall, parent: Context): Span {
  const span = startSpan(`execute_tool ${call.toolName}`, { kind: SpanKind.INTERNAL }, parent);
  if (!span.isRecording()) return span;
  span.setAttributes({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.toolName, "gen_ai.tool.call.id": call.callId, "gen_ai.tool.type": "function" });
  if (contentCaptured(span)) span.setAttribute("gen_ai.tool.call.arguments", capturedText(call.rawInput));
  return span;
}

/** Records the permission outcome and how long the answer took on the call's span. */
export function notePermission(call: PendingCall, outcome: string): void {
  call.permission = outcome;
  const span = call.span;
  if (!span?.isRecording()) return;
  span.setAttribute("agentkit.permission.outcome", outcome);
  if (call.approvalAt !== undefined) span.setAttribute("agentkit.permission.wait_ms", Math.round(performance.now() - call.approvalAt));
}

/** Ends the call's span with its result (an error result sets `error.type`). */
export function endToolSpan(call: PendingCall): void {
  const span = call.span;
  if (!span) return;
  if (span.isRecording() && call.result) {
    if (call.result.isError) {
      span.setAttribute("error.type", call.permission === "deny" || call.permission === "policy_deny" ? "permission_denied" : "tool_error");
      span.setStatus({ code: SpanStatusCode.ERROR, message: call.result.text.slice(0, 200) });
    }
    if (contentCaptured(span)) span.setAttribute("gen_ai.tool.call.result", capturedText(call.result.text));
  }
  span.end();
}
