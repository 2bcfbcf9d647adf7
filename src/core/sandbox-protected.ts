import { lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, unlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, resolve, sep } from "node:path";

/**
 * Paths that stay read-only inside a sandbox's writable roots (docs/sandbox.md "Protected
 * paths"): what a later UNSANDBOXED program trusts and runs. A command that could write
 * `.git/hooks/pre-commit` or `core.fsmonitor` in `.git/config` would run outside the sandbox at
 * the user's next `git commit` or `git status`. The one list, with why each entry is there.
 */
export interface ProtectedPath {
  /** Relative to each writable root (git entries: to each git directory found there). */
  path: string;
  reason: string;
}

/** In each git directory (`.git` of a root, a linked worktree's gitdir, a submodule's under `.git/modules`). */
export const protectedGitPaths: readonly ProtectedPath[] = [
  { path: "hooks", reason: "git runs its hooks on commit, merge, checkout, rebase and push (created empty when missing, as git init does)" },
  { path: "config", reason: "core.fsmonitor, core.hooksPath, core.sshCommand, core.pager, filter/diff drivers and aliases are commands git runs on status, diff, commit, fetch (created empty when missing)" },
  { path: "commondir", reason: "sends git to another directory's config and hooks; when missing, a placeholder `.` (git's own reading of a missing one) is bound for the command's duration" },
  { path: "config.worktree", reason: "read as config when extensions.worktreeConfig is on; when missing (and on), an empty placeholder is bound for the command's duration" },
];

/** In each writable root. */
export const protectedRootPaths: readonly ProtectedPath[] = [
  { path: ".git", reason: "when a file (a linked worktree's or submodule's `gitdir:` pointer): rewritten, it sends git to a directory the command filled" },
  { path: ".gitmodules", reason: "submodule URLs and paths that a later `git submodule update` fetches and checks out" },
  { path: ".vscode", reason: "VS Code tasks run on folder open, settings naming executables (terminal profiles, formatters, interpreters), launch configurations" },
  { path: ".idea", reason: "JetBrains run configurations, external tools and startup tasks" },
  { path: ".mcp.json", reason: "project MCP servers: commands Claude Code and other MCP clients start" },
  { path: ".claude/settings.json", reason: "Claude Code hooks (commands it runs) and permission rules" },
  { path: ".claude/settings.local.json", reason: "the same, the user's local copy (where \"always allow\" is written)" },
  { path: ".claude/commands", reason: "Claude Code slash commands (their !`…` lines run)" },
  { path: ".claude/agents", reason: "Claude Code subagents: prompts and tool grants" },
];

/** In a writable root that is the user's home directory. */
export const protectedHomePaths: readonly ProtectedPath[] = [
  ...[".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin"].map((path) => ({ path, reason: "shell start-up files: run by every later login or interactive shell" })),
  { path: ".gitconfig", reason: "the user's git config: the same commands as .git/config, for every repository" },
  { path: ".config/git", reason: "the user's git config (XDG location) and its hooks" },
  { path: ".ssh", reason: "authorized_keys, and ProxyCommand/LocalCommand in ssh's config" },
];

/** Submodule git directories looked for under `.git/modules`: beyond this many, the whole `modules` directory is read-only. */
const MAX_SUBMODULES = 32;

/** What one command's sandbox binds to keep the list read-only. */
export interface ProtectionPlan {
  /** Existing entries, bound read-only after the writable roots (real paths). */
  readOnly: string[];
  /**
   * Directories between a writable root and an entry, bound onto themselves (still writable): a
   * mount point cannot be renamed or removed, so `mv .git .git-old && mkdir .git` cannot move an
   * entry out of its place and put a writable one there.
   */
  pins: string[];
  /** Missing git redirect files: a file with this content is created, bound read-only, and removed when the command ends. */
  placeholders: Array<{ path: string; content: string }>;
}

/**
 * The protected entries of `writable` (real paths of the roots): existing ones read-only, git's
 * missing `hooks` and `config` created empty (what git init makes), missing redirect files as
 * placeholders. Other missing entries are not created: a command may create them (docs/sandbox.md
 * "Residual risks"), as it may create a `.git` with `git init`.
 */
export function protectionPlan(writable: readonly string[], home: string | undefined = realOrUndefined(homedir())): ProtectionPlan {
  return collectProtection(writable, home, true).plan;
}

