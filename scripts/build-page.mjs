// Bundles the inspect page (src/inspect/page) into dist/inspect/page-dist: no CDN, no runtime fetches.
import { build } from "esbuild";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
await build({
  absWorkingDir: root,
  entryPoints: ["src/inspect/page/app.ts", "src/inspect/page/app.css"],
  outdir: "dist/inspect/page-dist",
  entryNames: "[name]",
  bundle: true,
  minify: true,
  format: "esm",
  target: ["chrome110", "firefox110", "safari16"],
  logLevel: "warning",
  legalComments: "none",
});
