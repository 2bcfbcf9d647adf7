import { describe, expect, it } from "vitest";
import { AcpAgentTool, type DelegationReport } from "../../../src/acp/delegation/index.js";
import { livePidsInGroup } from "../../../src/core/process/group.js";
import { CancellationController } from "../../../src/core/index.js";
import { script } from "../../../src/testing/index.js";
import { expectGroupGone, fixtureAgent, onCleanup, outerAgent, runTurn, serveLaunch, tempDir, toolResultsSeen, writeScript } from "./support.js";

const done = script.text("coordinator done");

function persistentTool(name: string, steps: Parameters<typeof writeScript>[1], ws: string): AcpAgentTool {
  const inner = writeScript(ws, steps, `${name}.json`);
  const tool = AcpAgentTool.persistent({ name, description: `The ${name}.`, config: serveLaunch(["--model", `scripted:${inner}`]) });
  onCleanup(() => tool.close());
  return tool;
}

describe("AcpAgentTool.persistent", () => {
  it("keeps one process and one session across calls of the same outer session, until closeSession", async () => {
    const ws = tempDir();
    // A new session would replay step 1; the second answer proves the session was kept.
    const tool = persistentTool("specialist", [{ text: "first answer" }, { text: "second answer (same session)" }], ws);
    const { driver, model, events } = outerAgent(
      [tool],
      [script.toolCall("specialist", { task: "look at A" }, { callId: "c1" }), script.toolCall("specialist", { task: "and now B" }, { callId: "c2" }), done],
      { cwd: ws },
    );
    await runTurn(driver, "go");

    const texts = model.requests.flatMap((r) => r.items.flatMap((i) => i.parts.flatMap((p) => (p.type === "tool_result" ? [p.result.text] : []))));
    expect(texts.at(-2)).toContain("first answer");
    expect(texts.at(-1)).toContain("second answer (same session)");
    const started = events.progress().filter((p) => (p.data as { type?: string } | undefined)?.type === "started");
    expect(started.map((p) => (p.data as { resumed: boolean }).resumed)).toEqual([false, true]);
    const pids = events.pids();
    expect(new Set(pids).size).toBe(1);
    const sessions = toolResultsSeen(model).map((r) => (r.data as DelegationReport).sessionId);
    expect(sessions[0]).toBe(sessions[1]);

    expect(tool.openSessions).toEqual([driver.sessionId]);
    expect(livePidsInGroup(pids[0]!).length).toBeGreaterThan(0);
    await tool.closeSession(driver.sessionId);
    expect(tool.openSessions).toEqual([]);
    await expectGroupGone(pids[0]!);
  });

  it("different outer sessions get their own process", async () => {
    const ws = tempDir();
    const tool = persistentTool("specialist", [{ text: "hello" }], ws);
    const a = outerAgent([tool], [script.toolCall("specialist", { task: "a" }), done], { cwd: ws });
    const b = outerAgent([tool], [script.toolCall("specialist", { task: "b" }), done], { cwd: ws });
    await Promise.all([runTurn(a.driver, "go"), runTurn(b.driver, "go")]);
    expect(new Set(tool.openSessions)).toEqual(new Set([a.driver.sessionId, b.driver.sessionId]));
    expect(a.events.pids()[0]).not.toBe(b.events.pids()[0]);
    await tool.close();
    expect(tool.openSessions).toEqual([]);
  });

  it("an outer cancel cancels the prompt but keeps the session for the next call", async () => {
    const ws = tempDir();
    const tool = persistentTool("specialist", [{ hang: true, text: "busy…" }, { text: "answer after the cancel" }], ws);
    const cancellation = new CancellationController();
    const { driver, model, events } = outerAgent(
      [tool],
      [script.toolCall("specialist", { task: "long job" }, { callId: "c1" }), script.toolCall("specialist", { task: "short job" }, { callId: "c2" }), done],
      { cwd: ws, cancellation },
    );
    const first = runTurn(driver, "go");
    await events.waitFor(() => events.progressText("c1").includes("busy…"), "the delegate's first text");
    cancellation.interrupt("test");
    expect((await first).finishReason).toBe("cancelled");
    const [pid] = events.pids();
    expect(livePidsInGroup(pid!).length).toBeGreaterThan(0);

    await runTurn(driver, "again");
    const seen = toolResultsSeen(model).at(-1);
    expect(seen?.isError).toBe(false);
    expect(seen?.text).toContain("answer after the cancel");
    expect(events.pids()).toEqual([pid, pid]);
  });

  it("fresh: true starts a new session in a new process", async () => {
    const ws = tempDir();
    const tool = persistentTool("specialist", [{ text: "step one" }, { text: "step two" }], ws);
    const { driver, model, events } = outerAgent(
      [tool],
      [script.toolCall("specialist", { task: "a" }), script.toolCall("specialist", { task: "b", fresh: true }), done],
      { cwd: ws },
    );
    await runTurn(driver, "go");
    const texts = model.requests.at(-1)!.items.flatMap((i) => i.parts.flatMap((p) => (p.type === "tool_result" ? [p.result.text] : [])));
    expect(texts[0]).toContain("step one");
    expect(texts[1]).toContain("step one"); // a new session plays the script from the start
    const pids = events.pids();
    expect(pids).toHaveLength(2);
    expect(pids[0]).not.toBe(pids[1]);
    await expectGroupGone(pids[0]!);
  });

  it("a crash of the kept process is an error result; the next call starts a new process", async () => {
    const ws = tempDir();
    const tool = AcpAgentTool.persistent({ name: "crashy", description: "Crashes once.", config: { command: process.execPath, args: [fixtureAgent] } });
    onCleanup(() => tool.close());
    const { driver, model, events } = outerAgent([tool], [script.toolCall("crashy", { task: "crash" }), script.toolCall("crashy", { task: "hello" }), done], { cwd: ws });
    await runTurn(driver, "go");
    const results = toolResultsSeen(model);
    expect(results[0]?.isError).toBe(true);
    expect(results[0]?.text).toContain("exited with code 3");
    expect(results[1]?.isError).toBe(false);
    expect(new Set(events.pids()).size).toBe(2);
    expect(tool.openSessions).toEqual([driver.sessionId]);
  });

  it("a kept process that died between calls is replaced, and the result says the context is gone", async () => {
    const ws = tempDir();
    const tool = persistentTool("specialist", [{ text: "hello" }], ws);
    const { driver, model, events } = outerAgent([tool], [script.toolCall("specialist", { task: "a" }), done, script.toolCall("specialist", { task: "b" }), done], { cwd: ws });
    await runTurn(driver, "first");
    const [pid] = events.pids();
    process.kill(-pid!, "SIGKILL");
    await expectGroupGone(pid!);
    await runTurn(driver, "second");
    const seen = toolResultsSeen(model).at(-1);
    expect(seen?.isError).toBe(false);
    expect(seen?.text).toMatch(/^\(The previous specialist process had ended; this task ran in a new session without its earlier context\.\)\nhello/);
    expect(events.pids()).toHaveLength(2);
  });
});
