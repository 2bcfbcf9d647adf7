import { ConfigError } from "../core/errors.js";
import type { PermissionMode } from "../tools/policy.js";
import type { ApproveMode } from "./defaults.js";

// What the operator's flags allow a client: kept apart from serve.ts so that parsing the flags loads nothing else.

/** What `serve --client-mcp` allows clients to name in session/new: none; http (http, sse, acp: no commands); all (also stdio). */
export type ClientMcpPolicy = "none" | "http" | "all";
export const CLIENT_MCP_POLICIES: readonly ClientMcpPolicy[] = ["none", "http", "all"];

/** The modes from the least to the most a session may do without a human's answer. */
const modeOrder: readonly PermissionMode[] = ["read-only", "ask", "auto-edit"];

/**
 * The operator's ceiling: `--mode` is the most a client may switch to; `--approve deny` allows
 * read-only at most (nothing that asks is approved, and a mode that runs edits without asking
 * would undo that). The modes above it are withheld from clients, with the reason they are told.
 * Undefined when nothing is withheld. ConfigError for `--approve deny` with a `--mode` above read-only.
 */
export function modeCeilingFor(approve: ApproveMode, mode: PermissionMode | undefined): { withheld: PermissionMode[]; reason: string } | undefined {
  if (approve === "deny" && mode !== undefined && mode !== "read-only") {
    throw new ConfigError(`--mode ${mode} is above what --approve deny allows (read-only: nothing that asks is approved); use --mode read-only or leave --mode out`);
  }
  const ceiling = mode ?? (approve === "deny" ? "read-only" : undefined);
  if (ceiling === undefined) return undefined;
  const flags = [approve === "deny" ? "--approve deny" : "", mode !== undefined ? `--mode ${mode}` : ""].filter(Boolean).join(" ");
  const withheld = modeOrder.slice(modeOrder.indexOf(ceiling) + 1);
  return withheld.length === 0 ? undefined : { withheld, reason: `the operator's ceiling is ${ceiling} (${flags})` };
}
