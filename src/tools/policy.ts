import picomatch from "picomatch";
import type { ToolKind } from "../core/index.js";
import { isInsideRoots } from "./paths.js";
import type { PermissionCheck, PermissionDecision, PermissionPolicy, PermissionVerdict } from "./types.js";

/**
 * One permission rule. Every condition given must hold for the rule to match; a rule with
 * no conditions matches every call. Matching is deliberately conservative:
 * - `paths`: picomatch globs against the absolute target paths. For allow/ask rules *every*
 *   target path must match (an allow for `/ws/**` cannot be widened by also touching
 *   `/etc/passwd`); for deny rules *one* matching path is enough. A call with no target
 *   paths never matches a `paths` rule.
 * - `commandPrefix`: matches the command or a word-bounded prefix of it (`npm test` matches
 *   `npm test -- --watch`, not `npm tests`). Allow/ask rules never match a command line
 *   that chains, substitutes or redirects (`; & | < > $ \``, newlines); deny rules match if
 *   any chained part starts with the prefix.
 * - `insideRoots`: true = every target path is inside the session's roots (realpath'd, see
 *   resolveInsideRoots); false = at least one is outside. Calls without paths count as inside.
 */
export interface PermissionRule {
  /** Tool names (picomatch globs, e.g. `github__*`). */
  tool?: string | string[];
  kind?: ToolKind | ToolKind[];
  paths?: string | string[];
  commandPrefix?: string | string[];
  insideRoots?: boolean;
  verdict: PermissionVerdict;
  /** Shown to the user or the model; defaults to a description of the rule. */
  reason?: string;
}

/** A policy that may abstain (undefined): the next policy in `composePolicies` decides. */
export interface PartialPermissionPolicy {
  evaluate(check: PermissionCheck): PermissionDecision | undefined | Promise<PermissionDecision | undefined>;
}

/** The rules of a `RulePermissionPolicy` (first match wins) and the decision when none matches. */
export interface RulePermissionPolicyOptions {
  rules: PermissionRule[];
  /** When no rule matches. Default: ask. */
  fallback?: PermissionDecision;
}

/** Ordered rules, first match wins, then the fallback. */
export class RulePermissionPolicy implements PermissionPolicy {
  readonly rules: readonly PermissionRule[];
  readonly fallback: PermissionDecision;

  constructor(options: RulePermissionPolicyOptions) {
    this.rules = [...options.rules];
    this.fallback = options.fallback ?? { verdict: "ask", reason: "no rule allows this call" };
  }

  /** The first matching rule's decision, or undefined. */
  async match(check: PermissionCheck): Promise<PermissionDecision | undefined> {
    for (const rule of this.rules) {
      if (await ruleMatches(rule, check)) return { verdict: rule.verdict, reason: rule.reason ?? describeRule(rule) };
    }
    return undefined;
  }

  async evaluate(check: PermissionCheck): Promise<PermissionDecision> {
    return (await this.match(check)) ?? this.fallback;
  }
}

/**
 * The first decision any policy gives (in order), else `fallback`. A RulePermissionPolicy
 * takes part with its rules only (it abstains instead of using its own fallback).
 */
export function composePolicies(
  policies: ReadonlyArray<PermissionPolicy | PartialPermissionPolicy>,
  fallback: PermissionDecision = { verdict: "ask", reason: "no policy decided" },
): PermissionPolicy {
  return {
    async evaluate(check) {
      for (const policy of policies) {
        const decision = policy instanceof RulePermissionPolicy ? await policy.match(check) : await policy.evaluate(check);
        if (decision !== undefined) return decision;
      }
      return fallback;
    },
  };
}

/**
 * The permission modes the reference agent offers: ask before edits and commands, edit without asking (commands still
 * ask), or read only.
 */
export type PermissionMode = "ask" | "auto-edit" | "read-only";

/** The `PermissionMode` values, in the order they are offered. */
export const permissionModes: readonly PermissionMode[] = ["ask", "auto-edit", "read-only"];

const outsideRoots: PermissionRule = {
  insideRoots: false,
  verdict: "deny",
  reason: "the call touches a path outside the workspace roots",
};
const readsAllowed: PermissionRule = { kind: ["read", "search"], verdict: "allow", reason: "reads inside the workspace are allowed" };

/**
 * Rules of each mode (without the fallback, which is always ask):
 * - ask: outside the roots → deny; reads/searches → allow; edits/deletes/moves → ask;
 *   commands → ask; everything else (MCP tools, fetch, think) → ask.
 * - auto-edit: as ask, but edits inside the roots → allow (deletes, moves, commands still ask).
 * - read-only: outside → deny; reads → allow; edits/deletes/moves → deny; commands → deny.
 */
