import { mkdirSync, realpathSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/core/index.js";
import { mcpServerConfigs } from "../../../src/acp/agent/mcp-servers.js";
import { modeCeilingFor } from "../../../src/serve/bounds.js";
import { AcpModes } from "../../../src/acp/agent/modes.js";
import { checkWorkspaceDirectory, isSafePrincipalName, prepareWorkspaceRoot } from "../../../src/acp/agent/path-params.js";
import { SessionControls } from "../../../src/acp/agent/session-controls.js";
import { tempDir } from "./support.js";

// The pieces of issue #22's boundaries (the real-CLI attacks are in hosting-boundaries.e2e.test.ts).

const dirs: Array<{ remove(): void }> = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

describe("client MCP policy (mcpServerConfigs)", () => {
  const stdio = { name: "local", command: "/bin/sh", args: ["-c", "true"], env: [] };
  const http = { type: "http" as const, name: "web", url: "https://mcp.example.com/mcp", headers: [] };
  it("stdio: false refuses a stdio entry naming its index; http stays; with http and sse off, an http entry is refused too", () => {
    expect(() => mcpServerConfigs([http, stdio], { http: true, sse: true, acp: true, stdio: false })).toThrow(/mcpServers\[1\] \("local"\) is a stdio MCP server/);
    expect(mcpServerConfigs([http], { http: true, sse: true, acp: true, stdio: false })).toHaveLength(1);
    expect(() => mcpServerConfigs([http], { http: false, sse: false, acp: false, stdio: false })).toThrow(/mcpServers\[0\].*does not advertise/);
    expect(mcpServerConfigs([stdio], { http: true, sse: true, acp: true })).toMatchObject([{ transport: "stdio" }]);
    expect(mcpServerConfigs([http], { http: true, sse: true, acp: true, privateAddresses: false })).toMatchObject([{ transport: "http", publicOnly: true }]);
  });
});

describe("operator ceilings", () => {
  it("modeCeilingFor: --mode caps at itself, --approve deny at read-only, deny with a higher --mode is a ConfigError", () => {
    expect(modeCeilingFor("ask", undefined)).toBeUndefined();
    expect(modeCeilingFor("auto-all", "auto-edit")).toBeUndefined();
    expect(modeCeilingFor("ask", "ask")).toEqual({ withheld: ["auto-edit"], reason: "the operator's ceiling is ask (--mode ask)" });
    expect(modeCeilingFor("deny", undefined)).toEqual({ withheld: ["ask", "auto-edit"], reason: "the operator's ceiling is read-only (--approve deny)" });
    expect(modeCeilingFor("deny", "read-only")?.reason).toBe("the operator's ceiling is read-only (--approve deny --mode read-only)");
    expect(() => modeCeilingFor("deny", "ask")).toThrow(ConfigError);
  });

  it("withheld modes are not offered; set_mode to one is -32602 with the reason; a stored session in one opens in the initial mode", () => {
    const withheld = { modes: ["ask", "auto-edit"], reason: "the operator's ceiling is read-only (--approve deny)" };
    const modes = new AcpModes({ initial: "read-only", withheld });
    expect(modes.ids()).toEqual(["read-only"]);
    expect(() => new AcpModes({ initial: "ask", withheld })).toThrow(ConfigError);
    expect(() => new AcpModes({ withheld: { modes: ["yolo"], reason: "x" } })).toThrow(/withheld mode "yolo"/);
    const controls = new SessionControls({ modes, models: undefined }, { modeId: "auto-edit" });
    expect(controls.modeId).toBe("read-only");
    expect(() => controls.setMode("auto-edit")).toThrow(expect.objectContaining({ code: -32602, message: expect.stringContaining('mode "auto-edit" is not allowed: the operator\'s ceiling is read-only') }));
    expect(controls.setMode("read-only")).toBe(false);
  });
});

describe("workspaces (checkWorkspaceDirectory)", () => {
  function root(): { base: string; root: string } {
    const d = tempDir("agentkit-ws-");
    dirs.push(d);
    return { base: d.path, root: prepareWorkspaceRoot(join(d.path, "roots")) };
  }

  it("inside DIR/<principal>/ is accepted (as its real path); `..`, another principal's and a symlink out are refused; unsafe names are refused", () => {
    const { base, root: r } = root();
    const alice = { principal: "alice", workspaceRoot: r };
    expect(checkWorkspaceDirectory(join(r, "alice"), "cwd", alice)).toBe(join(r, "alice"));
    mkdirSync(join(r, "alice", "p"));
    symlinkSync(join(r, "alice", "p"), join(r, "alice", "inside"));
    expect(checkWorkspaceDirectory(join(r, "alice", "inside"), "cwd", alice)).toBe(realpathSync(join(r, "alice", "p")));
    checkWorkspaceDirectory(join(r, "bob"), "cwd", { principal: "bob", workspaceRoot: r });
    for (const path of [join(r, "alice", "..", "bob"), join(r, "bob"), base, "/proc/self"]) {
      expect(() => checkWorkspaceDirectory(path, "cwd", alice), path).toThrow(/cwd .* is outside your workspace/);
    }
    symlinkSync(base, join(r, "alice", "out"));
    expect(() => checkWorkspaceDirectory(join(r, "alice", "out"), "additionalDirectories[0]", alice)).toThrow(/additionalDirectories\[0\] .* is outside your workspace/);
    for (const name of ["..", ".hidden", "a/b", "", "x".repeat(129), "with space"]) {
      expect(isSafePrincipalName(name), name).toBe(false);
      expect(() => checkWorkspaceDirectory(r, "cwd", { principal: name, workspaceRoot: r })).toThrow(/principal name cannot name a workspace/);
    }
    for (const name of ["default", "alice@example.com", "auth0-123_x", "u+1=2"]) expect(isSafePrincipalName(name), name).toBe(true);
  });

  it("without a workspace root, /proc, /sys and /dev (and symlinks into them) are refused; other directories are accepted as given", () => {
    const { base } = root();
    const scope = { principal: "default", workspaceRoot: undefined };
    symlinkSync("/proc/self", join(base, "me"));
    for (const path of ["/proc", "/proc/self", "/sys", "/dev", join(base, "me")]) expect(() => checkWorkspaceDirectory(path, "cwd", scope), path).toThrow(/never a workspace/);
    expect(checkWorkspaceDirectory(base, "cwd", scope)).toBe(base);
  });
});
