import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { agentPresets } from "../../src/acp/client/presets.js";
import { afterEachTest } from "../support/after-each.js";

const bin = new URL("../../bin/agentkit-acp.js", import.meta.url).pathname;

describe("agentkit-acp CLI entry", () => {
  it("prints usage with --help and exits 0", () => {
    const out = execFileSync(process.execPath, [bin, "--help"], { encoding: "utf8" });
    expect(out).toContain("Usage: agentkit-acp <command>");
    expect(out).toContain("serve");
  });

  it("--version prints package.json's version (the bundled bin finds the package root from dist/bin)", () => {
    const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    expect(execFileSync(process.execPath, [bin, "--version"], { encoding: "utf8" })).toBe(`${version}\n`);
    expect(agentPresets().self!.args).toEqual([bin, "serve"]);
  });

  it("rejects an unknown command on stderr with exit 2, stdout untouched", () => {
    const r = spawnSync(process.execPath, [bin, "frobnicate"], { encoding: "utf8" });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain('unknown command "frobnicate"');
  });
});

describe("the bundles' code cache", () => {
  const manifest = (): Record<string, string> => JSON.parse(readFileSync(new URL("../../dist/bin/manifest.json", import.meta.url), "utf8")) as Record<string, string>;
  const run = (env: NodeJS.ProcessEnv): { status: number | null; stdout: string; log: string } => {
    const r = spawnSync(process.execPath, [bin, "serve", "--help"], { encoding: "utf8", env: { ...process.env, NODE_DEBUG: "agentkit-code-cache", ...env } });
    return { status: r.status, stdout: r.stdout, log: r.stderr };
  };

  it("is written by the first run, used by the next, refused (and rewritten) when it does not match, and never needed", () => {
    const dir = mkdtempSync(join(tmpdir(), "agentkit-code-cache-"));
    afterEachTest(() => rmSync(dir, { recursive: true, force: true }));
    const first = run({ NODE_COMPILE_CACHE: dir });
    expect(first.status).toBe(0);
    expect(first.stdout).toContain("Usage: agentkit-acp serve");
    expect(first.log).toContain("serve: no cache yet");
    expect(first.log).toContain("cache written");
    // Node 22+ keeps its own compile cache there too (a directory of its own): ours are the files named for us.
    const ours = (): string[] => readdirSync(dir).filter((name) => name.startsWith("agentkit-acp-"));
    const [file] = ours();
    expect(file).toBe(`agentkit-acp-serve-${manifest().serve}-${process.version}-${process.arch}.bin`);

    const second = run({ NODE_COMPILE_CACHE: dir });
    expect(second.log).toMatch(/serve: cache used \(\d+ bytes; no parts\)/);
    expect(second.log).not.toContain("cache written");
    expect(second.stdout).toBe(first.stdout);

    // Data not sealed for this bundle (another build of it, a torn copy): refused, then replaced.
    writeFileSync(join(dir, file!), randomBytes(4096));
    const third = run({ NODE_COMPILE_CACHE: dir });
    expect(third.log).toContain("not sealed for this bundle");
    expect(third.log).toContain("cache written");
    expect(third.stdout).toBe(first.stdout);
    expect(run({ NODE_COMPILE_CACHE: dir }).log).toContain("serve: cache used");

    // Another build's cache of the command (a different content hash) goes when this one is written.
    const older = `agentkit-acp-serve-0000000000000000-${process.version}-${process.arch}.bin`;
    writeFileSync(join(dir, older), randomBytes(64));
    rmSync(join(dir, file!));
    expect(run({ NODE_COMPILE_CACHE: dir }).log).toContain("cache written");
    expect(ours()).toEqual([file]);
  });

  // root may write anywhere: the fallback shows only for a user the package is not writable by.
  const asNobody = process.getuid?.() === 0 && spawnSync("runuser", ["-u", "nobody", "--", process.execPath, "-e", `require("fs").accessSync(${JSON.stringify(bin)})`]).status === 0;
  it.skipIf(!asNobody)("lives in the temp directory where the package is not the user's to write", () => {
    const tmp = mkdtempSync(join(tmpdir(), "agentkit-code-cache-tmp-"));
    afterEachTest(() => rmSync(tmp, { recursive: true, force: true }));
    chmodSync(tmp, 0o1777);
    const runAsNobody = (dir = tmp): string =>
      spawnSync("runuser", ["-u", "nobody", "--", "env", `TMPDIR=${dir}`, "NODE_DEBUG=agentkit-code-cache", process.execPath, bin, "serve", "--help"], { encoding: "utf8" }).stderr;
    expect(runAsNobody()).toContain("cache written");
    expect(runAsNobody()).toContain("serve: cache used");
    const uid = spawnSync("id", ["-u", "nobody"], { encoding: "utf8" }).stdout.trim();
    const own = join(tmp, `agentkit-acp-code-cache-${uid}`);
    expect(readdirSync(own)).toEqual([`agentkit-acp-serve-${manifest().serve}-${process.version}-${process.arch}.bin`]);
    expect(statSync(own).mode & 0o777).toBe(0o700);

    // V8 runs what a cache holds: a directory someone else made there (here root, writable by all) is not used.
    const planted = mkdtempSync(join(tmpdir(), "agentkit-code-cache-tmp-"));
    afterEachTest(() => rmSync(planted, { recursive: true, force: true }));
    chmodSync(planted, 0o1777);
    mkdirSync(join(planted, `agentkit-acp-code-cache-${uid}`), { mode: 0o777 });
    chmodSync(join(planted, `agentkit-acp-code-cache-${uid}`), 0o777);
    const refused = runAsNobody(planted);
    expect(refused).toContain("not using");
    expect(refused).toContain("serve: off");
    expect(readdirSync(join(planted, `agentkit-acp-code-cache-${uid}`))).toEqual([]);
  });

  it("costs only the compile when it cannot be written, and is off with NODE_DISABLE_COMPILE_CACHE=1", () => {
    const dir = mkdtempSync(join(tmpdir(), "agentkit-code-cache-"));
    afterEachTest(() => rmSync(dir, { recursive: true, force: true }));
    const notADirectory = join(dir, "file");
    writeFileSync(notADirectory, "");
    const unwritable = run({ NODE_COMPILE_CACHE: notADirectory });
    expect(unwritable.status).toBe(0);
    expect(unwritable.stdout).toContain("Usage: agentkit-acp serve");
    expect(unwritable.log).toContain("not a directory of this user's");

    const off = run({ NODE_COMPILE_CACHE: dir, NODE_DISABLE_COMPILE_CACHE: "1" });
    expect(off.status).toBe(0);
    expect(off.stdout).toBe(unwritable.stdout);
    expect(off.log).toContain("serve: off");
    expect(off.log).not.toContain("cache written");
    expect(readdirSync(dir)).toEqual(["file"]);
  });
});
