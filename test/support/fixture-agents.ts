import { buildSync } from "esbuild";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// The fixture agents (test/fixtures/agents/*.mjs, written on the official SDK) are started some
// hundreds of times per suite run. Each start resolved, read and compiled the SDK and zod module
// by module: about 0.2 s of CPU; one bundled file of the same code takes half that (measured with
// fixture-agent.mjs on Node 20: 0.20 -> 0.10 s). The global setup bundles them (esbuild, same code,
// same ES module semantics) into a git-ignored directory; tests start the bundles.
const sourceDir = fileURLToPath(new URL("../fixtures/agents/", import.meta.url));
const bundleDir = join(sourceDir, ".bundle");
const root = fileURLToPath(new URL("../..", import.meta.url));

/** The path to start for fixture agent `name` (e.g. "fixture-agent.mjs"): its bundle. */
export function agentFixture(name: string): string {
  return join(bundleDir, name);
}

/** Directory of the bundled fixture agents (same file names as test/fixtures/agents). */
export const agentFixturesDir = bundleDir;

/** Called by the global setup: bundles each fixture agent whose bundle is missing or older than its source or the lockfile. */
export function bundleFixtureAgents(): void {
  const lock = statSync(join(root, "package-lock.json")).mtimeMs;
  const stale = readdirSync(sourceDir)
    .filter((name) => name.endsWith(".mjs"))
    .filter((name) => {
      const built = statSync(join(bundleDir, name), { throwIfNoEntry: false })?.mtimeMs ?? 0;
      return built < Math.max(lock, statSync(join(sourceDir, name)).mtimeMs);
    });
  if (stale.length === 0) return;
  buildSync({
    absWorkingDir: root,
    entryPoints: stale.map((name) => join(sourceDir, name)),
    outdir: bundleDir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    // Bundled CommonJS dependencies call require(): give the ES module one.
    banner: { js: 'import { createRequire as __fixtureRequire } from "node:module"; const require = __fixtureRequire(import.meta.url);' },
    logLevel: "warning",
  });
}
