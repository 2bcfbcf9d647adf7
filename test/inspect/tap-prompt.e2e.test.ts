import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { bin, tempDir } from "./support.js";

// `inspect` as the agent of `prompt` / `demo`, which hide the agent's stderr, where the tap says
// where its page is: the user must still see it.
describe("inspect in tap mode under prompt", () => {
  it("prompt shows the tap's page URL and trace though it hides the agent's stderr", async () => {
    const ws = tempDir("inspect-ws-");
    const tap = `"${process.execPath}" "${bin}" inspect --trace "${ws}/t.jsonl" -- "${process.execPath}" "${bin}" serve --model demo`;
    const run = await runCli(["prompt", "--agent", tap, "--cwd", ws, "--permissions", "allow-all", "hello"], { cwd: ws });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^agentkit-acp inspect: page http:\/\/127\.0\.0\.1:\d+\/\?t=[\w-]+$/m);
    expect(run.stderr).toMatch(/^agentkit-acp inspect: trace \/\S+\.jsonl$/m);
    // Nothing else of the agent's stderr (serve's own log lines stay hidden).
    expect(run.stderr.split("\n").filter((line) => line !== "" && !/^(agentkit-acp inspect: |session: |agent reports: )/.test(line))).toEqual([]);
  });
});

/** Whether the page answers (its state) at `url`. */
async function answers(url: string): Promise<boolean> {
  const page = new URL(url);
  return fetch(new URL(`/api/state?t=${page.searchParams.get("t") ?? ""}`, page)).then((r) => r.ok, () => false);
}

describe("inspect's page outlives a fast turn", () => {
  it("the tap's page still answers, at the same address, after prompt ended the tap; it goes after --linger", { timeout: 60_000 }, async () => {
    const ws = tempDir("inspect-ws-");
    const tap = `"${process.execPath}" "${bin}" inspect --linger 3000 --trace "${ws}/t.jsonl" -- "${process.execPath}" "${bin}" serve --model demo`;
    const run = await runCli(["prompt", "--agent", tap, "--cwd", ws, "--permissions", "allow-all", "hello"], { cwd: ws });
    expect(run.code, run.stderr).toBe(0);
    const url = /^agentkit-acp inspect: page (\S+)$/m.exec(run.stderr)?.[1] ?? "";
    // prompt has ended the tap's process group; the view that took the page over is starting.
    await until(async () => answers(url), 20_000);
    const page = new URL(url);
    const state = (await (await fetch(new URL(`/api/state?t=${page.searchParams.get("t") ?? ""}`, page))).json()) as { status: { state: string }; entries: { method?: string }[] };
    expect(state.status.state).toBe("ended");
    expect(state.entries.some((e) => e.method === "session/prompt")).toBe(true);
    // Bounded: gone once --linger has passed.
    await until(async () => !(await answers(url)), 20_000);
  });
});

async function until(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