/** `protectionPlan`, and the git directories it found; `create`: make a git directory's missing hooks and config. */
function collectProtection(writable: readonly string[], home: string | undefined, create: boolean): { plan: ProtectionPlan; gitDirs: Set<string> } {
  const plan: ProtectionPlan = { readOnly: [], pins: [], placeholders: [] };
  const inside = (path: string) => writable.some((root) => path === root || path.startsWith(`${root}${sep}`));
  const gitDirs = new Set<string>();
  for (const root of writable) {
    const git = join(root, ".git");
    const kind = entryKind(git);
    if (kind === "dir") gitDirs.add(git);
    if (kind === "file") {
      const target = gitdirTarget(git);
      if (target !== undefined && inside(target)) gitDirs.add(target);
    }
    const entries = [...protectedRootPaths.filter((entry) => entry.path !== ".git" || kind === "file"), ...(root === home ? protectedHomePaths : [])];
    for (const entry of entries) addExisting(plan, join(root, entry.path), inside);
  }
  for (const dir of [...gitDirs]) {
    // A linked worktree's gitdir names the main repository's (hooks and config live there).
    const common = readSmall(join(dir, "commondir"))?.trim();
    const target = common ? realOrUndefined(resolve(dir, common)) : undefined;
    if (target !== undefined && inside(target)) gitDirs.add(target);
    for (const sub of submoduleGitDirs(plan, join(dir, "modules"), inside)) gitDirs.add(sub);
  }
  for (const dir of gitDirs) protectGitDir(plan, dir, inside, create);
  plan.pins = [...new Set(plan.readOnly.concat(plan.placeholders.map((p) => p.path)).flatMap((path) => ancestorsBelowRoot(path, writable)))];
  plan.readOnly = [...new Set(plan.readOnly)];
  return { plan, gitDirs };
}

function protectGitDir(plan: ProtectionPlan, dir: string, inside: (path: string) => boolean, create: boolean): void {
  const hooks = join(dir, "hooks");
  const config = join(dir, "config");
  try {
    if (create && entryKind(hooks) === undefined) mkdirSync(hooks, { mode: 0o755 });
    if (create && entryKind(config) === undefined) writeFileSync(config, "", { flag: "wx", mode: 0o644 });
  } catch {
    // not ours to create (read-only, raced): whatever is there now is bound below if it exists
  }
  addExisting(plan, hooks, inside);
  addExisting(plan, config, inside);
  const commondir = join(dir, "commondir");
  if (entryKind(commondir) !== undefined) addExisting(plan, commondir, inside);
  else plan.placeholders.push({ path: commondir, content: ".\n" });
  const worktreeConfig = join(dir, "config.worktree");
  if (entryKind(worktreeConfig) !== undefined) addExisting(plan, worktreeConfig, inside);
  else if (/worktreeconfig\s*=\s*(true|yes|on|1)/i.test(readSmall(config) ?? "")) plan.placeholders.push({ path: worktreeConfig, content: "" });
}

/** Git directories of submodules (a directory with a HEAD, nested ones under their own `modules`). */
function submoduleGitDirs(plan: ProtectionPlan, modules: string, inside: (path: string) => boolean): string[] {
  const found: string[] = [];
  const pending: Array<{ dir: string; depth: number }> = [{ dir: modules, depth: 0 }];
  while (pending.length > 0) {
    const { dir, depth } = pending.pop() ?? { dir: "", depth: 0 };
    let names: string[];
    try {
      names = readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    } catch {
      continue;
    }
    for (const name of names) {
      const child = join(dir, name);
      if (entryKind(join(child, "HEAD")) === "file") {
        found.push(child);
        pending.push({ dir: join(child, "modules"), depth: depth + 1 });
      } else if (depth < 8) pending.push({ dir: child, depth: depth + 1 });
    }
    if (found.length > MAX_SUBMODULES) {
      // Too many to bind one by one: all of them read-only (git writes in those submodules fail).
      addExisting(plan, modules, inside);
      return [];
    }
  }
  return found;
}

function addExisting(plan: ProtectionPlan, path: string, inside: (path: string) => boolean): void {
  if (entryKind(path) === undefined) return;
  // A symlinked entry: its target is bound read-only (the link itself cannot be a mount point).
  const real = realOrUndefined(path);
  if (real !== undefined && inside(real)) plan.readOnly.push(real);
}

/** Directories strictly between the deepest writable root holding `path` and `path`. */
export function ancestorsBelowRoot(path: string, writable: readonly string[]): string[] {
  const root = writable.filter((r) => path.startsWith(`${r}${sep}`)).sort((a, b) => b.length - a.length)[0];
  if (root === undefined) return [];
  const dirs: string[] = [];
  for (let dir = dirname(path); dir !== root && dir.startsWith(`${root}${sep}`); dir = dirname(dir)) dirs.push(dir);
  return dirs;
}

/** The git directory a `.git` file points at (`gitdir: PATH`), resolved; undefined when unreadable. */
function gitdirTarget(file: string): string | undefined {
  const match = /^gitdir: (.+?)\r?\n?$/.exec(readSmall(file) ?? "");
  return match?.[1] !== undefined ? realOrUndefined(resolve(dirname(file), match[1])) : undefined;
}

function readSmall(file: string): string | undefined {
  try {
    const stat = lstatSync(file);
    return stat.isFile() && stat.size <= 65536 ? readFileSync(file, "utf8") : undefined;
  } catch {
    return undefined;
  }
}