function permissionRulesForMode(mode: PermissionMode): PermissionRule[] {
  switch (mode) {
    case "ask":
      return [
        outsideRoots,
        readsAllowed,
        { kind: ["edit", "delete", "move"], verdict: "ask", reason: "file changes need approval" },
        { kind: "execute", verdict: "ask", reason: "commands need approval" },
      ];
    case "auto-edit":
      return [
        outsideRoots,
        readsAllowed,
        { kind: "edit", verdict: "allow", reason: "edits inside the workspace are allowed (auto-edit mode)" },
        { kind: ["delete", "move"], verdict: "ask", reason: "deleting or moving files needs approval" },
        { kind: "execute", verdict: "ask", reason: "commands need approval" },
      ];
    case "read-only":
      return [
        outsideRoots,
        readsAllowed,
        { kind: ["edit", "delete", "move"], verdict: "deny", reason: "the session is read-only" },
        { kind: "execute", verdict: "deny", reason: "commands are not allowed in read-only mode" },
      ];
  }
}

/** Options of `permissionPolicyForMode` and `defaultPermissionPolicy`. */
export interface ModePolicyOptions {
  /** Rules checked before the mode's own (first match wins). */
  rules?: PermissionRule[];
}

/** The policy for a permission mode; `options.rules` come first. */
export function permissionPolicyForMode(mode: PermissionMode, options: ModePolicyOptions = {}): RulePermissionPolicy {
  return new RulePermissionPolicy({
    rules: [...(options.rules ?? []), ...permissionRulesForMode(mode)],
    fallback: { verdict: "ask", reason: "this tool needs approval" },
  });
}

/** Outside the roots → deny; reads inside → allow; edits and commands → ask; anything else → ask. */
export function defaultPermissionPolicy(options: ModePolicyOptions = {}): RulePermissionPolicy {
  return permissionPolicyForMode("ask", options);
}

async function ruleMatches(rule: PermissionRule, check: PermissionCheck): Promise<boolean> {
  if (rule.tool !== undefined && !picomatch(rule.tool)(check.toolName)) return false;
  if (rule.kind !== undefined && !asList(rule.kind).includes(check.kind)) return false;
  if (rule.paths !== undefined && !pathsMatch(rule.paths, check.target.paths, rule.verdict)) return false;
  if (rule.commandPrefix !== undefined && !commandMatches(rule.commandPrefix, check.target.command, rule.verdict)) return false;
  if (rule.insideRoots !== undefined && (await allInsideRoots(check)) !== rule.insideRoots) return false;
  return true;
}

function pathsMatch(globs: string | string[], paths: readonly string[], verdict: PermissionVerdict): boolean {
  if (paths.length === 0) return false;
  const matches = picomatch(globs, { dot: true });
  return verdict === "deny" ? paths.some((p) => matches(p)) : paths.every((p) => matches(p));
}

const shellControl = /[;&|<>$`\n\r]/;

function commandMatches(prefixes: string | string[], command: string | undefined, verdict: PermissionVerdict): boolean {
  if (command === undefined) return false;
  const trimmed = command.trim();
  const startsWith = (text: string, prefix: string): boolean => text === prefix || text.startsWith(`${prefix} `) || text.startsWith(`${prefix}\t`);
  if (verdict === "deny") {
    const parts = trimmed.split(/&&|\|\||[;&|\n\r]|\$\(|`/).map((p) => p.trim().replace(/^[({]\s*/, ""));
    return asList(prefixes).some((prefix) => parts.some((part) => startsWith(part, prefix.trim())));
  }
  if (shellControl.test(trimmed)) return false;
  return asList(prefixes).some((prefix) => startsWith(trimmed, prefix.trim()));
}

async function allInsideRoots(check: PermissionCheck): Promise<boolean> {
  const mode = check.kind === "read" || check.kind === "search" ? "read" : "write";
  for (const target of check.target.paths) {
    if (!(await isInsideRoots(target, check.roots, { mode, cwd: check.cwd }))) return false;
  }
  return true;
}

function asList<T>(value: T | T[]): T[] {
  return Array.isArray(value) ? value : [value];
}

function describeRule(rule: PermissionRule): string {
  const parts: string[] = [];
  if (rule.tool !== undefined) parts.push(`tool ${asList(rule.tool).join("|")}`);
  if (rule.kind !== undefined) parts.push(`kind ${asList(rule.kind).join("|")}`);
  if (rule.paths !== undefined) parts.push(`paths ${asList(rule.paths).join("|")}`);
  if (rule.commandPrefix !== undefined) parts.push(`command ${asList(rule.commandPrefix).join("|")}`);
  if (rule.insideRoots !== undefined) parts.push(rule.insideRoots ? "inside the roots" : "outside the roots");
  return `${rule.verdict} by rule (${parts.join(", ") || "any call"})`;
}
