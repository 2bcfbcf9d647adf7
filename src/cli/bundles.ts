import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { accessSync, closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, type Stats, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { PerformanceObserver, constants as perfConstants } from "node:perf_hooks";
import { debuglog } from "node:util";
import vm from "node:vm";
import { codeCacheHookKey, type CodeCacheHook } from "../core/code-cache-hint.js";

/**
 * Loads a command's bundle (dist/bin/NAME.cjs, built by scripts/build-bin.mjs) with V8's code
 * cache: the code compiled in an earlier run is reused instead of compiled again. Compiling the
 * ~2 MB `serve` needs (zod, the SDK, the AI SDK providers and ours) was most of its start-up on
 * Node 20, which has no compile cache for modules (Node 22's `module.enableCompileCache` does the
 * same for files Node loads itself).
 *
 * The cache is written after the run compiled what it used (see keepCache): after the second
 * prompt turn, so a prompt's hot path is in it and not only start-up, or at exit. It is
 * rewritten only when a run used a part it lacks, such as another provider's library (making it
 * costs ~17 ms of CPU for `serve`), never by a process whose early code V8 may have dropped.
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
  const key = cache === undefined ? undefined : cacheKey(source);
  const cached = cache === undefined || key === undefined ? undefined : readCache(join(cache.dir, cache.file), key);
  // The bundle is a CommonJS module's wrapper function (build-bin.mjs). The concatenation makes
  // V8 copy the source into its heap: readFileSync returns a text this large as an external
  // string, and with one the functions compiled later (lazily) made a first prompt's model
  // request leave ~23 ms later (bench/agents.ts, 2 interleaved runs of 9).
  const script = new vm.Script(`${source}\n`, {
    filename: file,
    cachedData: cached?.data,
    // import() of what the bundle leaves to Node (native add-ons, files loaded by path).
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const used = cached !== undefined && !script.cachedDataRejected;
  debug("%s: %s", name, cache === undefined ? "off" : cached === undefined ? "no cache yet" : used ? `cache used (${cached.data.length} bytes; ${partsText(cached.meta.parts)})` : "cache refused by V8");
  if (cache !== undefined && key !== undefined) keepCache({ location: cache, name, script, key }, used ? cached.meta : undefined);
  const module = { exports: {} as Record<string, unknown> };
  const run = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: unknown, filename: string, dirname: string) => void;
  run(module.exports, createRequire(file), module, file, dirname(file));
  return module.exports;
}

/** What a cache file says about its code: the optional parts it covers (codeCacheUses) and how many times it was written. */
export interface CacheMeta {
  parts: string[];
  writes: number;
}

interface CacheTarget {
  location: CacheLocation;
  name: string;
  script: vm.Script;
  key: Buffer;
}

/** A cache is rewritten at most this many times per build, Node version and architecture (a bound, whatever happens). */
const MAX_WRITES = 8;
/**
 * V8 drops the bytecode of a function not run during its last 5 (Node 20) or 6 (Node 24) major
 * GCs (--bytecode-old-age). A process that has had more than 4 writes no cache: what it would
 * write may lack start-up code it ran long ago, and lacking it is worse than lacking a part.
 */
const YOUNG_MAJOR_GCS = 4;

/**
 * When the cache is written: once the process has compiled what a user's session runs, while V8
 * still holds all of it. That is after the second prompt turn (the first with history: a warm
 * turn's code too), or at exit when there was no second turn. A process that had no cache (or one
 * V8 refused) writes one. A process whose cache lacks a part it ran (a provider library the run
 * that wrote it did not use: the user switched providers) rewrites it: the code the old cache
 * gave this process is still there (unused bytecode goes only after several major GCs, which is
 * why an old process writes nothing), so the new cache covers both. Each write adds a part and
 * there are few, so a cache settles after a few writes; two processes writing at once each
 * replace the file whole (rename), and the next run still missing a part writes it again.
 */
function keepCache(target: CacheTarget, loaded: CacheMeta | undefined): void {
  let covered = loaded?.parts ?? [];
  let writes = loaded?.writes ?? 0;
  let onDisk = loaded !== undefined;
  const missing = new Set<string>();
  let turns = 0;
  let majorGcs = 0;
  const gcs = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) if ((entry as { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) majorGcs += 1;
    if (majorGcs > YOUNG_MAJOR_GCS) gcs.disconnect();
  });
  gcs.observe({ entryTypes: ["gc"] });
  const write = (): void => {
    if (majorGcs > YOUNG_MAJOR_GCS || writes >= MAX_WRITES) {
      debug("cache not written: %s", writes >= MAX_WRITES ? `written ${writes} times already` : `${majorGcs} major GCs since start (V8 may have dropped code run early)`);
      writes = MAX_WRITES; // not trying again
      return;
    }
    const meta = { parts: [...new Set([...covered, ...missing])].sort(), writes: writes + 1 };
    if (!writeCache(target, meta, majorGcs)) writes = MAX_WRITES; // a cache that cannot be written costs no further tries
    else [covered, writes, onDisk] = [meta.parts, meta.writes, true];
    missing.clear();
  };
  const pending = (): boolean => !onDisk || missing.size > 0;
  let scheduled = false;
  const hook: CodeCacheHook = {
    uses: (part) => {
      if (!covered.includes(part)) missing.add(part);
    },
    checkpoint: () => {
      turns += 1;
      if (turns < 2 || !pending() || scheduled) return;
      scheduled = true;
      // After the turn's answer is written (its microtasks run first).
      setImmediate(() => {
        scheduled = false;
        if (pending()) write();
      });
    },
  };
  (globalThis as Record<symbol, CodeCacheHook>)[codeCacheHookKey] = hook;
  // A part only loaded (a session opened, no turn run with it) is not written as covered.
  process.once("exit", () => {
    if (!onDisk || (missing.size > 0 && turns > 0)) write();
  });
}

