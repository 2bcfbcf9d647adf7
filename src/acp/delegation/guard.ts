import { createHash } from "node:crypto";

/** Hops taken to reach this process (0 = not started by a delegation). */
export const DELEGATION_DEPTH_ENV = "AGENTKIT_DELEGATION_DEPTH";
/** JSON array of the delegates on the way here, oldest first: `["reviewer#3f2a…", …]`. */
export const DELEGATION_CHAIN_ENV = "AGENTKIT_DELEGATION_CHAIN";

/**
 * How deep agents may delegate to agents unless `maxDepth` says otherwise; the chain travels in
 * `AGENTKIT_DELEGATION_DEPTH` and a deeper call is refused before spawning.
 */
export const DEFAULT_MAX_DELEGATION_DEPTH = 3;

/** Where this process sits in a delegation chain. */
export interface DelegationContext {
  depth: number;
  /** Delegate ids (`name#hash`), oldest first. */
  chain: string[];
}

/** Reads the context a parent delegation put into the environment (absent: the root). */
export function delegationContextFrom(env: Readonly<Record<string, string | undefined>>): DelegationContext {
  let chain: string[] = [];
  const rawChain = env[DELEGATION_CHAIN_ENV];
  if (rawChain) {
    try {
      const parsed: unknown = JSON.parse(rawChain);
      if (Array.isArray(parsed)) chain = parsed.filter((x): x is string => typeof x === "string");
    } catch {
      // A malformed chain still counts as a hop, so a broken parent cannot reset the guard.
      chain = ["(unreadable chain)"];
    }
  }
  const depthText = env[DELEGATION_DEPTH_ENV];
  const parsedDepth = depthText !== undefined && /^\d+$/.test(depthText) ? Number(depthText) : 0;
  return { depth: Math.max(parsedDepth, chain.length), chain };
}

/**
 * A stable id for a delegate: its name plus a short hash of the command that starts it, so
 * the same program under the same name is recognised however deep in the chain it appears.
 */
export function delegateId(name: string, command: string): string {
  return `${name}#${createHash("sha256").update(command).digest("hex").slice(0, 12)}`;
}

/** Why this hop must not be taken, or undefined when it may. */
export function delegationRefusal(context: DelegationContext, id: string, maxDepth: number): string | undefined {
  const path = [...context.chain.map(displayName), displayName(id)].join(" → ");
  if (context.chain.includes(id)) {
    return `Delegation refused: "${displayName(id)}" is already part of this delegation chain (${path}); an agent delegating to itself would loop.`;
  }
  if (context.depth + 1 > maxDepth) {
    return `Delegation refused: the hop limit of ${maxDepth} nested delegations is reached (${path}). Do the task yourself or return to the caller.`;
  }
  return undefined;
}

/** Environment for the delegated process: one hop deeper, with this delegate appended to the chain. */
export function childDelegationEnv(context: DelegationContext, id: string): Record<string, string> {
  return { [DELEGATION_DEPTH_ENV]: String(context.depth + 1), [DELEGATION_CHAIN_ENV]: JSON.stringify([...context.chain, id]) };
}

function displayName(id: string): string {
  const hash = id.lastIndexOf("#");
  return hash > 0 ? id.slice(0, hash) : id;
}
