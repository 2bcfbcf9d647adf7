// Bundles the inspect page (src/inspect/page) into dist/inspect/page-dist: no CDN, no runtime fetches.
import { build } from "esbuild";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const result = await build({
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
  metafile: true,
});
// The sources it was built from: the test setup rebuilds only when one of them is newer.
writeFileSync(`${root}dist/inspect/page-dist/inputs.json`, `${JSON.stringify(Object.keys(result.metafile.inputs))}\n`);
