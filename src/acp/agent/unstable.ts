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

const UNSTABLE_FEATURES: readonly (keyof AcpUnstableFeatures)[] = ["fork", "title", "status", "archive", "authStatus", "providers", "mcpAcp"];

export function resolveUnstableFeatures(value: boolean | Partial<AcpUnstableFeatures> = true): AcpUnstableFeatures {
  if (typeof value === "boolean") return { fork: value, title: value, status: value, archive: value, authStatus: value, providers: value, mcpAcp: value };
  for (const key of Object.keys(value)) {
    if (!UNSTABLE_FEATURES.includes(key as keyof AcpUnstableFeatures)) throw new ConfigError(`unknown unstable feature "${key}" (known: ${UNSTABLE_FEATURES.join(", ")})`);
  }
  return { fork: value.fork ?? true, title: value.title ?? true, status: value.status ?? true, archive: value.archive ?? true, authStatus: value.authStatus ?? true, providers: value.providers ?? true, mcpAcp: value.mcpAcp ?? true };
}

/** Title given by a client: whitespace collapsed, at most 200 characters; undefined when empty. */
export function normalizeTitle(title: string): string | undefined {
  const clean = title.trim().replace(/\s+/g, " ");
  if (clean.length === 0) return undefined;
  return clean.length > 200 ? `${clean.slice(0, 199).trimEnd()}…` : clean;
}
