import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { agentPresets } from "../../src/acp/client/index.js";
import { CommandSandbox, formatNetAllow, sandboxProxySocket } from "../../src/core/index.js";
import { agentSandboxPlan, agentSandboxReport, prepareAgentDirs } from "../../src/cli/prompt-sandbox.js";

/** The bubblewrap arguments `prompt --sandbox` builds for each vendor preset's agent process. */
const home = realpathSync(mkdtempSync(join(tmpdir(), "agentkit-preset-home-")));
const workspace = realpathSync(mkdtempSync(join(tmpdir(), "agentkit-preset-ws-")));
for (const dir of [".claude", ".codex", ".gemini", ".config/opencode", ".local/share/opencode", ".cache/opencode", ".npm"]) mkdirSync(join(home, dir), { recursive: true });
writeFileSync(join(home, ".claude.json"), "{}");
// Text only (the arguments are checked, never run): stand-in bwrap and prlimit after PATH's own
// let it run where bubblewrap is not installed; where it is, PATH's comes first.
const stubs = mkdtempSync(join(tmpdir(), "agentkit-preset-engine-"));
for (const name of ["bwrap", "prlimit"]) writeFileSync(join(stubs, name), "#!/bin/sh\nexit 1\n", { mode: 0o755 });
const sandbox = CommandSandbox.create({ platform: "linux", path: `${process.env.PATH ?? ""}${delimiter}${stubs}` });
afterAll(() => {
  rmSync(stubs, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

const expected: Record<string, { hosts: string[]; readOnly: string[]; writable: string[]; protect?: string[] }> = {
  // Claude Code keeps its transcripts in ~/.claude (--session resume reads them); its settings, hooks, commands, … stay read-only.
  claude: {
    hosts: ["api.anthropic.com:443", "registry.npmjs.org:443"],
    readOnly: [".claude.json"],
    writable: [".claude", ".npm"],
    protect: [".claude/settings.json", ".claude/settings.local.json", ".claude/CLAUDE.md", ".claude/commands", ".claude/agents", ".claude/hooks", ".claude/skills", ".claude/plugins"],
  },
  // Codex writes its state into CODEX_HOME at start (test/cli/prompt-sandbox-vendor.e2e.test.ts); its config, rules, instructions stay read-only.
  codex: {
    hosts: ["api.openai.com:443", "chatgpt.com:443", "registry.npmjs.org:443"],
    readOnly: [],
    writable: [".codex", ".npm"],
    protect: [".codex/config.toml", ".codex/AGENTS.md", ".codex/rules", ".codex/prompts", ".codex/skills"],
  },
  gemini: { hosts: ["generativelanguage.googleapis.com:443", "cloudcode-pa.googleapis.com:443"], readOnly: [".gemini"], writable: [] },
  opencode: { hosts: ["api.anthropic.com:443", "api.openai.com:443", "models.dev:443"], readOnly: [".config/opencode", ".local/share/opencode"], writable: [".cache/opencode"] },
  self: { hosts: ["api.anthropic.com:443"], readOnly: [], writable: [] },
};

describe.each(Object.keys(expected))("prompt --sandbox --agent %s", (name) => {
  const want = expected[name]!;
  const plan = agentSandboxPlan(name, name === "self" ? "anthropic:claude-sonnet-4-5" : undefined, [], { HOME: home });
  const protect = prepareAgentDirs(plan);
  const wrapped = sandbox.wrap("agent", [], { cwd: workspace, writable: [workspace, ...plan.writable], readOnly: [...plan.readOnly, ...protect], network: { allow: plan.allow }, bounds: false, home: plan.home });
  wrapped.finish("", { code: 0, signal: null });
  const args = wrapped.args;
  const pairs = (flag: string) => args.flatMap((a, i) => (a === flag ? [args[i + 1]] : []));

  it("network: only its provider hosts, through the proxy (no host network)", () => {
    expect(args).not.toContain("--share-net");
    expect(args).toContain("--unshare-all");
    expect(pairs("--ro-bind")).toContain(args[args.indexOf(sandboxProxySocket) - 1]);
    expect(plan.allow.map(formatNetAllow)).toEqual(expect.arrayContaining(want.hosts));
    expect(args.join(" ")).toContain("--setenv HTTPS_PROXY http://127.0.0.1:3128");
  });

  it("a scratch home with its config read-only and its caches writable; nothing else of home", () => {
    const tmpfs = args.indexOf(home, args.indexOf("--perms", args.indexOf("/tmp")));
    expect(args[tmpfs - 1]).toBe("--tmpfs");
    expect(pairs("--setenv").includes("HOME") && args[args.indexOf("HOME") + 1]).toBe(home);
    for (const dir of want.readOnly) {
      expect(pairs("--ro-bind")).toContain(join(home, dir));
      expect(args.lastIndexOf(join(home, dir))).toBeGreaterThan(tmpfs);
    }
    expect(pairs("--bind").sort()).toEqual([workspace, ...want.writable.map((d) => join(home, d))].sort());
    expect(pairs("--bind")).not.toContain(home);
    expect(pairs("--ro-bind")).not.toContain(home);
  });

  it("what a later unsandboxed run trusts stays read-only inside its writable directories: created empty when missing, bound after them", () => {
    expect(protect.map((p) => p.slice(home.length + 1))).toEqual(want.protect ?? []);
    for (const path of protect) {
      expect(existsSync(path)).toBe(true);
      const writableDir = args.lastIndexOf(join(home, path.slice(home.length + 1).split("/")[0] ?? ""));
      expect(args[args.lastIndexOf(path) - 2]).toBe("--ro-bind");
      expect(args.lastIndexOf(path)).toBeGreaterThan(writableDir);
    }
    if (name === "claude") expect(readFileSync(join(home, ".claude", "settings.json"), "utf8")).toBe("{}\n");
  });
});

it("a command-line agent (no preset) gets no network unless --sandbox-net names some", () => {
  expect(agentSandboxPlan("my-agent --acp", undefined, [], { HOME: home }).allow).toEqual([]);
  expect(agentSandboxPlan("my-agent --acp", undefined, [{ host: "x.example", port: 443 }], { HOME: home }).allow).toEqual([{ host: "x.example", port: 443 }]);
  expect(Object.keys(agentPresets()).sort()).toEqual(Object.keys(expected).sort());
});

it("self: the model's base URL host (AGENTKIT_BASE_URL), none for the demo model", () => {
  expect(agentSandboxPlan("self", "openai-compatible:m", [], { HOME: home, AGENTKIT_BASE_URL: "http://10.0.0.5:8080/v1" }).allow).toEqual([{ host: "10.0.0.5", port: 8080 }]);
  expect(agentSandboxPlan("self", "demo", [], { HOME: home }).allow).toEqual([]);
});

it("what the agent reports about its sandbox, control characters removed", () => {
  expect(agentSandboxReport({ agentkit: { sandbox: { mode: "workspace", engine: "bubblewrap", network: { allow: ["a.example:443"] } } } })).toBe("agent reports: the agent's commands run sandboxed (bubblewrap; workspace writable; network: only a.example:443)");
  expect(agentSandboxReport({ agentkit: { sandbox: { mode: "workspace", engine: "bubble\u001b[2Jwrap", network: "off" } } })).not.toContain("\u001b");
  expect(agentSandboxReport({})).toBeUndefined();
  expect(agentSandboxReport({ agentkit: { sandbox: { mode: "off" } } })).toBeUndefined();
});