const partsText = (parts: string[]): string => (parts.length === 0 ? "no parts" : parts.join(", "));

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
function readCache(path: string, key: Buffer): { data: Buffer; meta: CacheMeta } | undefined {
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
    const cache = openCacheFile(key, readFileSync(fd));
    if (cache === undefined) debug("not using %s: not sealed for this bundle", path);
    return cache;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function parseMeta(text: string): CacheMeta {
  const meta = JSON.parse(text) as Partial<Record<keyof CacheMeta, unknown>>;
  const parts = Array.isArray(meta.parts) ? meta.parts.filter((part): part is string => typeof part === "string") : [];
  return { parts, writes: typeof meta.writes === "number" ? meta.writes : MAX_WRITES };
}

/**
 * The cache file: a format tag, an HMAC keyed by the bundle's SHA-256 (`cacheKey`) of all that
 * follows, then the meta's length (4 bytes) and JSON, then V8's data. Exported for the tests'
 * `sealCache` (test/support/code-cache.ts).
 */
const SEAL = Buffer.from("akcache2");
function seal(key: Buffer, body: Buffer): Buffer {
  return Buffer.concat([SEAL, createHmac("sha256", key).update(body).digest()]);
}

export function cacheKey(source: string): Buffer {
  return createHash("sha256").update(source, "latin1").digest();
}

/** The file's two pieces, its seal and the body it seals (written one after the other: no copy of V8's data). */
export function cacheFile(key: Buffer, meta: CacheMeta, data: Buffer): [Buffer, Buffer] {
  const metaBytes = Buffer.from(JSON.stringify(meta));
  const length = Buffer.alloc(4);
  length.writeUInt32BE(metaBytes.length);
  const body = Buffer.concat([length, metaBytes, data]);
  return [seal(key, body), body];
}

/** What a cache file holds, if it is sealed for `key` (throws on a file too short to be one). */
export function openCacheFile(key: Buffer, file: Buffer): { data: Buffer; meta: CacheMeta } | undefined {
  const body = file.subarray(SEAL.length + 32);
  if (!file.subarray(0, SEAL.length).equals(SEAL) || !timingSafeEqual(file.subarray(SEAL.length, SEAL.length + 32), seal(key, body).subarray(SEAL.length))) return undefined;
  const metaEnd = 4 + body.readUInt32BE(0);
  return { data: body.subarray(metaEnd), meta: parseMeta(body.subarray(4, metaEnd).toString("utf8")) };
}

/** The code compiled by now, written whole or not at all (rename); older builds' caches of this command go. True when written. */
function writeCache({ location: { dir, file, private: own }, name, script, key }: CacheTarget, meta: CacheMeta, majorGcs: number): boolean {
  try {
    if (!own) makeDir(dir, true);
    if (ownedByUs(dir) !== true) return false; // not made, or made by someone else meanwhile
    accessSync(dir, constants.W_OK); // before the costly part
    const data = script.createCachedData();
    const [sealPart, body] = cacheFile(key, meta, data);
    const partial = join(dir, `${file}.${process.pid}`);
    const fd = openSync(partial, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o600);
    try {
      writeSync(fd, sealPart);
      writeSync(fd, body);
    } finally {
      closeSync(fd);
    }
    renameSync(partial, join(dir, file));
    debug("cache written (%d bytes; %s; write %d, after %d major GCs)", data.length, partsText(meta.parts), meta.writes, majorGcs);
    const stale = `agentkit-acp-${name}-`;
    const current = `-${process.version}-${process.arch}.bin`;
    for (const other of readdirSync(dir)) if (other !== file && other.startsWith(stale) && other.endsWith(current)) rmSync(join(dir, other), { force: true });
    return true;
  } catch (error) {
    debug("cache not written: %s", error instanceof Error ? error.message : String(error));
    return false;
  }
}
