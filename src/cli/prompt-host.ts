import { readFileSync } from "node:fs";
import type { AcpAgentConfig, ClientPermissionPolicy, HostAuthorize, HostObserver, HostServices } from "../acp/client/index.js";
import { ClientPermissionPolicy as Policy, createFileSystemHost, createTerminalHost, keepReleasedOutput } from "../acp/client/index.js";
import { CommandSandbox, packageRoot } from "../core/index.js";
import { isProtectedPath } from "../core/sandbox-protected.js";
import type { PromptArgs } from "./prompt-args.js";
import { agentSandboxPlan, prepareAgentDirs } from "./prompt-sandbox.js";
import { sandboxNetOption } from "./sandbox-net-flag.js";
import { UsageError } from "./usage.js";

const PRESETS = new Set(["deny", "ask", "allow-reads", "allow-all"]);
type FsMode = "off" | "read" | "read-write";

/** What `prompt` offers the agent, plus the final output of each terminal (for the renderer). */
export interface PromptHostOptions extends Pick<AcpAgentConfig, "additionalDirectories" | "hostServices" | "sandbox"> {
  /** Output a released terminal had, by terminal id (the agent releases before its tool call completes). */
  terminalOutput: (terminalId: string) => string | undefined;
}

/**
 * `prompt`'s host-service flags: `--add-dir DIR` (repeatable) adds session roots; `--fs
 * off|read|read-write` (default read-write) and `--terminal on|off` (default on) offer the
 * client's file system and terminals, confined to the roots (`--cwd` plus `--add-dir`).
 */
export function hostOptionsFromArgs(args: PromptArgs, _policy: ClientPermissionPolicy, permissions: string | undefined = args.permissions, observer?: HostObserver, searchPath?: string): PromptHostOptions {
  const dirs = (args.extra.get("--add-dir") ?? []).map((d) => (d.startsWith("/") ? d : `${args.cwd}/${d}`));
  const fs = single(args, "--fs", ["off", "read", "read-write"], "read-write") as FsMode;
  const terminal = single(args, "--terminal", ["on", "off"], "on");
  const authorize = hostGate(permissions);
  const hostServices: HostServices = {};
  const watch = observer ? { onRequest: observer } : {};
  // A sandboxed agent's fs writes happen here, outside its sandbox: they keep off the protected paths too.
  const fsAuthorize = args.sandbox ? protectedWrites(authorize) : authorize;
  if (fs !== "off") hostServices.fileSystem = createFileSystemHost({ access: fs, ...(fsAuthorize ? { authorize: fsAuthorize } : {}), ...watch });
  const outputs = new Map<string, string>();
  const readOnly = args.extra.get("--sandbox-ro") ?? [];
  if (readOnly.length > 0 && !args.sandbox) throw new UsageError("--sandbox-ro only applies with --sandbox");
  const netAllow = sandboxNetOption(args.extra.get("--sandbox-net") ?? []);
  if (netAllow.length > 0 && !args.sandbox) throw new UsageError("--sandbox-net only applies with --sandbox");
  // Asked for and not available: a usage error naming what to install, never a run without it.
  // The terminals hosted here reach what --sandbox-net names; the agent, its preset's hosts too.
  const sandbox = args.sandbox ? CommandSandbox.create({ netAllow, ...(searchPath !== undefined ? { path: searchPath } : {}) }) : undefined;
  const plan = args.sandbox ? agentSandboxPlan(args.agent, args.model, netAllow) : undefined;
  const protect = plan ? prepareAgentDirs(plan) : [];
  const terminalSandbox = sandbox ? { sandbox: { sandbox, writable: [args.cwd, ...dirs] } } : {};
  if (terminal === "on") hostServices.terminal = keepReleasedOutput(createTerminalHost({ ...(authorize ? { authorize } : {}), ...watch, ...terminalSandbox }), outputs);
  return {
    // The agent sees our own package (the `self` agent runs from it) and the directories named.
    ...(sandbox && plan
      ? { sandbox: { sandbox, readOnly: [packageRoot(), ...plan.readOnly, ...protect, ...readOnly.map((d) => (d.startsWith("/") ? d : `${args.cwd}/${d}`))], writable: plan.writable, home: plan.home, network: plan.allow } }
      : {}),
    ...(dirs.length > 0 ? { additionalDirectories: dirs } : {}),
    hostServices,
    terminalOutput: (id) => outputs.get(id),
  };
}

/** Refuses fs writes to the sandbox's protected paths (`.git/hooks`, `.git/config`, …), then asks `next`. */
function protectedWrites(next: HostAuthorize | undefined): HostAuthorize {
  return (request) => {
    if (request.kind === "fs_write" && isProtectedPath(request.resolvedPath, request.roots)) return { deny: "--sandbox: a protected path (docs/sandbox.md#protected-paths-inside-the-writable-roots)" };
    return next ? next(request) : "allow";
  };
}

function single(args: PromptArgs, flag: string, allowed: string[], fallback: string): string {
  const values = args.extra.get(flag) ?? [];
  if (values.length > 1) throw new UsageError(`${flag} may be given once`);
  const value = values[0] ?? fallback;
  if (!allowed.includes(value)) throw new UsageError(`${flag} must be one of ${allowed.join(", ")} (got "${value}")`);
  return value;
}

/**
 * Host calls are gated by the explicit allow/deny rules of a `--permissions FILE` (e.g. deny
 * writes outside a sub-tree, deny commands by prefix); what no rule matches is allowed, since
 * the tool call behind it was already approved through session/request_permission and asking
 * again per file read would double every question. The presets `deny` and `allow-reads` allow
 * reads only (inside the roots): an agent that does not ask cannot write or run commands
 * through us. `ask` and `allow-all` gate nothing beyond the roots.
 */
export function hostGate(permissions: string | undefined): HostAuthorize | undefined {
  if (permissions === "deny" || permissions === "allow-reads") {
    const preset = `--permissions ${permissions} (reads only)`;
    return (request) => (request.kind === "fs_read" ? "allow" : { deny: preset });
  }
  if (permissions === undefined || PRESETS.has(permissions)) return undefined;
  let json: { rules?: Array<{ action?: string }> } & Record<string, unknown>;
  try {
    json = JSON.parse(readFileSync(permissions, "utf8")) as typeof json;
  } catch {
    return undefined; // the policy itself reports an unreadable file
  }
  const rules = (Array.isArray(json.rules) ? json.rules : []).filter((r) => r.action === "allow" || r.action === "deny");
  if (rules.length === 0) return undefined;
  return Policy.fromJson({ rules, default: "allow", fallback: "deny" }).hostAuthorizer();
}
