import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { bin, tempDir } from "./support.js";

// `inspect` as the agent of `prompt` / `demo`, which hide the agent's stderr, where the tap says
// where its page is: the user must still see it.
describe("inspect in tap mode under prompt", () => {
  it("prompt shows the tap's page URL and trace though it hides the agent's stderr", async () => {
    const ws = tempDir("inspect-ws-");
    const tap = `"${process.execPath}" "${bin}" inspect -- "${process.execPath}" "${bin}" serve --model demo`;
    const run = await runCli(["prompt", "--agent", tap, "--cwd", ws, "--permissions", "allow-all", "hello"], { cwd: ws });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^agentkit-acp inspect: page http:\/\/127\.0\.0\.1:\d+\/\?t=[\w-]+$/m);
    expect(run.stderr).toMatch(/^agentkit-acp inspect: trace \/\S+\.jsonl$/m);
    // Nothing else of the agent's stderr (serve's own log lines stay hidden).
    expect(run.stderr.split("\n").filter((line) => line !== "" && !line.startsWith("agentkit-acp inspect: ") && !line.startsWith("session: "))).toEqual([]);
  });
});
