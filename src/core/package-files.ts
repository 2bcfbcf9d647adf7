import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Files of this package, found from the package root rather than from one module's place:
 * the same code runs from src/ (tests), dist/ (the library) and the CLI bundle in dist/bin,
 * each at a different depth.
 */

let root: { dir: string; version: string } | undefined;

function packageInfo(): { dir: string; version: string } {
  if (root) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string; version?: string };
      if (pkg.name === "agentkit-acp") return (root = { dir, version: pkg.version ?? "0.0.0" });
    } catch {
      // not here: one level up
    }
    const parent = dirname(dir);
    if (parent === dir) return (root = { dir: join(dirname(fileURLToPath(import.meta.url)), "../.."), version: "0.0.0" });
    dir = parent;
  }
}

/** The package's root directory (where its package.json is). */
export function packageRoot(): string {
  return packageInfo().dir;
}

/** The package's version, from its package.json. */
export function packageVersion(): string {
  return packageInfo().version;
}

/** A file of the built package in dist/ (also from sources: vitest runs .ts; entry points to spawn are the built ones). */
export function builtFile(...segments: string[]): string {
  return join(packageInfo().dir, "dist", ...segments);
}
