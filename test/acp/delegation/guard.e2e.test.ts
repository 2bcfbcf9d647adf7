import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { AcpAgentTool, DELEGATION_CHAIN_ENV, DELEGATION_DEPTH_ENV, delegationContextFrom } from "../../../src/acp/delegation/index.js";
import { script } from "../../../src/testing/index.js";
import { cleanEnv, outerAgent, runTurn, serveLaunch, tempDir, toolResultsSeen, writeScript } from "./support.js";

const selfDelegating = new URL("./fixtures/self-delegating-agent.mjs", import.meta.url).pathname;
const done = script.text("coordinator done");

/** Pids of live processes whose command line mentions `needle` (Linux /proc). */
function processesRunning(needle: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(needle)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describe("delegation recursion guard", () => {
  it("reads depth and chain from the environment", () => {
    expect(delegationContextFrom({})).toEqual({ depth: 0, chain: [] });
    expect(delegationContextFrom({ [DELEGATION_DEPTH_ENV]: "2", [DELEGATION_CHAIN_ENV]: '["a#1","b#2"]' })).toEqual({ depth: 2, chain: ["a#1", "b#2"] });
    // A chain longer than the stated depth wins; garbage still counts as a hop.
    expect(delegationContextFrom({ [DELEGATION_DEPTH_ENV]: "0", [DELEGATION_CHAIN_ENV]: '["a#1","b#2"]' }).depth).toBe(2);
    expect(delegationContextFrom({ [DELEGATION_CHAIN_ENV]: "{oops" }).depth).toBe(1);
  });

  it("refuses beyond the hop limit without starting anything", async () => {
    const ws = tempDir();
    // The command does not exist: reaching it would be a spawn error, not a refusal.
    const tool = new AcpAgentTool({ name: "deep", description: "x", config: { command: "/nonexistent/agent" }, delegation: { depth: 3, chain: ["a#1", "b#2", "c#3"] } });
    const { driver, model } = outerAgent([tool], [script.toolCall("deep", { task: "x" }), done], { cwd: ws });
    await runTurn(driver, "go");
    const [seen] = toolResultsSeen(model);
    expect(seen?.isError).toBe(true);
    expect(seen?.text).toBe("Delegation refused: the hop limit of 3 nested delegations is reached (a → b → c → deep). Do the task yourself or return to the caller.");
  });

  it("refuses when the same agent is already in the chain", async () => {
    const ws = tempDir();
    const tool = new AcpAgentTool({ name: "reviewer", description: "x", config: { command: "/nonexistent/agent" }, agentId: "reviewer#abc", delegation: { depth: 1, chain: ["reviewer#abc"] } });
    const { driver, model } = outerAgent([tool], [script.toolCall("reviewer", { task: "x" }), done], { cwd: ws });
    await runTurn(driver, "go");
    expect(toolResultsSeen(model)[0]?.text).toMatch(/^Delegation refused: "reviewer" is already part of this delegation chain \(reviewer → reviewer\)/);
  });

  it("hands the delegate its depth and chain in the environment", async () => {
    const ws = tempDir();
    const inner = writeScript(ws, [{ toolCall: { name: "shell", input: { command: `printf '%s|%s' "$${DELEGATION_DEPTH_ENV}" "$${DELEGATION_CHAIN_ENV}"` } } }, { echo: "last_tool_result" }]);
    const tool = new AcpAgentTool({ name: "probe", description: "x", config: serveLaunch(["--model", `scripted:${inner}`, "--approve", "auto-all"]), delegation: { depth: 1, chain: ["coordinator#0"] } });
    const { driver, model } = outerAgent([tool], [script.toolCall("probe", { task: "x" }), done], { cwd: ws });
    await runTurn(driver, "go");
    const [seen] = toolResultsSeen(model);
    expect(seen?.isError).toBe(false);
    expect(seen?.text).toMatch(/2\|\["coordinator#0","probe#[0-9a-f]{12}"\]/);
  });

  it("an agent delegating to itself is stopped at the second hop, and the refusal comes back up", async () => {
    const ws = tempDir();
    const tool = new AcpAgentTool({ name: "self", description: "x", config: { command: process.execPath, args: [selfDelegating], env: cleanEnv(), inheritEnv: false } });
    const { driver, model } = outerAgent([tool], [script.toolCall("self", { task: "start" }), done], { cwd: ws });
    await runTurn(driver, "go");
    const [seen] = toolResultsSeen(model);
    expect(seen?.isError).toBe(false);
    expect(seen?.text).toContain('[depth 1] Delegation refused: "self" is already part of this delegation chain (self → self)');
    expect(processesRunning(selfDelegating)).toEqual([]);
  });

  it("a chain of distinct agents is stopped by the hop limit, each level reporting up", async () => {
    const ws = tempDir();
    const args = [selfDelegating, "--name", "hop", "--name-by-depth", "--max-depth", "3"];
    const tool = new AcpAgentTool({ name: "hop0", description: "x", config: { command: process.execPath, args, env: cleanEnv(), inheritEnv: false } });
    const { driver, model } = outerAgent([tool], [script.toolCall("hop0", { task: "start" }), done], { cwd: ws });
    await runTurn(driver, "go");
    const [seen] = toolResultsSeen(model);
    expect(seen?.text).toContain("[depth 1] [depth 2] [depth 3] Delegation refused: the hop limit of 3 nested delegations is reached (hop0 → hop1 → hop2 → hop3)");
    expect(processesRunning(selfDelegating)).toEqual([]);
  }, 60_000);
});
