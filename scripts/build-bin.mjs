// Bundles each CLI command (dist/cli/NAME.js, what it imports from dist/ and its dependencies)
// into dist/bin/NAME.cjs, which the bin loads with V8's code cache (src/cli/bundles.ts).
// Resolving and reading the ~220 modules `serve` needs (110 of ours, zod's 97, the SDK's 14),
// then compiling them, was most of its start-up. CommonJS, because a script's code cache works on
// every supported Node (Node 20 has none for ES modules); one file per command, because CommonJS
// bundles do not share chunks. The library entry points (dist/index.js …) are unchanged and keep
// importing node_modules.
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const { commandNames } = await import(`${root}dist/cli/main.js`);
rmSync(`${root}dist/bin`, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: Object.fromEntries(commandNames.map((name) => [name, `dist/cli/${name}.js`])),
  outdir: "dist/bin",
  outExtension: { ".js": ".cjs" },
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  // Optional native add-ons that pg and ws try to require and do without. The OpenTelemetry SDK
  // (loaded with require only when tracing is on) stays in node_modules: nothing of it is read
  // or compiled at start-up; only @opentelemetry/api is bundled.
  external: [
    "pg-native",
    "bufferutil",
    "utf-8-validate",
    "@opentelemetry/core",
    "@opentelemetry/exporter-trace-otlp-http",
    "@opentelemetry/exporter-trace-otlp-proto",
    "@opentelemetry/resources",
    "@opentelemetry/sdk-trace-base",
    "otlp-proto-decoder",
  ],
  // import.meta.url (package-files.ts, createRequire) is the bundle's own URL.
  define: { "import.meta.url": "__bundle_url" },
  // The file is the CommonJS wrapper function itself (nothing but the bin's loader runs it).
  // Strict, as the ES modules it is made of (the directive must come first in the function).
  banner: { js: '(function (exports, require, module, __filename, __dirname) { "use strict"; const __bundle_url = require("node:url").pathToFileURL(__filename).href;' },
  footer: { js: "})" },
  // Less to read and keep in memory; names stay, so stack traces still say where.
  minifyWhitespace: true,
  legalComments: "linked",
  charset: "ascii",
  logLevel: "warning",
});
// The loader reads a bundle as one-byte text (half the memory of a UTF-16 string): it must be
// ASCII. Its code cache is named after the content's hash (V8 checks only the length).
const manifest = {};
for (const name of commandNames) {
  const bytes = readFileSync(`${root}dist/bin/${name}.cjs`);
  const at = bytes.findIndex((byte) => byte > 0x7f);
  if (at !== -1) throw new Error(`dist/bin/${name}.cjs is not ASCII at byte ${at}: ${bytes.subarray(Math.max(0, at - 40), at + 40).toString()}`);
  manifest[name] = createHash("sha256").update(bytes).digest("hex").slice(0, 16);
}
writeFileSync(`${root}dist/bin/manifest.json`, `${JSON.stringify(manifest, null, 2)}\n`);
