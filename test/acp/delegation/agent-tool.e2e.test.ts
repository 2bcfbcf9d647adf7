import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AcpAgentTool, type DelegatedPermissionRequest, type DelegationReport } from "../../../src/acp/delegation/index.js";
import { livePidsInGroup } from "../../../src/core/process/group.js";
import { CancellationController } from "../../../src/core/index.js";
import { demoNotePath } from "../../../src/model/demo.js";
import { script } from "../../../src/testing/index.js";
import { fixtureAgent, outerAgent, runTurn, serveLaunch, tempDir, toolResultsSeen, writeScript } from "./support.js";

const finalText = script.text("coordinator done");

describe("AcpAgentTool (one process per call) against agentkit-acp serve", () => {
  it("returns the delegate's answer, tool calls and changed files to the outer model, and streams progress", async () => {
    const ws = tempDir();
    const inner = writeScript(ws, [
      { toolCall: { name: "write_file", input: { path: "notes/review.md", content: "LGTM\n" } }, text: "Writing my notes." },
      { text: "Review done: the code looks fine." },
    ]);
    const reviewer = new AcpAgentTool({ name: "reviewer", description: "Reviews code.", config: serveLaunch(["--model", `scripted:${inner}`, "--approve", "auto-all"]) });
    const { driver, model, events } = outerAgent([reviewer], [script.toolCall("reviewer", { task: "Review the code and write notes" }, { callId: "outer-1" }), finalText], { cwd: ws });

    const result = await runTurn(driver, "please review");
    expect(result.finishReason).toBe("completed");

    const [seen] = toolResultsSeen(model);
    expect(seen?.isError).toBe(false);
    // Two messages of the delegate, kept apart.
    expect(seen?.text).toContain("Writing my notes.\n\nReview done: the code looks fine.");
    expect(seen?.text).toContain("reviewer finished (end_turn)");
    expect(seen?.text).toContain("Files changed: notes/review.md");
    const report = seen?.data as DelegationReport;
    expect(report.stopReason).toBe("end_turn");
    expect(report.toolCalls).toEqual([expect.objectContaining({ title: "Write notes/review.md", kind: "edit", status: "completed" })]);
    expect(readFileSync(join(ws, "notes/review.md"), "utf8")).toBe("LGTM\n");

    // The outer tool result carries the delegate's diff, so an editor can show it.
    const toolResult = events.events.find((e) => e.type === "tool_result");
    expect(toolResult?.type === "tool_result" && toolResult.result.diffs).toEqual([{ path: join(ws, "notes/review.md"), oldText: null, newText: "LGTM\n" }]);

    // Progress: the delegate's text and tool calls, as events of the outer call.
    const text = events.progressText("outer-1");
    expect(text).toContain("Writing my notes.");
    expect(text).toContain("→ Write notes/review.md");
    expect(text).toContain("✓ Write notes/review.md");
    expect(text).toContain("Review done: the code looks fine.");
    const pids = events.pids();
    expect(pids).toHaveLength(1);
    // One-shot: the process is gone by the time the tool returned.
    expect(livePidsInGroup(pids[0]!)).toEqual([]);
  });

  it("denies the delegate's permission questions by default (the demo model's write is refused)", async () => {
    const ws = tempDir();
    const writer = new AcpAgentTool({ name: "writer", description: "Writes notes.", config: serveLaunch(["--model", "demo"]) });
    const { driver, model } = outerAgent([writer], [script.toolCall("writer", { task: "write the note" }), finalText], { cwd: ws });

    await runTurn(driver, "go");
    const [seen] = toolResultsSeen(model);
    const report = seen?.data as DelegationReport;
    expect(report.permissions).toEqual([expect.objectContaining({ title: `Write ${demoNotePath}`, decision: "deny" })]);
    expect(seen?.text).toContain(`Permissions not granted: "Write ${demoNotePath}" (deny: no rule matched; default is deny)`);
    expect(seen?.text).toContain("denied");
    expect(existsSync(join(ws, demoNotePath))).toBe(false);
  });

  it("forwards permission questions to the outer approval flow when askOuter is set (approved: the file is written)", async () => {
    const ws = tempDir();
    const asked: DelegatedPermissionRequest[] = [];
    const writer = new AcpAgentTool({
      name: "writer",
      description: "Writes notes.",
      config: serveLaunch(["--model", "demo"]),
      askOuter: (request) => {
        asked.push(request);
        return "allow_once";
      },
    });
    const { driver, model, events } = outerAgent([writer], [script.toolCall("writer", { task: "write the note" }, { callId: "outer-w" }), finalText], { cwd: ws });

    await runTurn(driver, "go");
    expect(asked).toHaveLength(1);
    expect(asked[0]?.delegate).toBe("writer");
    expect(asked[0]?.outer).toEqual({ sessionId: driver.sessionId, callId: "outer-w" });
    expect(asked[0]?.question.title).toBe(`Write ${demoNotePath}`);
    expect(asked[0]?.question.options.map((o) => o.kind)).toContain("allow_once");
    expect(readFileSync(join(ws, demoNotePath), "utf8")).toContain("Written by the agentkit-acp demo model");
    const [seen] = toolResultsSeen(model);
    expect(seen?.isError).toBe(false);
    expect(seen?.text).toContain(`Files changed: ${demoNotePath}`);
    expect(events.progressText("outer-w")).toContain("permission granted");
  });

  it("forwarded and rejected outside: the file is not written", async () => {
    const ws = tempDir();
    const writer = new AcpAgentTool({ name: "writer", description: "Writes notes.", config: serveLaunch(["--model", "demo"]), askOuter: () => "reject_once" });
    const { driver, model } = outerAgent([writer], [script.toolCall("writer", { task: "write the note" }), finalText], { cwd: ws });
    await runTurn(driver, "go");
    expect((toolResultsSeen(model)[0]?.data as DelegationReport).permissions[0]?.decision).toBe("deny");
    expect(existsSync(join(ws, demoNotePath))).toBe(false);
  });

  it("outer cancel sends session/cancel, ends the delegate's process group, and the tool returns promptly", async () => {
    const ws = tempDir();
    const inner = writeScript(ws, [{ hang: true, text: "working on it" }]);
    const cancellation = new CancellationController();
    const slow = new AcpAgentTool({ name: "slow", description: "Takes forever.", config: serveLaunch(["--model", `scripted:${inner}`]) });
    const { driver, events } = outerAgent([slow], [script.toolCall("slow", { task: "take your time" }, { callId: "outer-c" }), finalText], { cwd: ws, cancellation });

    const turn = runTurn(driver, "go");
    await events.waitFor(() => events.progressText("outer-c").includes("working on it"), "the delegate's streamed text");
    const [pid] = events.pids();
    expect(livePidsInGroup(pid!).length).toBeGreaterThan(0);
    const cancelledAt = Date.now();
    cancellation.interrupt("test cancel");
    const result = await turn;
    const elapsed = Date.now() - cancelledAt;

    expect(result.finishReason).toBe("cancelled");
    const toolResult = events.events.find((e) => e.type === "tool_result");
    expect(toolResult?.type === "tool_result" && toolResult.result.isError).toBe(true);
    expect(toolResult?.type === "tool_result" && toolResult.result.text).toContain("The slow task was cancelled by the user.");
    expect(toolResult?.type === "tool_result" && toolResult.result.text).toContain("Output before it stopped:\nworking on it");
    // The delegate answered `cancelled` (a clean cancel, not a kill) and its group is gone already.
    expect((toolResult?.type === "tool_result" && (toolResult.result.data as DelegationReport).stopReason)).toBe("cancelled");
    expect(livePidsInGroup(pid!)).toEqual([]);
    expect(elapsed).toBeLessThan(8_000);
  });

  it("a delegate that ignores session/cancel is killed after the grace period", async () => {
    const ws = tempDir();
    const cancellation = new CancellationController();
    const stubborn = new AcpAgentTool({ name: "stubborn", description: "Ignores cancel.", config: { command: process.execPath, args: [fixtureAgent] }, cancelGraceMs: 500 });
    const { driver, events } = outerAgent([stubborn], [script.toolCall("stubborn", { task: "stubborn" }, { callId: "outer-s" }), finalText], { cwd: ws, cancellation });
    const turn = runTurn(driver, "go");
    await events.waitFor(() => events.progressText("outer-s").includes("tick 2 "), "ticks");
    const [pid] = events.pids();
    cancellation.interrupt("test");
    expect((await turn).finishReason).toBe("cancelled");
    const toolResult = events.events.find((e) => e.type === "tool_result");
    expect(toolResult?.type === "tool_result" && toolResult.result.text).toContain(
      "The stubborn task was cancelled by the user. The agent did not end its turn within 500 ms after session/cancel, so its process was ended.",
    );
    expect(livePidsInGroup(pid!)).toEqual([]);
  });

  it("a per-call timeout cancels the delegated turn and reports it", async () => {
    const ws = tempDir();
    const inner = writeScript(ws, [{ hang: true, text: "thinking hard" }]);
    const slow = new AcpAgentTool({ name: "slow", description: "Takes forever.", config: serveLaunch(["--model", `scripted:${inner}`]), timeoutMs: 1_500 });
    const { driver, model } = outerAgent([slow], [script.toolCall("slow", { task: "x" }), finalText], { cwd: ws });
    await runTurn(driver, "go");
    const [seen] = toolResultsSeen(model);
    expect(seen?.isError).toBe(true);
    expect(seen?.text).toContain("The slow agent did not finish within 1500 ms; its turn was cancelled.");
    expect(seen?.text).toContain("thinking hard");
  });

  it("an agent that crashes mid-prompt becomes an error result with exit code and stderr tail", async () => {
    const ws = tempDir();
    const crashy = new AcpAgentTool({ name: "crashy", description: "Crashes.", config: { command: process.execPath, args: [fixtureAgent] } });
    const { driver, model } = outerAgent([crashy], [script.toolCall("crashy", { task: "crash" }), finalText], { cwd: ws });
    const result = await runTurn(driver, "go");
    expect(result.finishReason).toBe("completed");
    const [seen] = toolResultsSeen(model);
    expect(seen?.isError).toBe(true);
    expect(seen?.text).toContain("The crashy agent process exited with code 3 before finishing the task.");
    expect(seen?.text).toContain("fatal: simulated crash in the middle of a prompt");
    expect(seen?.text).toContain("about to crash");
    expect((seen?.data as DelegationReport).error).toEqual(expect.objectContaining({ name: "AgentExitedError", exitCode: 3 }));
  });

  it("a long answer keeps its end, with a note on what was cut", async () => {
    const ws = tempDir();
    const inner = writeScript(ws, [{ text: "0123456789ABCDEFGHIJ" }]);
    const terse = new AcpAgentTool({ name: "terse", description: "x", config: serveLaunch(["--model", `scripted:${inner}`]), maxAnswerChars: 5 });
    const { driver, model } = outerAgent([terse], [script.toolCall("terse", { task: "x" }), finalText], { cwd: ws });
    await runTurn(driver, "go");
    expect(toolResultsSeen(model)[0]?.text).toMatch(/^\[… 15 earlier characters omitted …\]\nFGHIJ\n/);
  });

  it("a command that cannot start becomes an error result, not an exception", async () => {
    const ws = tempDir();
    const missing = new AcpAgentTool({ name: "missing", description: "Absent.", config: { command: join(ws, "no-such-agent") } });
    const { driver, model } = outerAgent([missing], [script.toolCall("missing", { task: "x" }), finalText], { cwd: ws });
    const result = await runTurn(driver, "go");
    expect(result.finishReason).toBe("completed");
    const [seen] = toolResultsSeen(model);
    expect(seen?.isError).toBe(true);
    expect(seen?.text).toMatch(/^Could not start the missing agent: .*ENOENT/);
  });

  it("stop reasons other than end_turn are error results the model can read", async () => {
    const ws = tempDir();
    // The inner model finishes with `length` → the served agent answers max_tokens.
    const inner = writeScript(ws, [{ events: [{ type: "text_delta", text: "partial answ" }, { type: "finish", reason: "length" }] }]);
    const capped = new AcpAgentTool({ name: "capped", description: "Runs out.", config: serveLaunch(["--model", `scripted:${inner}`]) });
    const { driver, model } = outerAgent([capped], [script.toolCall("capped", { task: "x" }), finalText], { cwd: ws });
    await runTurn(driver, "go");
    const [seen] = toolResultsSeen(model);
    expect(seen?.isError).toBe(true);
    expect(seen?.text).toContain("The capped agent reached its output token limit before finishing.");
    expect(seen?.text).toContain("partial answ");
  });
});
