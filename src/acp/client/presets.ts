import { join } from "node:path";
import { packageRoot } from "../../core/package-files.js";

/** A named launch command for a well-known ACP agent (nothing is installed automatically). */
export interface AgentPreset {
  name: string;
  description: string;
  command: string;
  args: string[];
}

export function agentPresets(): Record<string, AgentPreset> {
  return {
    claude: {
      name: "claude",
      description: "Claude Code through the ACP adapter (needs ANTHROPIC_API_KEY or a Claude login)",
      command: "npx",
      args: ["-y", "@agentclientprotocol/claude-agent-acp"],
    },
    codex: {
      name: "codex",
      description: "OpenAI Codex through Zed's ACP adapter (needs an OpenAI key or ChatGPT login)",
      command: "npx",
      args: ["-y", "@zed-industries/codex-acp"],
    },
    gemini: {
      name: "gemini",
      description: "Gemini CLI in ACP mode, `gemini --acp` (the `gemini` command must be installed)",
      command: "gemini",
      args: ["--acp"],
    },
    opencode: {
      name: "opencode",
      description: "OpenCode's ACP server (the `opencode` command must be installed)",
      command: "opencode",
      args: ["acp"],
    },
    self: {
      name: "self",
      description: "this package's own agent: agentkit-acp serve",
      command: process.execPath,
      args: [join(packageRoot(), "bin", "agentkit-acp.js"), "serve"],
    },
  };
}

/** How to start `agent`: a preset's command, or else `agent` as a whole command line (run by the shell). */
export function agentLaunch(agent: string): { command: string; args: string[] } | { shellLine: string } {
  const preset = agentPresets()[agent];
  return preset ? { command: preset.command, args: preset.args } : { shellLine: agent };
}
