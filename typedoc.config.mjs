// The API reference (`npm run docs` → docs/api/): one module per package.json export, from the
// TSDoc comments of what each exports. Every export must have one (a warning otherwise).
import { readFileSync } from "node:fs";

const { exports } = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8"));

/** @type {Partial<import("typedoc").TypeDocOptions>} */
export default {
  // ./dist/X.js is built from ./src/X.ts.
  entryPoints: Object.values(exports).map((target) => target.default.replace(/^\.\/dist\//, "src/").replace(/\.js$/, ".ts")),
  tsconfig: "tsconfig.build.json",
  out: "docs/api",
  excludeInternal: true,
  excludePrivate: true,
  validation: { notExported: false, invalidLink: true, notDocumented: true },
  // Exported functions are checked by the plugin: "Function" here would demand a comment on every method too.
  requiredToBeDocumented: ["Class", "Interface", "TypeAlias", "Enum", "Variable", "Namespace"],
  plugin: ["./scripts/typedoc-exports.mjs"],
  readme: "none",
  // No "Defined in" links: the checkout has no public repository to link to (a warning otherwise).
  disableSources: true,
  logLevel: "Warn",
};
