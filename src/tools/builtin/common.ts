import { errorMessage, isAbortError } from "../../core/index.js";
import type { ToolResult } from "../../core/index.js";
import { ToolInputError, errorResult } from "../define.js";
import { PathAccessError, resolveInsideRoots, toAbsolutePath } from "../paths.js";
import type { PathAccessMode } from "../paths.js";
import type { ToolContext, ToolTargetContext } from "../types.js";

/** Limits and defaults of the built-in tools. Every field is optional. */
export interface BuiltinToolOptions {
  /** read_file: largest text returned in one call (bytes). Default 256 KiB. */
  readMaxBytes?: number;
  /** list_dir: most entries listed. Default 1000. */
  listMaxEntries?: number;
  /** glob: most paths returned. Default 1000. */
  globMaxResults?: number;
  /** grep: most matching lines returned. Default 200. */
  grepMaxMatches?: number;
  /** grep: larger files are skipped (bytes). Default 1 MiB. */
  grepMaxFileBytes?: number;
  /** glob/grep: most directory entries visited in one walk. Default 50 000. */
  walkMaxEntries?: number;
  /** glob/grep: directory names never descended into. Default node_modules and .git. */
  ignoreDirs?: string[];
  /** shell: timeout when the call gives none (ms). Default 120 000. */
  shellTimeoutMs?: number;
  /** shell: upper bound on a requested timeout_ms. Default 600 000. */
  shellMaxTimeoutMs?: number;
  /** shell: output kept per command (the tail, in bytes). Default 64 KiB. */
  shellOutputByteLimit?: number;
  /** shell: extra environment variables for every command. */
  shellEnv?: Record<string, string>;
}

export const defaults = {
  readMaxBytes: 256 * 1024,
  listMaxEntries: 1000,
  globMaxResults: 1000,
  grepMaxMatches: 200,
  grepMaxFileBytes: 1024 * 1024,
  walkMaxEntries: 50_000,
  ignoreDirs: ["node_modules", ".git"],
  shellTimeoutMs: 120_000,
  shellMaxTimeoutMs: 600_000,
  shellOutputByteLimit: 64 * 1024,
} as const;

/** Resolves a tool path inside the session roots (realpath); throws PathAccessError. */
export function resolveToolPath(requested: string, context: ToolContext, mode: PathAccessMode): Promise<string> {
  return resolveInsideRoots(requested, context.roots, { mode, cwd: context.cwd });
}

/** The lexical absolute path, for titles, locations and permission targets. */
export function absoluteFor(requested: string, context: ToolTargetContext): string {
  return toAbsolutePath(requested, context.cwd);
}

export function isNotFound(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "ENOENT";
}

/**
 * Tool failures are results, not exceptions: the model reads the text and can correct
 * itself. Wraps an execute function so refused paths, missing files and bad input come
 * back as `isError: true` results with a clear message.
 */
export function failuresAsResults<I>(
  toolName: string,
  execute: (input: I, context: ToolContext) => Promise<ToolResult>,
): (input: I, context: ToolContext) => Promise<ToolResult> {
  return async (input, context) => {
    try {
      return await execute(input, context);
    } catch (error) {
      if (error instanceof PathAccessError) return errorResult(error.message, { code: error.code });
      if (error instanceof ToolInputError) return errorResult(error.message);
      if (isAbortError(error) || context.signal.aborted) return errorResult(`${toolName} was cancelled`, { cancelled: true });
      return errorResult(`${toolName} failed: ${errorMessage(error)}`);
    }
  };
}

/** Cuts text to at most `maxBytes` UTF-8 bytes, at a character boundary. */
export function truncateUtf8(text: string, maxBytes: number): { text: string; truncated: boolean } {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= maxBytes) return { text, truncated: false };
  let end = maxBytes;
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return { text: bytes.subarray(0, end).toString("utf8"), truncated: true };
}
