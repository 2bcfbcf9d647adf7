import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { accessSync, closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, type Stats, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
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
 * compile cache it is not rewritten after that (making it costs ~17 ms of CPU for `serve`).
 * Its file is named after the bundle's content hash (dist/bin/manifest.json, written by the
 * build): V8 itself checks only the source's length, its own version and flags. It lives in
 * `NODE_COMPILE_CACHE` when set, else next to the bundles (dist/bin/.cache, rebuilt with them),
 * else, where the package is not ours to write (a global install by root), in a directory of
 * the user's own (mode 0700) in the temp directory. V8 runs what a cache holds, so a cache is
 * used only from a file and directory of this user's that no one else can write, and only if its
 * header (an HMAC keyed by the bundle's SHA-256) says it was made for this very source: another
 * local user cannot plant code. `NODE_DISABLE_COMPILE_CACHE=1` turns it
 * off. Any failure to read or write it only costs the compile. `NODE_DEBUG=agentkit-code-cache`
 * says what happened.
 */

const debug = debuglog("agentkit-code-cache");

export function loadBundle(bundleDir: string, name: string, env: NodeJS.ProcessEnv = process.env): Record<string, unknown> {
  const file = join(bundleDir, `${name}.cjs`);
  // The bundle is ASCII (build-bin.mjs checks): a one-byte string, half the memory of UTF-16.
  const source = readFileSync(file, "latin1");
  const cache = cacheLocation(bundleDir, name, env);
  // The cache is trusted for this source only (see readCache): keyed by the source's own hash.
  const key = cache === undefined ? undefined : createHash("sha256").update(source, "latin1").digest();
  const cached = cache === undefined || key === undefined ? undefined : readCache(join(cache.dir, cache.file), key);
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
  debug("%s: %s", name, cache === undefined ? "off" : cached === undefined ? "no cache yet" : used ? `cache used (${cached.length} bytes)` : "cache refused by V8");
  if (cache !== undefined && key !== undefined && !used) process.once("exit", () => writeCache(cache, name, script, key));
  const module = { exports: {} as Record<string, unknown> };
  const run = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: unknown, filename: string, dirname: string) => void;
  run(module.exports, createRequire(file), module, file, dirname(file));
  return module.exports;
}

interface CacheLocation {
  dir: string;
  file: string;
  /** The directory in the temp directory: made here (mode 0700), never recursively. */
  private?: boolean;
}

function cacheLocation(bundleDir: string, name: string, env: NodeJS.ProcessEnv): CacheLocation | undefined {
  if (env.NODE_DISABLE_COMPILE_CACHE === "1") return undefined;
  // The cache is opened without following links; where that flag is missing (0), no cache at all.
  if (!constants.O_NOFOLLOW) return undefined;
  let hash: unknown;
  try {
    hash = (JSON.parse(readFileSync(join(bundleDir, "manifest.json"), "utf8")) as Record<string, unknown>)[name];
  } catch {
    // a build without a manifest: no key to trust a cache by
  }
  if (typeof hash !== "string") return undefined;
  const file = `agentkit-acp-${name}-${hash}-${process.version}-${process.arch}.bin`;
  const location = ((): CacheLocation => {
    if (env.NODE_COMPILE_CACHE) return { dir: env.NODE_COMPILE_CACHE, file };
    try {
      accessSync(bundleDir, constants.W_OK);
      return { dir: join(bundleDir, ".cache"), file };
    } catch {
      return { dir: join(tmpdir(), `agentkit-acp-code-cache-${process.getuid?.() ?? "user"}`), file, private: true };
    }
  })();
  // Made now (atomically: mkdir fails if anyone else's is there), so that it is checked before any read.
  if (location.private) makeDir(location.dir, false);
  return ownedByUs(location.dir) === false ? undefined : location;
}

/**
 * V8 runs what a cache holds: one is used only from a directory of ours (not a link) that nobody
 * else can write to, and only from a file of ours that nobody else can write to (checked on the
 * opened descriptor, see readCache). Undefined: not there (yet).
 */
function ownedByUs(dir: string): boolean | undefined {
  let stat: Stats;
  try {
    stat = lstatSync(dir);
  } catch {
    return undefined;
  }
  const ours = stat.isDirectory() && onlyOurs(stat);
  if (!ours) debug("not using %s: not a directory of this user's that only it can write", dir);
  return ours;
}

function onlyOurs(stat: Stats): boolean {
  const uid = process.getuid?.();
  return (uid === undefined || stat.uid === uid) && (stat.mode & 0o022) === 0;
}

function makeDir(dir: string, recursive: boolean): void {
  try {
    mkdirSync(dir, { recursive, mode: 0o700 });
  } catch {
    // there already (whose: ownedByUs says) or not makeable (then nothing is cached)
  }
}

/**
 * The file opened without following a link; owner and mode checked on that descriptor and the
 * bytes read from it, so nothing swapped in after a check is read. Then the seal: the data was
 * written for this very source (V8 itself compares only the source's length).
 */
function readCache(path: string, key: Buffer): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") debug("not using %s: %s", path, (error as Error).message);
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || !onlyOurs(stat)) {
      debug("not using %s: not a file of this user's that only it can write", path);
      return undefined;
    }
    const sealed = readFileSync(fd);
    const data = sealed.subarray(SEAL.length + 32);
    if (!sealed.subarray(0, SEAL.length).equals(SEAL) || !timingSafeEqual(sealed.subarray(SEAL.length, SEAL.length + 32), seal(key, data).subarray(SEAL.length))) {
      debug("not using %s: not sealed for this bundle", path);
      return undefined;
    }
    return data;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** The cache file's header: a format tag, then an HMAC of the data keyed by the bundle's SHA-256. */
const SEAL = Buffer.from("akcache1");
function seal(key: Buffer, data: Buffer): Buffer {
  return Buffer.concat([SEAL, createHmac("sha256", key).update(data).digest()]);
}

/** At exit: the code compiled by now, written whole or not at all (rename); older builds' caches of this command go. */
function writeCache({ dir, file, private: own }: CacheLocation, name: string, script: vm.Script, key: Buffer): void {
  try {
    if (!own) makeDir(dir, true);
    if (ownedByUs(dir) !== true) return; // not made, or made by someone else meanwhile
    accessSync(dir, constants.W_OK); // before the costly part
    const data = script.createCachedData();
    const partial = join(dir, `${file}.${process.pid}`);
    const fd = openSync(partial, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o600);
    try {
      writeSync(fd, seal(key, data));
      writeSync(fd, data);
    } finally {
      closeSync(fd);
    }
    renameSync(partial, join(dir, file));
    debug("cache written (%d bytes)", data.length);
    const stale = `agentkit-acp-${name}-`;
    const current = `-${process.version}-${process.arch}.bin`;
    for (const other of readdirSync(dir)) if (other !== file && other.startsWith(stale) && other.endsWith(current)) rmSync(join(dir, other), { force: true });
  } catch (error) {
    debug("cache not written: %s", error instanceof Error ? error.message : String(error));
  }
}
