#!/usr/bin/env node
// Thin launcher: the CLI is compiled and bundled to dist/bin by `npm ci` (prepare) or `npm run build`.
import { existsSync } from "node:fs";
import module from "node:module";
import { fileURLToPath } from "node:url";

const entry = new URL("../dist/bin/main.js", import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write("agentkit-acp: dist/ is missing; run `npm run build` (or `npm ci`) first.\n");
  process.exit(1);
}
// Node 22.1+: reuse compiled code across starts (keyed by content; NODE_DISABLE_COMPILE_CACHE=1 turns it off).
module.enableCompileCache?.();
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
