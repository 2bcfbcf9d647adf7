// Bundles the CLI (dist/cli/main.js, what it imports from dist/ and its dependencies) into
// dist/bin, which the bin runs. Resolving and reading the ~220 modules `serve` needs (110 of
// ours, zod's 97, the SDK's 14) was most of its start-up; now each command is one chunk plus
// shared ones, loaded only when run. The library entry points (dist/index.js …) are unchanged
// and keep importing node_modules.
import { build } from "esbuild";
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
rmSync(`${root}dist/bin`, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: ["dist/cli/main.js"],
  outdir: "dist/bin",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  // Optional native add-ons that pg and ws try to require and do without.
  external: ["pg-native", "bufferutil", "utf-8-validate"],
  // Bundled CommonJS dependencies (pg, ws …) call require for Node's built-ins.
  banner: { js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);' },
  chunkNames: "chunks/[name]-[hash]",
  logLevel: "warning",
});
