#!/usr/bin/env node
// Thin launcher: the CLI is compiled and bundled to dist/ by `npm ci` (prepare) or `npm run build`.
import { existsSync } from "node:fs";
import module from "node:module";
import { fileURLToPath } from "node:url";

const bundleDir = fileURLToPath(new URL("../dist/bin", import.meta.url));
if (!existsSync(bundleDir)) {
  process.stderr.write("agentkit-acp: dist/ is missing; run `npm run build` (or `npm ci`) first.\n");
  process.exit(1);
}
// Node 22.1+: also reuse compiled code of the few files Node itself loads (the bundles have their own cache).
module.enableCompileCache?.();
const [{ main }, { loadBundle }] = await Promise.all([import("../dist/cli/main.js"), import("../dist/cli/bundles.js")]);
// Each command runs from its own bundle, with V8's code cache (dist/cli/bundles.js).
process.exitCode = await main(process.argv.slice(2), undefined, async (name) => loadBundle(bundleDir, name));
