import { isAbsolute, resolve, sep } from "node:path";
import { createRequire } from "node:module";
import type * as acp from "@agentclientprotocol/sdk/unstable";
import type picomatchType from "picomatch";

// picomatch (CommonJS) is loaded at the first path rule, not with the client: importing it
// starts Node's CommonJS loader, a noticeable part of a client's start-up.
let picomatch: typeof picomatchType | undefined;

/** What a rule or a policy's default does with a request: allow it, deny it, or ask the `ask` handler. */
export type PermissionAction = "allow" | "deny" | "ask";

/**
 * A declarative rule; the first rule whose every given condition matches decides.
 * `path` globs are matched against all paths a call touches (ACP `locations` and path-like
 * `rawInput` fields); relative globs resolve against each session root. An `allow`/`ask`
 * rule needs *every* path to match, a `deny` rule needs *one*; a call without paths never
 * matches a `path` rule.
 */
export interface ClientPermissionRule {
  /** A label shown in events, logs and questions. */
  name?: string;
  kind?: acp.ToolKind | acp.ToolKind[];
  /** Regular expression (a string keeps rules JSON-friendly) tested against the title. */
  title?: string | RegExp;
  path?: string | string[];
  /** Word-wise command prefixes: `"git status"` matches `git status --short`, not `git statusx`. */
  command?: string | string[];
  /** Every path must lie inside the session roots (cwd + additional directories). */
  insideRoots?: boolean;
  action: PermissionAction;
  /** Answer with the agent's `allow_always` / `reject_always` option when it offers one. */
  always?: boolean;
}

/** What a permission question is about, normalized from a tool call or a host request. */
export interface PermissionSubject {
  source: "tool_call" | "host";
  sessionId: string | undefined;
  toolCallId: string | undefined;
  title: string;
  kind: acp.ToolKind;
  rawInput: unknown;
  /** Absolute, normalized paths the call touches. */
  paths: string[];
  command: string | undefined;
  /** Session roots: cwd first, then additional directories. */
  roots: string[];
}

const PATH_KEYS = [
  "path", "file_path", "filePath", "filepath", "abs_path", "absolute_path", "notebook_path", "file",
  "target_file", "source", "destination", "old_path", "new_path", "dir", "directory",
];

/** Paths from ACP locations and the usual path-like rawInput fields, resolved against `cwd`. */
export function extractPaths(locations: acp.ToolCallLocation[] | null | undefined, rawInput: unknown, cwd: string | undefined): string[] {
  const found = new Set<string>();
  const add = (p: unknown): void => {
    if (typeof p !== "string" || p === "") return;
    if (!isAbsolute(p) && cwd === undefined) return;
    found.add(cwd === undefined ? resolve(p) : resolve(cwd, p));
  };
  for (const loc of locations ?? []) add(loc.path);
  if (rawInput && typeof rawInput === "object") {
    const input = rawInput as Record<string, unknown>;
    for (const key of PATH_KEYS) add(input[key]);
    if (Array.isArray(input.paths)) for (const p of input.paths) add(p);
  }
  return [...found];
}

/** The command line of an execute-style call (`command` string or argv array, `cmd`). */
export function extractCommand(rawInput: unknown): string | undefined {
  if (!rawInput || typeof rawInput !== "object") return undefined;
  const input = rawInput as Record<string, unknown>;
  const value = input.command ?? input.cmd;
  if (typeof value === "string") {
    const args = Array.isArray(input.args) ? input.args.filter((a): a is string => typeof a === "string") : [];
    return [value, ...args].join(" ").trim();
  }
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) {
    const argv = value as string[];
    // `["bash", "-lc", "git status"]`: the script is what the user recognises.
    if (argv.length === 3 && /(^|\/)(ba|z|da)?sh$/.test(argv[0] ?? "") && /^-l?c$/.test(argv[1] ?? "")) return argv[2];
    return argv.join(" ");
  }
  return undefined;
}

export function insideRoots(path: string, roots: string[]): boolean {
  return roots.some((root) => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep));
}

function list<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

function commandMatches(command: string, prefix: string): boolean {
  const words = command.trim().split(/\s+/);
  const want = prefix.trim().split(/\s+/);
  return want.length > 0 && want.every((w, i) => words[i] === w);
}

function pathMatcher(globs: string[], roots: string[]): (path: string) => boolean {
  const absolute = globs.flatMap((g) => (isAbsolute(g) ? [g] : roots.map((r) => `${r.replace(/\/+$/, "")}/${g}`)));
  picomatch ??= createRequire(import.meta.url)("picomatch") as typeof picomatchType;
  return picomatch(absolute, { dot: true });
}

/** Does `rule` match `subject`? Conditions left out of the rule always match. */
export function ruleMatches(rule: ClientPermissionRule, subject: PermissionSubject): boolean {
  const kinds = list(rule.kind);
  if (kinds.length > 0 && !kinds.includes(subject.kind)) return false;
  if (rule.title !== undefined) {
    const re = typeof rule.title === "string" ? new RegExp(rule.title) : rule.title;
    if (!re.test(subject.title)) return false;
  }
  const prefixes = list(rule.command);
  if (prefixes.length > 0) {
    const command = subject.command;
    if (command === undefined || !prefixes.some((p) => commandMatches(command, p))) return false;
  }
  if (rule.insideRoots && !subject.paths.every((p) => insideRoots(p, subject.roots))) return false;
  const globs = list(rule.path);
  if (globs.length > 0) {
    if (subject.paths.length === 0) return false;
    const match = pathMatcher(globs, subject.roots);
    const hit = rule.action === "deny" ? subject.paths.some(match) : subject.paths.every(match);
    if (!hit) return false;
  }
  return true;
}

/** Validates rules loaded from JSON (a permissions file); throws with the offending index. */
export function parseRules(value: unknown): ClientPermissionRule[] {
  if (!Array.isArray(value)) throw new Error("`rules` must be an array");
  return value.map((raw, i) => {
    if (!raw || typeof raw !== "object") throw new Error(`rule ${i} must be an object`);
    const r = raw as Record<string, unknown>;
    if (r.action !== "allow" && r.action !== "deny" && r.action !== "ask") throw new Error(`rule ${i}: action must be allow, deny or ask`);
    const strings = (key: string): void => {
      const v = r[key];
      if (v !== undefined && typeof v !== "string" && !(Array.isArray(v) && v.every((x) => typeof x === "string"))) {
        throw new Error(`rule ${i}: ${key} must be a string or an array of strings`);
      }
    };
    for (const key of ["kind", "path", "command", "name"]) strings(key);
    if (r.title !== undefined) {
      if (typeof r.title !== "string") throw new Error(`rule ${i}: title must be a regular-expression string`);
      new RegExp(r.title);
    }
    return r as unknown as ClientPermissionRule;
  });
}
