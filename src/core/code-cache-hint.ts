/**
 * What the bin's code cache (src/cli/bundles.ts) hears from the command it runs: which optional
 * body of code the process ran (`codeCacheUses("model:anthropic")`: a provider library), and when
 * a unit of work has ended (`codeCacheCheckpoint()`, after a prompt turn), the moment at which the
 * code it compiled can be written for the next run. Both are no-ops unless the process runs from
 * the bin's bundle (a program importing the library has no hook).
 */
export interface CodeCacheHook {
  uses(part: string): void;
  checkpoint(): void;
}

/** Where the loader puts its hook (one registry symbol: the loader and the bundle are separate module instances). */
export const codeCacheHookKey = Symbol.for("agentkit-acp.code-cache");

function hook(): CodeCacheHook | undefined {
  return (globalThis as Record<symbol, CodeCacheHook | undefined>)[codeCacheHookKey];
}

export function codeCacheUses(part: string): void {
  hook()?.uses(part);
}

export function codeCacheCheckpoint(): void {
  hook()?.checkpoint();
}
