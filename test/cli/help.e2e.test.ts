import { execFileSync, spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

const bin = new URL("../../bin/agentkit-acp.js", import.meta.url).pathname;

describe("agentkit-acp CLI entry", () => {
  it("prints usage with --help and exits 0", () => {
    const out = execFileSync(process.execPath, [bin, "--help"], { encoding: "utf8" });
    expect(out).toContain("Usage: agentkit-acp <command>");
    expect(out).toContain("serve");
  });

  it("rejects an unknown command on stderr with exit 2, stdout untouched", () => {
    const r = spawnSync(process.execPath, [bin, "frobnicate"], { encoding: "utf8" });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain('unknown command "frobnicate"');
  });
});
