import type {
  PermissionTarget,
  SessionId,
  ToolCallId,
  ToolKind,
  ToolLocation,
  ToolProgress,
  ToolResult,
} from "../core/index.js";
import type { JsonSchema } from "../model/types.js";
import type { InferOutput, StandardSchemaV1 } from "./standard-schema.js";

/** Reads and writes text files. Local by default; an ACP client's fs/* can back it. */
export interface FileOperations {
  /** `line` is 1-based; `limit` is a line count. Throws when the file does not exist (code ENOENT). */
  readTextFile(path: string, options?: { line?: number; limit?: number; signal?: AbortSignal }): Promise<string>;
  writeTextFile(path: string, content: string, options?: { signal?: AbortSignal }): Promise<void>;
}

/** One command for a `CommandRunner`: a shell line, where it runs, and its bounds (time, output kept). */
export interface CommandRequest {
  command: string;
  cwd: string;
  timeoutMs: number;
  outputByteLimit: number;
  env?: Record<string, string>;
  signal: AbortSignal;
  /** Called with output as it arrives (for progress events). */
  onOutput?: (chunk: string) => void;
  /** Called once the command runs in an ACP client terminal, so the tool call can show it live. */
  onTerminal?: (terminalId: string) => void;
}

/**
 * How a command ended: its output (the tail kept within the byte limit), exit code or signal, and whether it timed
 * out or was cancelled.
 */
export interface CommandResult {
  output: string;
  truncated: boolean;
  exitCode: number | null;
  signal: string | null;
  /** Killed because it ran past `timeoutMs`. */
  timedOut: boolean;
  /** Killed (or never started) because `signal` was aborted. */
  cancelled: boolean;
  /** Wall time from the request to the result. */
  durationMs: number;
  /** Set when the command ran in an ACP client terminal. */
  terminalId?: string;
  /** How the run was bounded, when it was (e.g. a sandbox limit the command hit). */
  notes?: string[];
}

/** Runs a shell command. Local by default (own process group); an ACP client terminal can back it. */
export interface CommandRunner {
  run(request: CommandRequest): Promise<CommandResult>;
}

/** What a tool sees of its session. */
export interface ToolContext {
  sessionId: SessionId;
  callId: ToolCallId;
  /** The session's working directory (absolute). */
  cwd: string;
  /** Approved workspace roots (cwd first, then additional directories). */
  roots: string[];
  signal: AbortSignal;
  files: FileOperations;
  commands: CommandRunner;
  progress(progress: ToolProgress): void;
}

/** A tool the loop can offer the model. */
export interface Tool<Input = unknown> {
  readonly name: string;
  readonly description: string;
  readonly kind: ToolKind;
  /** JSON Schema sent to the model. */
  readonly inputSchema: JsonSchema;
  /** Validates model-provided input; throws a readable error when it does not fit. */
  parse(input: unknown): Input;
  /** Human title for a call (e.g. "Edit src/app.ts"). */
  title(input: Input, context: ToolTargetContext): string;
  /** Files this call touches, for editors to follow along. */
  locations(input: Input, context: ToolTargetContext): ToolLocation[];
  /** The normalized risk target the permission policy and approval memory look at. */
  target(input: Input, context: ToolTargetContext): PermissionTarget;
  execute(input: Input, context: ToolContext): Promise<ToolResult>;
}

/**
 * What a tool's `title`, `locations` and `target` see: the session's cwd and workspace roots, to resolve relative
 * paths before anything runs.
 */
export interface ToolTargetContext {
  cwd: string;
  roots: string[];
}

/**
 * Defines a tool from any Standard Schema (zod 3 ≥3.24, zod 4, valibot, arktype, …): it validates
 * the model's input; the JSON Schema the model sees is derived from it, or given as `inputJSONSchema`.
 */
export interface ToolDefinition<S extends StandardSchemaV1> {
  name: string;
  description: string;
  kind: ToolKind;
  input: S;
  /** The JSON Schema sent to the model, when the schema library cannot produce one. */
  inputJSONSchema?: JsonSchema;
  title?: (input: InferOutput<S>, context: ToolTargetContext) => string;
  locations?: (input: InferOutput<S>, context: ToolTargetContext) => ToolLocation[];
  target?: (input: InferOutput<S>, context: ToolTargetContext) => PermissionTarget;
  execute: (input: InferOutput<S>, context: ToolContext) => Promise<ToolResult>;
}

/**
 * A permission policy's answer: run the call, refuse it, or ask the user (through the host: an ACP client's
 * permission request, or the loop's `approval_request` interrupt).
 */
export type PermissionVerdict = "allow" | "deny" | "ask";

/** A verdict with the reason shown to the user or returned to the model when the call is refused. */
export interface PermissionDecision {
  verdict: PermissionVerdict;
  reason: string;
}

/**
 * What a `PermissionPolicy` decides on: the tool call, its normalised target (paths, command) and the session's
 * roots.
 */
export interface PermissionCheck {
  sessionId: SessionId;
  toolName: string;
  kind: ToolKind;
  input: unknown;
  target: PermissionTarget;
  roots: string[];
  cwd: string;
}

/** Decides whether a tool call may run, must be denied, or needs approval. */
export interface PermissionPolicy {
  evaluate(check: PermissionCheck): PermissionDecision | Promise<PermissionDecision>;
}
