import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { afterEachTest } from "../support/after-each.js";
import { sealCache } from "../support/code-cache.js";

/**
 * V8 runs what a code cache holds, and checks only that it was made for a source of the same
 * length (and its own version and flags). These tests plant a cache compiled from another
 * script of the bundle's length, whose top-level code prints PLANTED and exits 42, where the
 * bin would read one, as another user (root here) could. Another user's plants are planted
 * twice: as V8 wrote it (what the loader before the fix handed to V8) and with a valid seal (the
 * header the loader checks, which anyone can compute: such a plant must be refused for whose
 * file or directory it is, not for the seal).
 */

const bin = new URL("../../bin/agentkit-acp.js", import.meta.url).pathname;
const bundle = new URL("../../dist/bin/serve.cjs", import.meta.url).pathname;
const PLANTED = "PLANTED CODE RAN";

/**
 * Writes the planted cache to `out`: V8's data made by a plain node process, as the bin is one
 * (V8 takes data made under its own flags only), raw or sealed for the bundle (`sealCache`).
 */
function plant(out: string, sealed: boolean): void {
  const script = `
    const vm = require("node:vm"), fs = require("node:fs");
    const [bundle, out] = process.argv.slice(1);
    const source = fs.readFileSync(bundle, "latin1");
    const head = 'process.stderr.write("${PLANTED}" + String.fromCharCode(10)); process.exit(42); /*';
    const evil = head + " ".repeat(source.length + 1 - head.length - 2) + "*/"; // the loader compiles source + "\\n"
    fs.writeFileSync(out, new vm.Script(evil).createCachedData());`;
  const r = spawnSync(process.execPath, ["-e", script, bundle, out], { encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
  if (sealed) sealCache(out, { parts: [], writes: 1 }, readFileSync(out));
}

const cacheFile = (): string => {
  const manifest = spawnSync(process.execPath, ["-p", `require(${JSON.stringify(join(bundle, "..", "manifest.json"))}).serve`], { encoding: "utf8" }).stdout.trim();
  return `agentkit-acp-serve-${manifest}-${process.version}-${process.arch}.bin`;
};

function serveHelp(env: Record<string, string>, user?: string): { status: number | null; stdout: string; log: string } {
  const command = [...Object.entries({ NODE_DEBUG: "agentkit-code-cache", ...env }).map(([k, v]) => `${k}=${v}`), process.execPath, bin, "serve", "--help"];
  const r = user ? spawnSync("runuser", ["-u", user, "--", "env", ...command], { encoding: "utf8" }) : spawnSync("env", command, { encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, log: r.stderr };
}

function expectRefused(run: ReturnType<typeof serveHelp>, why: string): void {
  expect(run.log).not.toContain(PLANTED);
  expect(run.status, run.log).toBe(0);
  expect(run.stdout).toContain("Usage: agentkit-acp serve");
  expect(run.log).toContain(why);
}

const tempDir = (mode: number): string => {
  const dir = mkdtempSync(join(tmpdir(), "agentkit-code-cache-plant-"));
  afterEachTest(() => rmSync(dir, { recursive: true, force: true }));
  chmodSync(dir, mode);
  return dir;
};

describe("the code cache refuses what it did not write for this bundle", () => {
  // The seal binds a cache to the bytes of the source it was made for (V8 checks their number only).
  it("a cache of the bundle's length made from other code is not run", () => {
    const dir = tempDir(0o700);
    plant(join(dir, cacheFile()), false);
    expectRefused(serveHelp({ NODE_COMPILE_CACHE: dir }), "not sealed for this bundle");
  });

  // root may read anything: the other-user cases run the bin as nobody, with root as the other user.
  const asNobody = process.getuid?.() === 0 && spawnSync("runuser", ["-u", "nobody", "--", process.execPath, "-e", `require("fs").accessSync(${JSON.stringify(bundle)})`]).status === 0;
  const nobody = Number(spawnSync("id", ["-u", "nobody"], { encoding: "utf8" }).stdout.trim());

  it.skipIf(!asNobody).each([false, true])("NODE_COMPILE_CACHE naming another user's directory is not used (sealed: %s)", (sealed) => {
    const dir = tempDir(0o755);
    plant(join(dir, cacheFile()), sealed);
    chmodSync(join(dir, cacheFile()), 0o644);
    const run = serveHelp({ NODE_COMPILE_CACHE: dir }, "nobody");
    expectRefused(run, `not using ${dir}: not a directory of this user's`);
    expect(run.log).toContain("serve: off");
  });

  it.skipIf(!asNobody).each([false, true])("a file swapped into the user's own cache directory is not read (sealed: %s)", (sealed) => {
    const tmp = tempDir(0o1777);
    const first = serveHelp({ TMPDIR: tmp }, "nobody");
    expect(first.log).toContain("cache written");
    const own = join(tmp, `agentkit-acp-code-cache-${nobody}`);
    const file = join(own, cacheFile());
    expect(readdirSync(own)).toEqual([cacheFile()]);
    // Whatever a check before the read saw, the file read is another user's: the loader decides on
    // the descriptor it reads from (the old lstat-then-readFileSync lost that race).
    rmSync(file);
    plant(file, sealed);
    chmodSync(file, 0o644);
    expectRefused(serveHelp({ TMPDIR: tmp }, "nobody"), `not using ${file}: not a file of this user's`);

    // A link to a file that is the user's own (the loader never follows one).
    const elsewhere = tempDir(0o755);
    const target = join(elsewhere, "cache.bin");
    plant(target, sealed);
    chownSync(target, nobody, nobody);
    rmSync(file);
    symlinkSync(target, file);
    expectRefused(serveHelp({ TMPDIR: tmp }, "nobody"), `not using ${file}:`);
  });

  it.skipIf(!asNobody)("NODE_COMPILE_CACHE not there yet is made the user's own (0700) and used", () => {
    const parent = tempDir(0o1777);
    const dir = join(parent, "cache");
    expect(serveHelp({ NODE_COMPILE_CACHE: dir }, "nobody").log).toContain("cache written");
    expect(serveHelp({ NODE_COMPILE_CACHE: dir }, "nobody").log).toContain("serve: cache used");
    // Someone else's made meanwhile (here before): refused, nothing written into it.
    const planted = join(parent, "planted");
    mkdirSync(planted, { mode: 0o777 });
    chmodSync(planted, 0o777);
    const run = serveHelp({ NODE_COMPILE_CACHE: planted }, "nobody");
    expectRefused(run, "not using");
    expect(readdirSync(planted)).toEqual([]);
  });
});
