import { join } from "node:path";
import { packageRoot } from "../../core/package-files.js";

/** A named launch command for a well-known ACP agent (nothing is installed automatically). */
export interface AgentPreset {
  name: string;
  description: string;
  command: string;
  args: string[];
  /** What the agent needs inside `prompt --sandbox` (docs/sandbox.md); `~/` is the user's home. */
  sandbox: AgentSandboxNeeds;
}

/**
 * What a preset agent needs to work inside `prompt --sandbox`: the hosts it calls, and the paths it reads or writes
 * outside the workspace.
 */
export interface AgentSandboxNeeds {
  /** `HOST[:PORT]` it calls: its model provider (and the npm registry when started through npx). */
  allow: string[];
  /** Its configuration and credentials: read-only. */
  readOnly: string[];
  /** Its caches and state: writable. */
  writable: string[];
  /**
   * Inside its writable directories, what a later UNSANDBOXED run of the same agent trusts and
   * runs (settings with hooks, MCP servers, permission rules, instructions): kept read-only.
   * Missing ones are created empty first (a trailing `/` = a directory; a `.json` file gets
   * `{}`), the same to the agent as absent, so they can be bound.
   */
  protect: string[];
}

const NPX = { allow: ["registry.npmjs.org:443"], writable: ["~/.npm"] };
const none = { readOnly: [], writable: [], protect: [] };

/**
 * The launch presets of well-known ACP agents (`prompt --agent NAME`), by name. Nothing is installed: most start
 * through `npx`.
 */
export function agentPresets(): Record<string, AgentPreset> {
  return {
    claude: {
      name: "claude",
      description: "Claude Code through the ACP adapter (needs ANTHROPIC_API_KEY or a Claude login)",
      command: "npx",
      args: ["-y", "@agentclientprotocol/claude-agent-acp"],
      sandbox: {
        allow: ["api.anthropic.com:443", "console.anthropic.com:443", "claude.ai:443", "statsig.anthropic.com:443", ...NPX.allow],
        // ~/.claude holds its transcripts (projects/, needed by --session resume), sessions/, backups/, plugin caches: writable.
        readOnly: ["~/.claude.json", "~/.config/claude"],
        writable: ["~/.claude", ...NPX.writable],
        // Hooks, permission rules, commands, subagents, skills, plugins (code), instructions: read-only.
        protect: ["~/.claude/settings.json", "~/.claude/settings.local.json", "~/.claude/CLAUDE.md", "~/.claude/commands/", "~/.claude/agents/", "~/.claude/hooks/", "~/.claude/skills/", "~/.claude/plugins/"],
      },
    },
    codex: {
      name: "codex",
      description: "OpenAI Codex through Zed's ACP adapter (needs an OpenAI key or ChatGPT login)",
      command: "npx",
      args: ["-y", "@zed-industries/codex-acp"],
      // CODEX_HOME must be writable: Codex creates its helper links, sessions, logs and sqlite state there at start (EROFS otherwise; docs/sandbox.md).
      // Its config (MCP server commands, sandbox_mode, approval policy, notify), rules, instructions and skills stay read-only.
      sandbox: {
        allow: ["api.openai.com:443", "auth.openai.com:443", "chatgpt.com:443", ...NPX.allow],
        // Only when present: an empty one would replace AGENTS.md.
        readOnly: ["~/.codex/AGENTS.override.md"],
        writable: ["~/.codex", ...NPX.writable],
        protect: ["~/.codex/config.toml", "~/.codex/AGENTS.md", "~/.codex/rules/", "~/.codex/prompts/", "~/.codex/skills/"],
      },
    },
    gemini: {
      name: "gemini",
      description: "Gemini CLI in ACP mode, `gemini --acp` (the `gemini` command must be installed)",
      command: "gemini",
      args: ["--acp"],
      sandbox: { ...none, allow: ["generativelanguage.googleapis.com:443", "cloudcode-pa.googleapis.com:443", "oauth2.googleapis.com:443"], readOnly: ["~/.gemini"] },
    },
    opencode: {
      name: "opencode",
      description: "OpenCode's ACP server (the `opencode` command must be installed)",
      command: "opencode",
      args: ["acp"],
      sandbox: {
        allow: ["models.dev:443", "opencode.ai:443", "api.anthropic.com:443", "api.openai.com:443", "openrouter.ai:443"],
        readOnly: ["~/.config/opencode", "~/.local/share/opencode", "~/.opencode"],
        writable: ["~/.cache/opencode"],
        protect: [],
      },
    },
    self: {
      name: "self",
      description: "this package's own agent: agentkit-acp serve",
      command: process.execPath,
      args: [join(packageRoot(), "bin", "agentkit-acp.js"), "serve"],
      // Its provider's host is added from the model it will use (prompt-host.ts); state under ~/.agentkit-acp stays out (HOME is a scratch directory).
      sandbox: { ...none, allow: [] },
    },
  };
}

/** How to start `agent`: a preset's command, or else `agent` as a whole command line (run by the shell). */
export function agentLaunch(agent: string): { command: string; args: string[] } | { shellLine: string } {
  const preset = agentPresets()[agent];
  return preset ? { command: preset.command, args: preset.args } : { shellLine: agent };
}
