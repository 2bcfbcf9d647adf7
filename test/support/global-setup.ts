import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { bundleFixtureAgents } from "./fixture-agents.js";
import { TEST_PG_RUN_DIR_ENV, stopSharedPostgres } from "./postgres.js";
import stateSetup from "./state-setup.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const lock = `${root}/dist/.build-lock`;

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** One build at a time, even when several vitest runs start together. */
function withLock(fn: () => void): void {
  mkdirSync(`${root}/dist`, { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 120_000) rmSync(lock, { recursive: true, force: true });
      sleep(200);
    }
  }
  try {
    fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    // The inspect page is a browser bundle (scripts/build-page.mjs), not node output.
    if (entry.isDirectory()) return full.endsWith(join("inspect", "page")) ? [] : sources(full);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [full] : [];
  });
}

/**
 * Tests spawn the compiled CLI (dist/). This emits JavaScript for each changed source file,
 * one file at a time without type checking (the sources are isolatedModules-safe), so a run
 * costs a second, not a whole-tree type check: `npm run typecheck` and lint are their own steps.
 */
function transpileChanged(): number {
  let emitted = 0;
  for (const file of sources(join(root, "src"))) {
    const out = join(root, "dist", relative(join(root, "src"), file)).replace(/\.ts$/, ".js");
    const built = statSync(out, { throwIfNoEntry: false });
    if (built && built.mtimeMs >= statSync(file).mtimeMs) continue;
    const result = ts.transpileModule(readFileSync(file, "utf8"), {
      fileName: file,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2023, sourceMap: true, verbatimModuleSyntax: true },
    });
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, result.outputText);
    if (result.sourceMapText) writeFileSync(`${out}.map`, result.sourceMapText);
    emitted += 1;
  }
  return emitted;
}

/** The inspect page bundle is missing or older than one of its inputs (esbuild's list): a rebuild costs a node start, skipped otherwise. */
function pageStale(): boolean {
  const dir = join(root, "dist/inspect/page-dist");
  const built = ["app.js", "app.css", "inputs.json"].map((name) => statSync(join(dir, name), { throwIfNoEntry: false })?.mtimeMs ?? 0);
  if (built.includes(0)) return true;
  const inputs = JSON.parse(readFileSync(join(dir, "inputs.json"), "utf8")) as string[];
  return inputs.some((input) => (statSync(join(root, input), { throwIfNoEntry: false })?.mtimeMs ?? Infinity) > Math.min(...built));
}

/** The CLI bundle (dist/bin, what the bin runs) is missing or older than a source: rebuilt (about 0.2 s). */
function binStale(emitted: number): boolean {
  const built = statSync(join(root, "dist/bin/serve.cjs"), { throwIfNoEntry: false })?.mtimeMs;
  return built === undefined || emitted > 0 || sources(join(root, "src")).some((file) => statSync(file).mtimeMs > built);
}

/**
 * Both projects: the state dir, the shared PostgreSQL cluster's run dir (started on first use
 * by test/support/postgres.ts, stopped here), and the built package in dist/ (the spawned CLI,
 * agents and fixtures) plus the inspect page bundle; the fixture agents' bundles (fixture-agents.ts).
 */
export default function setup(): () => Promise<void> {
  const stopState = stateSetup();
  const pgRunDir = mkdtempSync(join(tmpdir(), "agentkit-test-pg-run-"));
  process.env[TEST_PG_RUN_DIR_ENV] = pgRunDir;
  // An inspect tap's page outlives it by default (a process of its own, up to 10 min): not in tests,
  // which start many taps; a test of that passes --linger itself.
  process.env.AGENTKIT_INSPECT_LINGER = "0";
  withLock(() => {
    const emitted = transpileChanged();
    if (binStale(emitted)) {
      const bin = spawnSync(process.execPath, ["scripts/build-bin.mjs"], { cwd: root, encoding: "utf8" });
      if (bin.status !== 0) throw new Error(`[global-setup] the CLI bundle failed:\n${bin.stderr.slice(0, 4000)}`);
    }
    bundleFixtureAgents();
    if (pageStale()) {
      const page = spawnSync(process.execPath, ["scripts/build-page.mjs"], { cwd: root, encoding: "utf8" });
      if (page.status !== 0) process.stderr.write(`[global-setup] the inspect page bundle failed:\n${page.stderr.slice(0, 4000)}\n`);
    }
  });
  return async () => {
    stopState();
    await stopSharedPostgres(pgRunDir);
  };
}
