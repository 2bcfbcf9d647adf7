import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { AcpAgentConfig } from "../acp/client/config.js";
import { agentPresets } from "../acp/client/presets.js";
import { reportsSandboxOn, sandboxMetaText } from "../core/sandbox.js";
import { netAllowText, parseNetAllow, type NetAllowEntry } from "../core/sandbox-net.js";
import { stripControls } from "./terminal-safe.js";
import { parseModelSpec, pickDefaultModelSpec, resolveBaseUrl } from "../model/model-id.js";

/** What `prompt --sandbox` gives the agent process beyond the workspace (docs/sandbox.md). */
export interface AgentSandboxPlan {
  /** Its preset's provider hosts plus `--sandbox-net`. */
  allow: NetAllowEntry[];
  /** Config and credentials (only those that exist are bound). */
  readOnly: string[];
  /** Caches and state. */
  writable: string[];
  /** Inside `writable`: kept read-only, created empty when missing (`AgentSandboxNeeds.protect`; a trailing `/` = a directory). */
  protect: string[];
  /** The user's home path: a scratch directory in the sandbox, with the above bound in it. */
  home: string;
}

/**
 * The sandbox needs of `agent` (a preset name, or a command line: no needs beyond `extra`):
 * `~/` paths expanded against the home directory; for our own agent, the host of the model it
 * will call (`--model`, else AGENTKIT_MODEL or the first provider with a key; its base URL).
 */
export function agentSandboxPlan(agent: string, model: string | undefined, extra: readonly NetAllowEntry[], env: NodeJS.ProcessEnv = process.env): AgentSandboxPlan {
  const home = env.HOME && env.HOME.startsWith("/") ? env.HOME : homedir();
  const expand = (path: string) => (path.startsWith("~/") ? join(home, path.slice(2)) : path);
  const needs = agentPresets()[agent]?.sandbox ?? { allow: [], readOnly: [], writable: [], protect: [] };
  const allow = [...parseNetAllow([`allow=${needs.allow.join(",")}`]), ...(agent === "self" ? selfModelHosts(model, env) : []), ...extra];
  return { allow, readOnly: needs.readOnly.map(expand), writable: needs.writable.map(expand), protect: needs.protect.map(expand), home };
}

/**
 * Creates the plan's missing writable directories (as the agent would: one missing would not be
 * bound, and the agent would fill the scratch home instead) and its missing protected entries,
 * empty (so they can be bound read-only); returns the protected paths to bind.
 */
export function prepareAgentDirs(plan: AgentSandboxPlan): string[] {
  for (const dir of plan.writable) mkdirSync(dir, { recursive: true, mode: 0o700 });
  return plan.protect.map((entry) => {
    const path = entry.replace(/\/+$/, "");
    if (entry.endsWith("/")) mkdirSync(path, { recursive: true, mode: 0o700 });
    else if (!existsSync(path)) writeFileSync(path, path.endsWith(".json") ? "{}\n" : "", { mode: 0o600 });
    return path;
  });
}

/** `host:port` of the base URL our own agent's model is called at; none for scripted, demo or unknown specs. */
function selfModelHosts(model: string | undefined, env: NodeJS.ProcessEnv): NetAllowEntry[] {
  try {
    const spec = parseModelSpec(model ?? pickDefaultModelSpec(env).spec);
    if (spec.provider === "demo") return [];
    const url = new URL(resolveBaseUrl(spec, undefined, env));
    const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    return parseNetAllow([`allow=${url.hostname}:${port}`]);
  } catch {
    return [];
  }
}

/** What `prompt --sandbox` tells the user before the agent starts. */
export function agentSandboxLine(config: AcpAgentConfig): string {
  const box = config.sandbox;
  if (!box) return "";
  const network = box.network === undefined || box.network === "host" ? "the host's (not limited)" : netAllowText(box.network);
  const writable = [config.cwd, ...(config.additionalDirectories ?? []), ...(box.writable ?? [])].join(", ");
  return `sandbox: the agent runs in ${box.sandbox.engine}: writable ${writable}; network: ${network}; hosted terminals sandboxed (network: ${netAllowText(box.sandbox.netAllow)})`;
}

/**
 * `agent reports: …` from its initialize `_meta` when the agent says its commands run sandboxed
 * (and what they may reach), cleaned for the terminal; undefined otherwise — an agent without a
 * sandbox is the usual case on a laptop and not worth a line on every run (`check` reports both).
 */
export function agentSandboxReport(meta: unknown): string | undefined {
  const text = sandboxMetaText(meta);
  return text === undefined || !reportsSandboxOn(meta) ? undefined : `agent reports: ${stripControls(text)}`;
}
