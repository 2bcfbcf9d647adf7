import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { debuglog } from "node:util";
import vm from "node:vm";

/**
 * Loads a command's bundle (dist/bin/NAME.cjs, built by scripts/build-bin.mjs) with V8's code
 * cache: the code compiled in an earlier run is reused instead of compiled again. Compiling the
 * ~2 MB `serve` needs (zod, the SDK, the AI SDK providers and ours) was most of its start-up on
 * Node 20, which has no compile cache for modules (Node 22's `module.enableCompileCache` does the
 * same for files Node loads itself).
 *
 * The cache is written when a process that had none (or one V8 refused) exits, after the run
 * compiled what it used: the hot path of a prompt is in it, not only start-up. Like Node's own
 * compile cache it is not rewritten after that (making it costs ~17 ms of CPU for `serve`). It
 * lives next to the bundles (dist/bin/.cache, rebuilt with them) or in `NODE_COMPILE_CACHE`;
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off. Any failure to read or write it only costs the
 * compile. V8 checks the data against the source, its own version and flags, and refuses
 * what does not match. `NODE_DEBUG=agentkit-code-cache` says what happened.
 */

const debug = debuglog("agentkit-code-cache");
export function loadBundle(bundleDir: string, name: string, env: NodeJS.ProcessEnv = process.env): Record<string, unknown> {
  const file = join(bundleDir, `${name}.cjs`);
  // The bundle is ASCII (build-bin.mjs checks): a one-byte string, half the memory of UTF-16.
  const source = readFileSync(file, "latin1");
  const cacheFile = env.NODE_DISABLE_COMPILE_CACHE === "1" ? undefined : join(env.NODE_COMPILE_CACHE || join(bundleDir, ".cache"), `agentkit-acp-${name}-${process.version}-${process.arch}.bin`);
  const cached = cacheFile === undefined ? undefined : readCache(cacheFile);
  // The bundle is a CommonJS module's wrapper function (build-bin.mjs). The concatenation makes
  // V8 copy the source into its heap: readFileSync returns a text this large as an external
  // string, and with one the functions compiled later (lazily) made a first prompt's model
  // request leave ~23 ms later (bench/agents.ts, 2 interleaved runs of 9).
  const script = new vm.Script(`${source}\n`, {
    filename: file,
    cachedData: cached,
    // import() of what the bundle leaves to Node (native add-ons, files loaded by path).
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const used = cached !== undefined && !script.cachedDataRejected;
  debug("%s: %s", name, cacheFile === undefined ? "off" : cached === undefined ? "no cache yet" : used ? `cache used (${cached.length} bytes)` : "cache refused by V8");
  if (cacheFile !== undefined && !used) process.once("exit", () => writeCache(cacheFile, script));
  const module = { exports: {} as Record<string, unknown> };
  const run = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: unknown, filename: string, dirname: string) => void;
  run(module.exports, createRequire(file), module, file, dirname(file));
  return module.exports;
}

function readCache(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/** At exit: the code compiled by now, written whole or not at all (rename). */
function writeCache(file: string, script: vm.Script): void {
  try {
    const data = script.createCachedData();
    mkdirSync(dirname(file), { recursive: true });
    const partial = `${file}.${process.pid}`;
    writeFileSync(partial, data);
    renameSync(partial, file);
    debug("cache written (%d bytes)", data.length);
  } catch (error) {
    debug("cache not written: %s", error instanceof Error ? error.message : String(error));
  }
}
