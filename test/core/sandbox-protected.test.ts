import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { acquirePlaceholders, isProtectedPath, protectedGitPaths, protectedPathsOf, protectedRootPaths, protectionPlan } from "../../src/core/sandbox-protected.js";
import { bubblewrapArgs, seatbeltProfile } from "../../src/core/index.js";
import { tempDir } from "../support/temp.js";

/** The protected-paths plan (docs/sandbox.md "Protected paths"); the attack itself: test/cli/sandbox-protected.e2e.test.ts. */
function repo(): string {
  const root = realpathSync(tempDir());
  mkdirSync(join(root, ".git", "hooks"), { recursive: true });
  writeFileSync(join(root, ".git", "HEAD"), "ref: refs/heads/main\n");
  writeFileSync(join(root, ".git", "config"), "[core]\n");
  return root;
}

describe("protectionPlan", () => {
  it("every entry says why", () => {
    for (const entry of [...protectedGitPaths, ...protectedRootPaths]) expect(entry.reason.length).toBeGreaterThan(20);
  });

  it("binds existing entries read-only, pins .git and .claude in place, a placeholder for a missing commondir", () => {
    const root = repo();
    mkdirSync(join(root, ".claude", "commands"), { recursive: true });
    writeFileSync(join(root, ".claude", "settings.json"), "{}");
    writeFileSync(join(root, ".mcp.json"), "{}");
    const plan = protectionPlan([root], undefined);
    expect(plan.readOnly.sort()).toEqual([".claude/commands", ".claude/settings.json", ".git/config", ".git/hooks", ".mcp.json"].map((p) => join(root, p)));
    expect(plan.pins.sort()).toEqual([join(root, ".claude"), join(root, ".git")]);
    expect(plan.placeholders).toEqual([{ path: join(root, ".git", "commondir"), content: ".\n" }]);
  });

  it("missing entries outside a git directory are not created; a missing .git (git init in the sandbox) neither", () => {
    const root = realpathSync(tempDir());
    expect(protectionPlan([root], undefined)).toEqual({ readOnly: [], pins: [], placeholders: [] });
    expect(existsSync(join(root, ".git"))).toBe(false);
  });

  it("git's missing hooks and config are created empty (as git init makes them); config.worktree only when the config turns it on", () => {
    const root = realpathSync(tempDir());
    mkdirSync(join(root, ".git"));
    writeFileSync(join(root, ".git", "HEAD"), "ref: refs/heads/main\n");
    let plan = protectionPlan([root], undefined);
    expect(readFileSync(join(root, ".git", "config"), "utf8")).toBe("");
    expect(plan.readOnly).toContain(join(root, ".git", "hooks"));
    writeFileSync(join(root, ".git", "config"), "[extensions]\n\tworktreeConfig = true\n");
    plan = protectionPlan([root], undefined);
    expect(plan.placeholders.map((p) => p.path)).toEqual([join(root, ".git", "commondir"), join(root, ".git", "config.worktree")]);
  });

  it("a linked worktree: its .git file, and the gitdir and main repository it points at when writable", () => {
    const main = repo();
    const gitdir = join(main, ".git", "worktrees", "wt");
    mkdirSync(gitdir, { recursive: true });
    writeFileSync(join(gitdir, "HEAD"), "ref: refs/heads/wt\n");
    writeFileSync(join(gitdir, "commondir"), "../..\n");
    const wt = realpathSync(tempDir());
    writeFileSync(join(wt, ".git"), `gitdir: ${gitdir}\n`);
    const plan = protectionPlan([wt, main], undefined);
    expect(plan.readOnly).toEqual(expect.arrayContaining([join(wt, ".git"), join(gitdir, "commondir"), join(main, ".git", "hooks"), join(main, ".git", "config")]));
    expect(plan.pins).toEqual(expect.arrayContaining([join(main, ".git"), join(main, ".git", "worktrees"), gitdir]));
    // Not writable: not visible in the sandbox, nothing to protect there.
    expect(protectionPlan([wt], undefined).readOnly).toEqual([join(wt, ".git")]);
  });

  it("submodules' git directories under .git/modules", () => {
    const root = repo();
    const sub = join(root, ".git", "modules", "vendor", "lib");
    mkdirSync(join(sub, "hooks"), { recursive: true });
    writeFileSync(join(sub, "HEAD"), "ref: refs/heads/main\n");
    writeFileSync(join(sub, "config"), "");
    const plan = protectionPlan([root], undefined);
    expect(plan.readOnly).toEqual(expect.arrayContaining([join(sub, "hooks"), join(sub, "config")]));
    expect(plan.placeholders.map((p) => p.path)).toContain(join(sub, "commondir"));
  });

  it("the home's shell start-up files and git/ssh config, only when the root is the home", () => {
    const home = realpathSync(tempDir());
    for (const name of [".bashrc", ".profile", ".gitconfig"]) writeFileSync(join(home, name), "");
    mkdirSync(join(home, ".ssh"));
    expect(protectionPlan([home], home).readOnly.sort()).toEqual([".bashrc", ".gitconfig", ".profile", ".ssh"].map((p) => join(home, p)));
    expect(protectionPlan([home], undefined).readOnly).toEqual([]);
  });

  it("isProtectedPath: a check creates nothing, names git's entries that are missing, and sees through a link in a root's path", () => {
    const root = realpathSync(tempDir());
    mkdirSync(join(root, ".git"));
    writeFileSync(join(root, ".git", "HEAD"), "ref: refs/heads/main\n");
    const linked = join(realpathSync(tempDir()), "link");
    symlinkSync(root, linked);
    expect(isProtectedPath(join(root, ".git", "hooks", "pre-commit"), [root])).toBe(true);
    expect(isProtectedPath(join(linked, ".git", "config"), [linked])).toBe(true);
    expect(isProtectedPath(join(linked, ".git", "config"), [root])).toBe(true);
    expect(isProtectedPath(join(root, "src", "a.ts"), [linked])).toBe(false);
    expect(existsSync(join(root, ".git", "hooks"))).toBe(false);
    expect(existsSync(join(root, ".git", "config"))).toBe(false);
  });

  it("a symlinked entry: its target is bound (when inside a writable root)", () => {
    const root = realpathSync(tempDir());
    mkdirSync(join(root, "shared-vscode"));
    symlinkSync("shared-vscode", join(root, ".vscode"));
    expect(protectionPlan([root], undefined).readOnly).toEqual([join(root, "shared-vscode")]);
  });
});

