import { appendFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { INTERRUPTED_TOOL_TEXT } from "../../../../src/acp/agent/index.js";
import { cleanUp, label, onCleanup, sessionRecords, startServe, textOf, workspace, writeScriptFile } from "./support.js";
import { killGroup, startTimeOf } from "../../../support/processes.js";

afterEach(cleanUp);

describe("kill -9 of serve in the middle of a turn", () => {
  it("a new process on the same state dir loads every committed item in order; the torn line is skipped; the session goes on", async () => {
    const { root, ws, state } = workspace();
    const script = writeScriptFile(root, "script.json", {
      stepFrom: "transcript",
      steps: [
        { toolCall: { name: "write_file", input: { path: "a.txt", content: "one\n" }, callId: "call_a" }, text: "Writing a.txt." },
        { text: "a.txt is written." },
        // The command prints its pid, then runs until killed: the turn is mid-tool when serve dies.
        { toolCall: { name: "shell", input: { command: "echo pid:$$; exec sleep 120" }, callId: "call_sleep" }, reasoning: "Now the long command." },
        { echo: "transcript" },
      ],
    });
    const args = ["--model", `scripted:${script}`, "--state-dir", state, "--approve", "auto-all"];
    const command: { pid?: number; startedAt?: string } = {};
    onCleanup(() => {
      // The command runs in its own process group (so the kill of serve's group leaves it): end it.
      killGroup(command.pid, command.startedAt);
    });

    const a = await startServe(args, ws, { process: true });
    const { sessionId: sid } = await a.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    expect((await a.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "write a.txt" }] })).stopReason).toBe("end_turn");
    const pending = a.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "run the long command" }] });
    pending.catch(() => undefined); // it never answers: the process is killed
    const pidShown = (): number | undefined => {
      for (const u of a.client.updates(sid)) {
        const match = u.sessionUpdate === "tool_call_update" && u.toolCallId === "call_sleep" ? /pid:(\d+)/.exec(JSON.stringify(u.content ?? [])) : null;
        if (match) return Number(match[1]);
      }
      return undefined;
    };
    await a.client.waitFor(() => pidShown() !== undefined, "the long command to run (its output streamed)");
    command.pid = pidShown();
    command.startedAt = startTimeOf(command.pid);
    a.proc.kill(); // SIGKILL to serve's process group
    expect((await a.proc.exited).signal).toBe("SIGKILL");

    // What was committed before the kill, straight from the file: both turns' items, in order.
    const items = sessionRecords(state, sid).filter((r) => r.type === "item").map((r) => r.item!);
    expect(items.map((i) => `${i.role}:${i.parts.map((p) => p.type).join("+")}`)).toEqual([
      "user:text",
      "assistant:text+tool_call",
      "tool:tool_result",
      "assistant:text",
      "user:text",
      "assistant:reasoning+tool_call",
    ]);
    // A write that the kill tore in half: a line without its newline.
    appendFileSync(join(state, "sessions", `${sid}.jsonl`), '{"type":"item","at":"2026-01-01T00:00:00.000Z","item":{"id":"item_torn","role":"assis');

    const b = await startServe(args, ws);
    const loaded = b.agent.request(acp.methods.agent.session.load, { sessionId: sid, cwd: ws, mcpServers: [] });
    await loaded;
    const replayed = b.client.updates(sid).filter((u) => u.sessionUpdate !== "available_commands_update" && u.sessionUpdate !== "session_info_update");
    expect(replayed.map(label)).toEqual([
      "user_message_chunk:write a.txt",
      "agent_message_chunk:Writing a.txt.",
      "tool_call:call_a:completed",
      "agent_message_chunk:a.txt is written.",
      "user_message_chunk:run the long command",
      "agent_thought_chunk:Now the long command.",
      "tool_call:call_sleep:failed", // it never finished: shown (and told to the model) as interrupted
    ]);
    expect(replayed.at(-1)).toMatchObject({ kind: "execute", title: expect.stringContaining("sleep 120"), content: [{ type: "content", content: { type: "text", text: INTERRUPTED_TOOL_TEXT } }] });

    // The session goes on: the model gets the whole transcript, the interrupted call as an error result.
    await b.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "what happened?" }] });
    const echoed = textOf(b.client.updates(sid), "agent_message_chunk");
    expect(echoed).toContain(`tool: [result shell error: ${INTERRUPTED_TOOL_TEXT}]`);
    expect(echoed.trimEnd().endsWith("user: what happened?")).toBe(true);
    expect(echoed).not.toContain("item_torn");
    // The torn tail was cut before the next append: every line of the file parses now.
    expect(() => sessionRecords(state, sid)).not.toThrow();
    // serve in-process: its stderr is complete once it has returned.
    expect((await b.end()).code).toBe(0);
    expect(b.proc.stderr).toMatch(/torn last line \(\d+ bytes without a newline\) skipped/);
    expect(b.proc.stderr).toMatch(/cut a torn last line/);
  });

  it("an interrupted call is repaired on load although an earlier call had the same id (local models reuse call_1)", async () => {
    const { root, ws, state } = workspace();
    const script = writeScriptFile(root, "script.json", {
      stepFrom: "transcript",
      steps: [
        { toolCall: { name: "write_file", input: { path: "a.txt", content: "one\n" }, callId: "call_1" }, text: "Writing a.txt." },
        { text: "a.txt is written." },
        { toolCall: { name: "shell", input: { command: "sleep 120" }, callId: "call_1" } }, // never run: appended below as a kill leaves it
        { echo: "transcript" },
      ],
    });
    const args = ["--model", `scripted:${script}`, "--state-dir", state, "--approve", "auto-all"];
    const a = await startServe(args, ws);
    const { sessionId: sid } = await a.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    expect((await a.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "write a.txt" }] })).stopReason).toBe("end_turn");
    expect((await a.end()).code).toBe(0);
    // What a kill in the middle of the next turn's call leaves in the file: the prompt and the call, no result.
    const at = new Date().toISOString();
    const record = (item: unknown): string => `${JSON.stringify({ type: "item", at, item })}\n`;
    appendFileSync(join(state, "sessions", `${sid}.jsonl`), record({ id: "item_user_2", role: "user", parts: [{ type: "text", text: "run it" }], createdAt: at }));
    appendFileSync(join(state, "sessions", `${sid}.jsonl`), record({ id: "item_call_2", role: "assistant", parts: [{ type: "tool_call", callId: "call_1", toolName: "shell", input: { command: "sleep 120" } }], createdAt: at }));

    const b = await startServe(args, ws);
    await b.agent.request(acp.methods.agent.session.load, { sessionId: sid, cwd: ws, mcpServers: [] });
    const replayed = b.client.updates(sid).filter((u) => u.sessionUpdate === "tool_call");
    expect(replayed.map(label)).toEqual(["tool_call:call_1:completed", "tool_call:call_1:failed"]);
    expect(replayed[1]).toMatchObject({ title: expect.stringContaining("sleep 120"), content: [{ type: "content", content: { type: "text", text: INTERRUPTED_TOOL_TEXT } }] });
    await b.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "what happened?" }] });
    expect(textOf(b.client.updates(sid), "agent_message_chunk")).toContain(`tool: [result shell error: ${INTERRUPTED_TOOL_TEXT}]`);
  });

  it("a session killed during its first turn keeps its title (the first prompt), not (untitled)", async () => {
    const { root, ws, state } = workspace();
    const script = writeScriptFile(root, "script.json", { steps: [{ hang: true, text: "working" }] });
    const args = ["--model", `scripted:${script}`, "--state-dir", state];
    const a = await startServe(args, ws, { process: true });
    const { sessionId: sid } = await a.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    a.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "Fix the login bug" }] }).catch(() => undefined); // never answered: killed
    await a.client.waitFor(() => textOf(a.client.updates(sid), "agent_message_chunk") === "working", "the model to stream");
    a.proc.kill();
    expect((await a.proc.exited).signal).toBe("SIGKILL");

    const b = await startServe(args, ws);
    const { sessions } = await b.agent.request(acp.methods.agent.session.list, { cwd: ws });
    expect(sessions.map((s) => [s.sessionId, s.title])).toEqual([[sid, "Fix the login bug"]]);
  });
});
