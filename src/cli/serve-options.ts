import { parseArgs } from "node:util";
import type { LogLevel } from "../core/index.js";

export type ApproveMode = "ask" | "auto-reads" | "auto-all" | "deny";
const approveModes: readonly ApproveMode[] = ["ask", "auto-reads", "auto-all", "deny"];
const logLevels: readonly LogLevel[] = ["debug", "info", "warn", "error", "silent"];

export interface ServeOptions {
  help: boolean;
  /** From --model or AGENTKIT_MODEL; undefined → pickDefaultModelSpec. */
  model: string | undefined;
  baseUrl: string | undefined;
  approve: ApproveMode;
  maxSessions: number;
  logLevel: LogLevel;
  /** --local-tools: run file and shell tools here even when the client offers fs/terminal. */
  localTools: boolean;
  /** --mcp-startup-timeout: bound on each session MCP server's start-up (ms). */
  mcpStartupTimeoutMs: number;
}

/** A bad command line: the message says what to fix (exit 2). */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

export const serveHelp = `Usage: agentkit-acp serve [options]

Serves the agentkit agent over the Agent Client Protocol on stdin/stdout — the command an
editor (Zed, JetBrains, acpx, …) launches. stdout carries only ACP messages; logs go to stderr.
Exits 0 when stdin closes; SIGTERM/SIGINT cancel running turns (their prompts answer
"cancelled") and exit.

Options:
  --model provider:model   the model, e.g. anthropic:claude-sonnet-4-5, openai:gpt-4.1,
                           openrouter:anthropic/claude-sonnet-4.5, ollama:qwen3,
                           openai-compatible:NAME (with --base-url), or demo.
                           Default: AGENTKIT_MODEL, else the first provider whose key is set
                           (ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY), else the
                           labelled demo model (no LLM; its first reply says how to configure one).
  --base-url URL           provider base URL (default: AGENTKIT_BASE_URL, else the provider's)
  --approve MODE           how tool calls are approved (default: ask):
                             ask         every tool call asks the editor (session/request_permission)
                             auto-reads  reads/searches inside the workspace run without asking;
                                         edits and commands ask the editor
                             auto-all    everything inside the workspace runs without asking
                             deny        reads run; edits and commands are refused
                           Paths outside the session's workspace roots are always refused.
  --max-sessions N         open sessions allowed at once (default 32)
  --local-tools            run the file and shell tools on this machine even when the editor
                           offers its file system (fs/*) or terminals (terminal/*); by default
                           they are used when offered (unsaved buffers, the editor's terminal)
  --mcp-startup-timeout MS bound on each MCP server's start-up from session/new (default 10000);
                           a server that fails or hangs is skipped with a warning
  --log-level LEVEL        debug | info | warn | error | silent (default info; stderr)
  -h, --help               show this help

Environment:
  AGENTKIT_MODEL           model spec when --model is not given
  AGENTKIT_BASE_URL        base URL when --base-url is not given
  ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY, AGENTKIT_API_KEY   provider keys

Testing only: --model scripted:FILE.json plays a fixed JSON script instead of a model
(see src/cli/scripted-script.ts); it exists for the test suite and bench/stream.ts.
`;

export function parseServeOptions(argv: string[], env: Readonly<Record<string, string | undefined>>): ServeOptions {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        model: { type: "string" },
        "base-url": { type: "string" },
        approve: { type: "string" },
        "max-sessions": { type: "string" },
        "log-level": { type: "string" },
        "local-tools": { type: "boolean" },
        "mcp-startup-timeout": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const approve = (values.approve as string | undefined) ?? "ask";
  if (!approveModes.includes(approve as ApproveMode)) throw new UsageError(`--approve must be one of ${approveModes.join(", ")} (got "${approve}")`);
  const logLevel = (values["log-level"] as string | undefined) ?? "info";
  if (!logLevels.includes(logLevel as LogLevel)) throw new UsageError(`--log-level must be one of ${logLevels.join(", ")} (got "${logLevel}")`);
  const maxText = (values["max-sessions"] as string | undefined) ?? "32";
  const maxSessions = Number(maxText);
  if (!/^\d+$/.test(maxText) || maxSessions < 1) throw new UsageError(`--max-sessions must be a positive integer (got "${maxText}")`);
  const mcpText = (values["mcp-startup-timeout"] as string | undefined) ?? "10000";
  const mcpStartupTimeoutMs = Number(mcpText);
  if (!/^\d+$/.test(mcpText) || mcpStartupTimeoutMs < 1) throw new UsageError(`--mcp-startup-timeout must be a positive number of milliseconds (got "${mcpText}")`);
  const model = nonEmpty(values.model as string | undefined) ?? nonEmpty(env.AGENTKIT_MODEL);
  if (values.model !== undefined && nonEmpty(values.model as string) === undefined) throw new UsageError("--model needs a value such as anthropic:claude-sonnet-4-5 or demo");
  const baseUrl = nonEmpty(values["base-url"] as string | undefined);
  if (baseUrl !== undefined && !URL.canParse(baseUrl)) throw new UsageError(`--base-url must be a URL such as http://127.0.0.1:11434/v1 (got "${baseUrl}")`);
  return {
    help: values.help === true,
    model,
    baseUrl,
    approve: approve as ApproveMode,
    maxSessions,
    logLevel: logLevel as LogLevel,
    localTools: values["local-tools"] === true,
    mcpStartupTimeoutMs,
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}
