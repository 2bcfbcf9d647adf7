/**
 * The environment of the processes an agent starts for a session (commands, terminals, stdio
 * MCP servers): a short allow-list, never the server's secrets (its bearer token, store URL,
 * provider keys) unless the operator names them (`serve --child-env NAME,…`).
 */
const baseNames = [
  "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ", "TMPDIR", "COLORTERM", "NO_COLOR", "FORCE_COLOR",
  // The delegation recursion guard (acp/delegation/guard.ts): an agent a command starts must see how deep it is.
  "AGENTKIT_DELEGATION_DEPTH", "AGENTKIT_DELEGATION_CHAIN",
];

/** The allow-listed variables of `env`, plus the operator's `extraNames` (see above). */
export function childEnvironment(env: Readonly<Record<string, string | undefined>>, extraNames: readonly string[] = []): Record<string, string> {
  const allowed = new Set([...baseNames, ...extraNames]);
  const child: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && (allowed.has(name) || name.startsWith("LC_"))) child[name] = value;
  }
  return child;
}
