import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { agentFixture } from "../support/fixture-agents.js";

const fixture = agentFixture("fixture-agent.mjs");
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("agent presets launch the vendor's current command line", () => {
  it("--agent gemini runs `gemini --acp` (Gemini CLI 0.61 deprecates --experimental-acp)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agentkit-preset-"));
    dirs.push(dir);
    // A stand-in `gemini` on PATH: records its arguments, then is an ACP agent.
    const fake = join(dir, "gemini");
    writeFileSync(fake, `#!/bin/sh\nprintf '%s\\n' "$@" > "${join(dir, "argv")}"\nexec "${process.execPath}" "${fixture}"\n`);
    chmodSync(fake, 0o755);
    const run = await runCli(["prompt", "--agent", "gemini", "--cwd", dir, "hello"], { cwd: dir, env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? ""}` } });
    expect(readFileSync(join(dir, "argv"), "utf8")).toBe("--acp\n");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Hello, world");
  }, 60_000);
});