/** What is at `path`, without following a final symlink; undefined when nothing. */
export function entryKind(path: string): "dir" | "file" | "symlink" | undefined {
  try {
    const stat = lstatSync(path);
    return stat.isSymbolicLink() ? "symlink" : stat.isDirectory() ? "dir" : "file";
  } catch {
    return undefined;
  }
}

/** The real path, or undefined when it cannot be resolved. */
export function realOrUndefined(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/**
 * The read-only and writable binds, a parent before what is inside it, so the most specific
 * path wins: a read-only directory inside a writable root stays read-only, and the protected
 * paths (after the pins that keep their directories from being moved) are bound last of all.
 * At equal depth a read-only bind comes first (the same path named both ways is writable).
 */
export function nestedBinds(readOnly: readonly string[], writable: readonly string[], protect: { readOnly: readonly string[]; pins: readonly string[]; placeholders?: ReadonlyArray<{ path: string }> } | undefined): string[] {
  const binds = [
    ...readOnly.map((dir) => ({ flag: "--ro-bind", dir })),
    ...writable.map((dir) => ({ flag: "--bind", dir })),
    ...(protect?.pins ?? []).map((dir) => ({ flag: "--bind", dir })),
    ...[...(protect?.readOnly ?? []), ...(protect?.placeholders ?? []).map((p) => p.path)].map((dir) => ({ flag: "--ro-bind", dir })),
  ];
  const depth = (dir: string) => dir.split("/").filter(Boolean).length;
  return binds
    .map((bind, order) => ({ ...bind, order }))
    .sort((a, b) => depth(a.dir) - depth(b.dir) || a.order - b.order)
    .flatMap(({ flag, dir }) => [flag, dir, dir]);
}

/** Placeholders in use by this process's commands, by path: removed when the last command using one ends. */
const placeholderUsers = new Map<string, { content: string; users: number }>();
let exitHook = false;

/**
 * Creates the plan's placeholders (shared by concurrent commands of this process) and returns
 * the function that releases them; a placeholder is removed when its last user ends, if it still
 * holds what was written (a file someone else put there stays).
 */
export function acquirePlaceholders(placeholders: ProtectionPlan["placeholders"]): () => void {
  const held: string[] = [];
  for (const { path, content } of placeholders) {
    const known = placeholderUsers.get(path);
    if (known) {
      known.users++;
      held.push(path);
      continue;
    }
    try {
      writeFileSync(path, content, { flag: "wx", mode: 0o644 });
      placeholderUsers.set(path, { content, users: 1 });
      held.push(path);
    } catch {
      // it exists now (bound read-only as it is) or cannot be made (bwrap then fails to bind: no command runs)
    }
  }
  if (!exitHook && held.length > 0) {
    exitHook = true;
    process.once("exit", () => {
      for (const [path, { content }] of placeholderUsers) removePlaceholder(path, content);
    });
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    for (const path of held) {
      const known = placeholderUsers.get(path);
      if (!known || --known.users > 0) continue;
      placeholderUsers.delete(path);
      removePlaceholder(path, known.content);
    }
  };
}

function removePlaceholder(path: string, content: string): void {
  if (readSmall(path) === content) {
    try {
      unlinkSync(path);
    } catch {
      // gone already
    }
  }
}

/**
 * Every protected path of `writable` for Seatbelt, which denies by path (nothing to create, so
 * missing entries are denied too, except inside a `.git` not there yet: `git init` must work).
 */
export function protectedPathsOf(writable: readonly string[], home: string | undefined = realOrUndefined(homedir())): string[] {
  // Named whether they exist or not: nothing is created for a path check.
  const { plan, gitDirs } = collectProtection(writable, home, false);
  const named = writable.flatMap((root) => [
    ...protectedRootPaths.filter((entry) => entry.path !== ".git").map((entry) => join(root, entry.path)),
    ...(root === home ? protectedHomePaths.map((entry) => join(root, entry.path)) : []),
  ]);
  for (const dir of gitDirs) named.push(...protectedGitPaths.map((entry) => join(dir, entry.path)));
  return [...new Set([...plan.readOnly, ...plan.placeholders.map((p) => p.path), ...named])].sort();
}

/**
 * Whether `path` is, or is inside, a protected path of `roots`: for writes made outside the
 * sandbox on a sandboxed agent's behalf (`prompt --sandbox`'s fs host, serve's file tools),
 * which would otherwise plant what the sandbox keeps read-only. Both sides are compared as real
 * paths (a file not there yet: its directory's), so a link in a root's path changes nothing.
 */
export function isProtectedPath(path: string, roots: readonly string[]): boolean {
  const real = roots.map((root) => realOrUndefined(root)).filter((root): root is string => root !== undefined);
  const target = realOrUndefined(path) ?? join(realOrUndefined(dirname(path)) ?? dirname(path), basename(path));
  return protectedPathsOf(real).some((entry) => target === entry || target.startsWith(`${entry}${sep}`));
}
