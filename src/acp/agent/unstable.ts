import { ConfigError } from "../../core/index.js";

/**
 * The unstable ACP v1 methods the runtime serves (through the SDK's `/unstable` entrypoint).
 * Each is on by default and advertised only when on and possible (the store-backed ones need a
 * `sessionStore`); an embedder switches one off, or all with `false`.
 */
export interface AcpUnstableFeatures {
  /** `session/fork` (needs a store). */
  fork: boolean;
  /** `session/set_title` (needs a store); titles in `session/list` and `session_info_update` come regardless. */
  title: boolean;
  /** `session/status`. */
  status: boolean;
  /** `session/archive` / `session/unarchive` and the `archived` filter of `session/list` (needs a store). */
  archive: boolean;
  /** `auth/status` and `auth/status_update` (when the authentication reports a status). */
  authStatus: boolean;
  /** `providers/list`, `set`, `disable` (when the runtime has `.providers(…)`). */
  providers: boolean;
  /** MCP over ACP: `acp` MCP servers in session/new reached through `mcp/message` (when `.mcpTransports({ acp: true })`). */
  mcpAcp: boolean;
}

// Every feature once (the type check demands each key of AcpUnstableFeatures); the rest derives from it.
const ALL_ON: Record<keyof AcpUnstableFeatures, true> = { fork: true, title: true, status: true, archive: true, authStatus: true, providers: true, mcpAcp: true };
const UNSTABLE_FEATURES = Object.keys(ALL_ON) as (keyof AcpUnstableFeatures)[];

/** The features on: all (`true`, the default) or none (`false`), or those not switched off by name (an unknown name throws). */
export function resolveUnstableFeatures(value: boolean | Partial<AcpUnstableFeatures> = true): AcpUnstableFeatures {
  const resolved: AcpUnstableFeatures = { ...ALL_ON };
  if (typeof value !== "boolean") {
    for (const key of Object.keys(value)) {
      if (!UNSTABLE_FEATURES.includes(key as keyof AcpUnstableFeatures)) throw new ConfigError(`unknown unstable feature "${key}" (known: ${UNSTABLE_FEATURES.join(", ")})`);
    }
  }
  for (const key of UNSTABLE_FEATURES) resolved[key] = typeof value === "boolean" ? value : (value[key] ?? true);
  return resolved;
}

/** Title given by a client: whitespace collapsed, at most 200 characters; undefined when empty. */
export function normalizeTitle(title: string): string | undefined {
  const clean = title.trim().replace(/\s+/g, " ");
  if (clean.length === 0) return undefined;
  return clean.length > 200 ? `${clean.slice(0, 199).trimEnd()}…` : clean;
}