describe("placeholders", () => {
  it("are shared by concurrent commands and removed when the last one ends, unless replaced", () => {
    const root = repo();
    const path = join(root, ".git", "commondir");
    const first = acquirePlaceholders([{ path, content: ".\n" }]);
    const second = acquirePlaceholders([{ path, content: ".\n" }]);
    expect(readFileSync(path, "utf8")).toBe(".\n");
    first();
    first();
    expect(existsSync(path)).toBe(true);
    second();
    expect(existsSync(path)).toBe(false);
  });
});

describe("bubblewrap binds", () => {
  it("a read-only path inside a writable root is bound after it (the most specific path wins)", () => {
    const args = bubblewrapArgs({ writable: ["/w", "/h/.claude"], cwd: "/w", tmpBytes: 1, readOnly: ["/pkg", "/h/.claude/settings.json"], protect: { readOnly: ["/w/.git/hooks", "/w/.git/config"], pins: ["/w/.git"] } });
    const binds = args.flatMap((a, i) => (a === "--bind" || a === "--ro-bind" ? [`${a} ${args[i + 1]}`] : [])).filter((b) => /\/(w|h|pkg)\b/.test(b));
    expect(binds).toEqual(["--ro-bind /pkg", "--bind /w", "--bind /h/.claude", "--bind /w/.git", "--ro-bind /h/.claude/settings.json", "--ro-bind /w/.git/hooks", "--ro-bind /w/.git/config"]);
  });
});

describe("Seatbelt (macOS; unverified: no macOS here, the profile's text is checked)", () => {
  it("denies writes to the protected paths after allowing the roots, and renaming the directories above them", () => {
    const root = repo();
    const protect = protectedPathsOf([root], undefined);
    expect(protect).toEqual(expect.arrayContaining([join(root, ".git", "hooks"), join(root, ".git", "config"), join(root, ".git", "commondir"), join(root, ".mcp.json"), join(root, ".claude", "settings.json")]));
    const profile = seatbeltProfile({ writable: [root], protect });
    const allow = profile.indexOf("(allow file-write*");
    const deny = profile.indexOf(`(deny file-write* (subpath "${join(root, ".claude")}`);
    expect(allow).toBeGreaterThan(0);
    expect(profile.indexOf(`(subpath "${join(root, ".git", "hooks")}")`, allow)).toBeGreaterThan(allow);
    expect(profile).toContain(`(deny file-write* (literal "${join(root, ".git")}"))`);
    expect(deny === -1 || deny > allow).toBe(true);
  });
});
