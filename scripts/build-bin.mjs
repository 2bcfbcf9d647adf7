// Bundles the CLI (dist/cli/main.js and what it imports from dist/) into dist/bin: one module per
// command instead of ~110 of ours, which is most of what `serve` and `prompt` spend starting up.
// Dependencies stay external (node_modules, shared with library users); each command is its own
// chunk, loaded only when run. The library entry points (dist/index.js …) are unchanged.
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
  packages: "external",
  chunkNames: "chunks/[name]-[hash]",
  logLevel: "warning",
});
