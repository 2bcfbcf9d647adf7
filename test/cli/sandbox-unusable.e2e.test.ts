import { chmodSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanEnv } from "../acp/agent/serve-support.js";
import { repoRoot, tempDir } from "../acp/client/helpers.js";
import { cliBin, runCli, runCliProcess } from "../support/cli.js";

/**
 * bubblewrap installed but unable to sandbox here (unprivileged user namespaces refused, as under
 * Ubuntu 23.10+'s AppArmor restriction): a stand-in bwrap that fails as the real one does there.
 * serve and prompt must refuse to start (exit 2, saying why), not serve with every command failing.
 */
describe.runIf(process.platform === "linux")("an installed sandbox that cannot run here", () => {
  const engineDir = tempDir();
  const bwrap = join(engineDir, "bwrap");
  writeFileSync(bwrap, "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n");
  chmodSync(bwrap, 0o755);
  const env = (): NodeJS.ProcessEnv => cleanEnv({ PATH: `${engineDir}${delimiter}${process.env.PATH ?? ""}` });

  it("serve --sandbox exits 2 naming the engine's error, before serving", async () => {
    const run = await runCliProcess(["serve", "--sandbox", "--no-persist", "--model", "demo"], { cwd: tempDir(), env: env() });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain("the sandbox (bubblewrap) is installed but cannot run a command here");
    expect(run.stderr).toContain("setting up uid map: Permission denied");
    expect(run.stderr).toContain("--sandbox off");
    expect(run.stdout).toBe("");
  });

  it("prompt --sandbox exits 2 naming the engine's error, before starting the agent", async () => {
    const agent = `${process.execPath} ${cliBin} serve --no-persist --model demo`;
    const run = await runCli(["prompt", "--sandbox", "--agent", agent, "--cwd", tempDir(), "go"], { cwd: repoRoot, env: env() });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain("the sandbox (bubblewrap) is installed but cannot run a command here");
    expect(run.stderr).toContain("setting up uid map: Permission denied");
    expect(run.stderr).toContain("prompt without --sandbox");
  });
});
