import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Tests that install from the npm registry take minutes on a busy machine: they run when
 * AGENTKIT_TEST_NPM=1 (CI sets it, `.ci/run`), and are skipped, saying so, otherwise.
 */
export const npmTests = process.env.AGENTKIT_TEST_NPM === "1";

/**
 * Registry tests of agents that need Node ≥ 22 (their `engines`): with AGENTKIT_TEST_NPM=1, or
 * =node22 alone — CI's Node 24 run, whose other registry tests already ran on Node 20.
 */
export const npmTestsNode22 = (npmTests || process.env.AGENTKIT_TEST_NPM === "node22") && Number(process.versions.node.split(".")[0]) >= 22;

/**
 * The environment for an npm/npx started by a test: npm's per-run variables (set when the suite
 * runs under `npm test`: its cache, prefix, user config) are dropped so `HOME` decides, but what
 * makes the registry reachable is kept — the global config and the CA file, which a Node
 * installed elsewhere (CI's Node 24 from the registry) would not find on its own. Offline first,
 * as `npmInstall`: once npm's cache holds the package, `npx -y` starts it without asking the
 * registry (a slow registry answer, retried with npm's 10 s back-off, once outlasted an agent's
 * 30 s initialize bound in CI).
 */
export function npmChildEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const kept = Object.entries(env).filter(([name]) => !/^npm_/i.test(name) || /^npm_config_(globalconfig|cafile)$/i.test(name));
  return { ...Object.fromEntries(kept), npm_config_prefer_offline: "true" };
}

/**
 * Tests that install from the npm registry (the packed package in an app, a real client such as
 * acpx) keep their installs under one directory that outlives the run, so a second run installs
 * from npm's cache or reuses the tree: `$TMPDIR/agentkit-acp-test-npm/NAME`.
 */
export function cachedDir(name: string): string {
  const dir = join(tmpdir(), "agentkit-acp-test-npm", name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** `npm ARGS` in `cwd`, bounded; throws with npm's last output lines when it fails. */
export async function npm(args: string[], cwd: string, timeoutMs = 300_000): Promise<string> {
  try {
    const { stdout } = await run("npm", args, { cwd, timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer: 16 << 20 });
    return stdout;
  } catch (error) {
    const detail = error as { stderr?: string; stdout?: string; message: string };
    throw new Error(`npm ${args.join(" ")} failed in ${cwd}: ${(detail.stderr ?? detail.message).trim().split("\n").slice(-8).join("\n")}`);
  }
}

/** `npm install` of exact specs, preferring the local cache (fast, and offline once cached). */
export async function npmInstall(cwd: string, specs: string[]): Promise<void> {
  await npm(["install", "--no-audit", "--no-fund", "--prefer-offline", "--no-package-lock", ...specs], cwd);
}

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(full));
    else if (entry.name.endsWith(".ts")) newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

/**
 * This checkout packed as users get it (`npm pack`), into `dir`. The test setup transpiles only
 * JavaScript, so the declarations are rebuilt first (`tsc`) when a source is newer than them.
 */
export async function packThisPackage(dir: string): Promise<string> {
  const buildInfo = join(repoRoot, "dist", ".tsbuildinfo"); // written by every tsc build
  const built = existsSync(buildInfo) ? statSync(buildInfo).mtimeMs : 0;
  if (newestSource(join(repoRoot, "src")) > built) {
    await run(process.execPath, [join(repoRoot, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], { cwd: repoRoot, timeout: 600_000 });
  }
  const out = await npm(["pack", "--ignore-scripts", "--silent", "--pack-destination", dir], repoRoot);
  const name = out.trim().split("\n").at(-1) ?? "";
  return join(dir, name);
}
