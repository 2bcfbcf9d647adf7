import { readFileSync, writeFileSync } from "node:fs";
import { cacheFile, cacheKey, openCacheFile, type CacheMeta } from "../../src/cli/bundles.js";

const serveBundle = new URL("../../dist/bin/serve.cjs", import.meta.url).pathname;

/**
 * Writes the code-cache file `path` for `serve`'s bundle (dist/bin/serve.cjs), sealed as its
 * loader seals one (src/cli/bundles.ts): `meta` around V8's `data`, by default the data `path`
 * holds now (a cache the bin wrote, given another meta).
 */
export function sealCache(path: string, meta: CacheMeta, data?: Buffer): void {
  const key = cacheKey(readFileSync(serveBundle, "latin1"));
  const held = data ?? openCacheFile(key, readFileSync(path))?.data;
  if (held === undefined) throw new Error(`${path} is not a cache sealed for ${serveBundle}`);
  writeFileSync(path, Buffer.concat(cacheFile(key, meta, held)), { mode: 0o600 });
}
