import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { agentPresets } from "../../src/acp/client/presets.js";

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
