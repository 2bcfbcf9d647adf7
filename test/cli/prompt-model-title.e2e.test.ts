import { afterEach, describe, expect, it } from "vitest";
import { Workspace, serveEnv } from "../acp/agent/services-support.js";
import { fixture } from "../acp/client/helpers.js";
import { runCli } from "../support/cli.js";

// prompt --model (our own agent: serve --model; another: its "model" option), --title, and a
// fork's title telling it apart from its source. Before: "unknown option --model" / "--title".
let ws: Workspace | undefined;
afterEach(() => ws?.cleanup());

describe("prompt --model and --title", () => {
  it("self: --model picks serve's model, --title names the session, a fork is 'Fork of …'", async () => {
    ws = new Workspace("agentkit-prompt-model-");
    const opts = { cwd: ws.cwd, env: serveEnv(ws) };
    const first = await runCli(["prompt", "--model", "demo", "--title", "My  plan", "--json", "hello"], opts);
    expect(first.code, first.stderr).toBe(0);
    expect(first.lines.at(-1)).toMatchObject({ type: "done", stopReason: "end_turn", result: { text: expect.stringContaining("demo model") } });
    const id = first.lines[0]?.sessionId as string;
    const fork = await runCli(["prompt", "--model", "demo", "--fork", id, "--json", "again"], opts);
    expect(fork.code, fork.stderr).toBe(0);
    const list = await runCli(["prompt", "--model", "demo", "--list", "--json"], opts);
    const titles = Object.fromEntries(list.lines.map((l) => [l.sessionId as string, l.title]));
    expect(titles[id]).toBe("My plan");
    expect(titles[fork.lines[0]?.sessionId as string]).toBe("Fork of My plan");
  });

  it("another agent: --model sets its model option; a model it does not offer is a usage error naming those it has (exit 2)", async () => {
    const agent = `"${process.execPath}" "${fixture}"`;
    const ok = await runCli(["prompt", "--agent", agent, "--model", "large", "--json", "hello"], { cwd: process.cwd() });
    expect(ok.code, ok.stderr).toBe(0);
    const run = await runCli(["prompt", "--agent", agent, "--model", "x", "hello"], { cwd: process.cwd() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('agentkit-acp prompt: --model: the agent has no model "x" (it has: small, large)');
  });
});
