import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { cleanUp, label, sessionRecords, startServe, textOf, wireMessages, workspace, writeScriptFile } from "./support.js";

afterEach(cleanUp);

const replayKinds = new Set(["user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan"]);

describe("durable sessions through agentkit-acp serve over stdio (official SDK client)", () => {
  it("new → two prompts with a tool call → close → list → load (replay before the answer) → prompt → resume in a new process → delete", async () => {
    const { root, ws, state } = workspace();
    // stepFrom "transcript": a loaded session continues the script where it stopped.
    const script = writeScriptFile(root, "script.json", {
      stepFrom: "transcript",
      steps: [
        { toolCall: { name: "write_file", input: { path: "notes.txt", content: "first notes\n" }, callId: "call_write" }, text: "Writing notes." },
        { text: "Wrote notes.txt." },
        { text: "Second answer.", reasoning: "Summarizing what happened." },
        { echo: "transcript" },
        { echo: "transcript" },
      ],
    });
    const args = ["--model", `scripted:${script}`, "--state-dir", state];

    // ── process A ──
    const a = await startServe(args, ws);
    expect(a.init.agentCapabilities).toMatchObject({ loadSession: true, sessionCapabilities: { list: {}, resume: {}, close: {}, delete: {}, additionalDirectories: {} } });
    const created = await a.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    const sid = created.sessionId;
    expect(created.modes).toMatchObject({ currentModeId: "ask" });
    expect(created.configOptions?.[0]).toMatchObject({ id: "model", category: "model", currentValue: `scripted:${script}` });
    await a.client.waitFor(() => a.client.updates(sid).some((u) => u.sessionUpdate === "available_commands_update"), "available commands");
    expect(existsSync(join(state, "sessions", `${sid}.jsonl`))).toBe(true);

    const first = await a.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "  Please write the notes\nwith a second line" }] });
    expect(first.stopReason).toBe("end_turn");
    expect(a.client.permissionRequests.map((r) => r.toolCall.toolCallId)).toEqual(["call_write"]);
    expect(readFileSync(join(ws, "notes.txt"), "utf8")).toBe("first notes\n");
    const info = a.client.updates(sid).find((u) => u.sessionUpdate === "session_info_update");
    expect(info).toMatchObject({ title: "Please write the notes" });
    expect(Date.parse((info as { updatedAt: string }).updatedAt)).not.toBeNaN();
    expect((await a.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "Now summarize" }] })).stopReason).toBe("end_turn");
    const liveLabels = a.client.updates(sid).filter((u) => replayKinds.has(u.sessionUpdate)).map(label);

    await a.agent.request(acp.methods.agent.session.close, { sessionId: sid });
    await expect(a.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "x" }] })).rejects.toMatchObject({ code: -32002 });
    expect(existsSync(join(state, "sessions", `${sid}.jsonl`))).toBe(true); // close keeps the file

    const listed = await a.agent.request(acp.methods.agent.session.list, { cwd: ws });
    expect(listed.sessions).toEqual([{ sessionId: sid, cwd: ws, additionalDirectories: [], title: "Please write the notes", updatedAt: expect.any(String) }]);
    expect((await a.agent.request(acp.methods.agent.session.list, { cwd: root })).sessions).toEqual([]);

    // load: every replayed update is on the wire before the answer, in the original order.
    const wireBefore = wireMessages(a.proc.stdout).length;
    const seenBefore = a.client.updates(sid).length;
    const loaded = await a.agent.request(acp.methods.agent.session.load, { sessionId: sid, cwd: ws, mcpServers: [] });
    const atAnswer = a.client.updates(sid).slice(seenBefore);
    const replayed = atAnswer.filter((u) => replayKinds.has(u.sessionUpdate));
    expect(replayed.map(label)).toEqual([
      "user_message_chunk:  Please write the notes\nwith a second line",
      "agent_message_chunk:Writing notes.",
      "tool_call:call_write:completed",
      "agent_message_chunk:Wrote notes.txt.",
      "user_message_chunk:Now summarize",
      "agent_thought_chunk:Summarizing what happened.",
      "agent_message_chunk:Second answer.",
    ]);
    // The same text and calls the client saw live (which streamed pending → in_progress → completed).
    expect(textOf(replayed, "agent_message_chunk")).toBe(textOf(a.client.updates(sid).slice(0, seenBefore), "agent_message_chunk"));
    expect(liveLabels.filter((l) => l.startsWith("tool_call:"))).toEqual(["tool_call:call_write:pending"]);
    const replayedCall = replayed.find((u) => u.sessionUpdate === "tool_call");
    expect(replayedCall).toMatchObject({
      kind: "edit",
      title: expect.stringContaining("notes.txt"),
      locations: [{ path: join(ws, "notes.txt") }],
      rawInput: { path: "notes.txt", content: "first notes\n" },
      content: [{ type: "diff", path: join(ws, "notes.txt"), oldText: null, newText: "first notes\n" }, { type: "content" }],
    });
    const wire = wireMessages(a.proc.stdout, wireBefore);
    const answerIndex = wire.findIndex((m) => m.id !== undefined && m.method === undefined);
    const replayOnWire = wire.filter((m, i) => i < answerIndex && m.method === "session/update" && replayKinds.has(m.params!.update!.sessionUpdate));
    expect(replayOnWire.map((m) => label(m.params!.update!))).toEqual(replayed.map(label));
    expect(wire.slice(answerIndex + 1).filter((m) => m.method === "session/update" && replayKinds.has(m.params!.update!.sessionUpdate))).toEqual([]);
    expect(loaded.modes?.currentModeId).toBe("ask");

    // prompting continues the same transcript: the model is sent the earlier turns.
    await a.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "What did we do?" }] });
    const echoed = textOf(a.client.updates(sid).slice(seenBefore + atAnswer.length), "agent_message_chunk");
    expect(echoed.split("\n")).toEqual([
      "user:   Please write the notes",
      "with a second line",
      `assistant: Writing notes. [call write_file {"path":"notes.txt","content":"first notes\\n"}]`,
      expect.stringMatching(/^tool: \[result write_file: /),
      "assistant: Wrote notes.txt.",
      "user: Now summarize",
      "assistant: Summarizing what happened. Second answer.",
      "user: What did we do?",
    ]);
    expect((await a.end()).code).toBe(0);

    // ── process B, same state dir: resume (no replay), prompt, delete ──
    const b = await startServe(args, ws);
    expect((await b.agent.request(acp.methods.agent.session.list, {})).sessions.map((s) => [s.sessionId, s.title])).toEqual([[sid, "Please write the notes"]]);
    const resumed = await b.agent.request(acp.methods.agent.session.resume, { sessionId: sid, cwd: ws });
    expect(resumed.modes?.currentModeId).toBe("ask");
    // After the answer: the available commands, then the stored title.
    await b.client.waitFor(() => b.client.updates(sid).some((u) => u.sessionUpdate === "session_info_update"), "the title after resume");
    expect(b.client.updates(sid).map((u) => u.sessionUpdate)).toEqual(["available_commands_update", "session_info_update"]);
    expect(b.client.updates(sid).filter((u) => replayKinds.has(u.sessionUpdate))).toEqual([]); // no replay
    expect(b.client.updates(sid).find((u) => u.sessionUpdate === "session_info_update")).toMatchObject({ title: "Please write the notes" });

    await b.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "And in the new process?" }] });
    const echoedB = textOf(b.client.updates(sid), "agent_message_chunk");
    expect(echoedB).toContain("user: Now summarize");
    expect(echoedB).toContain("user: What did we do?");
    expect(echoedB).toContain("assistant: user:   Please write the notes"); // process A's echo answer is in the transcript too
    expect(echoedB.trimEnd().endsWith("user: And in the new process?")).toBe(true);
    const records = sessionRecords(state, sid).filter((r) => r.type === "item");
    expect(records.map((r) => r.item!.role)).toEqual(["user", "assistant", "tool", "assistant", "user", "assistant", "user", "assistant", "user", "assistant"]);

    await b.agent.request(acp.methods.agent.session.delete, { sessionId: sid });
    expect((await b.agent.request(acp.methods.agent.session.list, {})).sessions).toEqual([]);
    expect(existsSync(join(state, "sessions", `${sid}.jsonl`))).toBe(false);
    await expect(b.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "x" }] })).rejects.toMatchObject({ code: -32002 });
    await expect(b.agent.request(acp.methods.agent.session.load, { sessionId: sid, cwd: ws, mcpServers: [] })).rejects.toMatchObject({ code: -32002 });
    expect((await b.end()).code).toBe(0);
  });
});
