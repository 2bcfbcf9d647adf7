import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "../acp/client/helpers.js";
import { runCli } from "../support/cli.js";

// The error messages a newcomer meets (docs/errors.md lists each with its exit code): they name
// the real cause and the flag to fix, once, without class names.
const scratch = mkdtempSync(join(tmpdir(), "agentkit-errors-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("prompt --cwd", () => {
  it("a missing directory is a usage error naming --cwd (it blamed node: spawn /usr/bin/node ENOENT)", async () => {
    const run = await runCli(["prompt", "--cwd", join(scratch, "missing"), "hello"], { cwd: repoRoot });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`agentkit-acp prompt: --cwd ${join(scratch, "missing")}: no such directory\nRun \`agentkit-acp prompt --help\` for the options.\n`);
    expect(run.stdout).toBe("");
  });

  it("a file is a usage error naming --cwd (it said spawn ENOTDIR)", async () => {
    const file = join(scratch, "a-file");
    writeFileSync(file, "x");
    const run = await runCli(["prompt", "--json", "--cwd", file, "hello"], { cwd: repoRoot });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`agentkit-acp prompt: --cwd ${file}: not a directory\n`);
    expect(run.stdout).toBe("");
  });
});
