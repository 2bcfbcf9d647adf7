import { stat } from "node:fs/promises";
import { z } from "zod";
import type { ToolResult } from "../../core/index.js";
import { defineTool } from "../define.js";
import type { CommandResult, Tool } from "../types.js";
import { absoluteFor, defaults, failuresAsResults, resolveToolPath } from "./common.js";
import { errorResult } from "../define.js";
import type { BuiltinToolOptions } from "./common.js";

const input = z.object({
  command: z.string().describe("Shell command line, run with /bin/sh -c"),
  cwd: z.string().optional().describe("Working directory inside the workspace; defaults to the session's"),
  timeout_ms: z.number().int().min(1).optional().describe("Timeout in milliseconds (default 120000)"),
});

/** The `shell` tool's input, as validated. */
export type ShellInput = z.output<typeof input>;

/**
 * The `shell` tool: runs a command line through the session's `CommandRunner` (a client terminal, or a local process
 * group, sandboxed when configured), with a time bound the model may raise up to `shellMaxTimeoutMs`.
 */
export function shellTool(options: BuiltinToolOptions = {}): Tool<ShellInput> {
  const defaultTimeout = options.shellTimeoutMs ?? defaults.shellTimeoutMs;
  const maxTimeout = options.shellMaxTimeoutMs ?? defaults.shellMaxTimeoutMs;
  const byteLimit = options.shellOutputByteLimit ?? defaults.shellOutputByteLimit;
  return defineTool({
    name: "shell",
    description:
      "Run a shell command (/bin/sh -c) in the workspace and return its combined stdout and stderr and its exit code. " +
      `Long output keeps its last ${Math.round(byteLimit / 1024)} KiB. The command and everything it starts are killed on timeout or cancel.`,
    kind: "execute",
    input,
    title: (i) => `Run \`${oneLine(i.command)}\``,
    locations: () => [],
    target: (i, c) => ({ paths: [absoluteFor(i.cwd ?? ".", c)], command: i.command.trim() }),
    execute: failuresAsResults("shell", async (i, ctx) => {
      if (i.command.trim().length === 0) return errorResult("command is empty");
      const cwd = await resolveToolPath(i.cwd ?? ".", ctx, "read");
      const isDir = await stat(cwd).then((s) => s.isDirectory(), () => false);
      if (!isDir) return errorResult(`working directory not found: ${i.cwd ?? ctx.cwd}`);
      const timeoutMs = Math.min(i.timeout_ms ?? defaultTimeout, maxTimeout);
      const result = await ctx.commands.run({
        command: i.command,
        cwd,
        timeoutMs,
        outputByteLimit: byteLimit,
        env: options.shellEnv,
        signal: ctx.signal,
        onOutput: (text) => ctx.progress({ text }),
        onTerminal: (terminalId) => ctx.progress({ terminalId }),
      });
      return toToolResult(result, { timeoutMs, byteLimit });
    }),
  });
}

function toToolResult(result: CommandResult, facts: { timeoutMs: number; byteLimit: number }): ToolResult {
  const lines: string[] = [];
  if (result.truncated) lines.push(`[output truncated; showing the last ${facts.byteLimit} bytes]`);
  if (result.output.length > 0) lines.push(result.output.endsWith("\n") ? result.output.slice(0, -1) : result.output);
  lines.push(...(result.notes ?? []));
  if (result.cancelled) lines.push("[cancelled; the command and its child processes were killed]");
  else if (result.timedOut) lines.push(`[timed out after ${facts.timeoutMs} ms; the command and its child processes were killed]`);
  else if (result.exitCode !== null) lines.push(`[exit code: ${result.exitCode}]`);
  else if (result.signal !== null) lines.push(`[killed by ${result.signal}]`);
  const data = {
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: result.timedOut,
    truncated: result.truncated,
    cancelled: result.cancelled,
    durationMs: result.durationMs,
  };
  const toolResult: ToolResult = { text: lines.join("\n"), isError: result.exitCode !== 0, data };
  if (result.terminalId !== undefined) toolResult.terminalId = result.terminalId;
  return toolResult;
}

function oneLine(command: string): string {
  const flat = command.trim().replace(/\s+/g, " ");
  return flat.length > 80 ? `${flat.slice(0, 79)}…` : flat;
}
