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
import { errorMessage, isAbortError } from "../core/index.js";
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
    const result = await call.tool.execute(call.parsed.value, {
      sessionId: scope.sessionId,
      callId: call.callId,
      cwd: scope.cwd,
      roots: scope.roots,
      signal,
      files: options.files,
      commands: options.commands,
      progress: (progress) => hub.emit({ type: "tool_execution_progress", callId: call.callId, progress }),
    });
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
