import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { cleanUp, label, sessionRecords, startServe, textOf, workspace, writeScriptFile } from "./support.js";

afterEach(cleanUp);

describe("slash commands answered by serve itself", () => {
  it("advertises /help /mode /model after session/new; they answer locally (no model call, nothing stored); others go to the model", async () => {
    const { root, ws, state } = workspace();
    const alpha = writeScriptFile(root, "alpha.json", { steps: [{ echo: "transcript" }] });
    const beta = writeScriptFile(root, "beta.json", { id: "beta", steps: [{ echo: "transcript" }] });
    const s = await startServe(["--model", `scripted:${alpha}`, "--models", `scripted:${beta}`, "--state-dir", state], ws);
    const { sessionId: sid } = await s.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    await s.client.waitFor(() => s.client.updates(sid).some((u) => u.sessionUpdate === "available_commands_update"), "the commands");
    expect(s.client.updates(sid)[0]).toEqual({
      sessionUpdate: "available_commands_update",
      availableCommands: [
        { name: "help", description: expect.any(String) },
        { name: "mode", description: expect.any(String), input: { hint: "ask | auto-edit | read-only" } },
        { name: "model", description: expect.any(String), input: { hint: `scripted:${alpha} | scripted:${beta}` } },
      ],
      // serve's first update also says what the session's commands may do (docs/sandbox.md).
      _meta: { agentkit: { sandbox: { mode: "off" } } },
    });

    const reply = async (text: string): Promise<string> => {
      const before = s.client.updates(sid).length;
      expect((await s.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text }] })).stopReason).toBe("end_turn");
      return textOf(s.client.updates(sid).slice(before), "agent_message_chunk");
    };
    const help = await reply("/help");
    for (const needle of ["/help", "/mode <ask | auto-edit | read-only>", "Mode: ask", "* ask", "- read-only", `Model: scripted:${alpha}`, `- scripted:${beta}`]) expect(help).toContain(needle);

    expect(await reply("/mode read-only")).toBe("Mode is now read-only.");
    expect(s.client.updates(sid).filter((u) => u.sessionUpdate === "current_mode_update")).toEqual([{ sessionUpdate: "current_mode_update", currentModeId: "read-only" }]);
    expect(await reply("/mode")).toContain("Mode: read-only");
    expect(await reply("/mode turbo")).toMatch(/unknown mode "turbo"; the modes are ask, auto-edit, read-only/);

    expect(await reply(`/model scripted:${beta}`)).toBe(`Model is now scripted:${beta}.`);
    const update = s.client.updates(sid).find((u) => u.sessionUpdate === "config_option_update");
    expect(update).toMatchObject({ configOptions: [{ id: "model", currentValue: `scripted:${beta}` }] });

    // Nothing of the above reached the model or the transcript, and none of it became the title.
    expect(sessionRecords(state, sid).filter((r) => r.type === "item")).toEqual([]);
    expect(s.client.updates(sid).some((u) => u.sessionUpdate === "session_info_update")).toBe(false);
    // A command we do not handle is an ordinary prompt (the model sees it).
    expect(await reply("/review this")).toBe("user: /review this");
    expect(s.client.updates(sid).find((u) => u.sessionUpdate === "session_info_update")).toMatchObject({ title: "/review this" });

    // The mode and model chosen by command are stored like set_mode / set_config_option.
    await s.end();
    const t = await startServe(["--model", `scripted:${alpha}`, "--models", `scripted:${beta}`, "--state-dir", state], ws);
    const resumed = await t.agent.request(acp.methods.agent.session.resume, { sessionId: sid, cwd: ws });
    expect(resumed.modes?.currentModeId).toBe("read-only");
    expect(resumed.configOptions?.[0]?.currentValue).toBe(`scripted:${beta}`);
  });
});

describe("the plan tool", () => {
  it("its calls become ACP plan updates (the whole plan each time), without a permission prompt, and come back on load", async () => {
    const { root, ws, state } = workspace();
    const entries = [
      { content: "Read the failing test", priority: "high", status: "completed" },
      { content: "Fix the parser", priority: "high", status: "in_progress" },
      { content: "Run the suite", status: "pending" },
    ];
    const script = writeScriptFile(root, "plan.json", {
      steps: [
        { toolCall: { name: "update_plan", input: { entries }, callId: "call_plan1" } },
        { toolCall: { name: "update_plan", input: { entries: entries.map((e) => ({ ...e, status: "completed" })) }, callId: "call_plan2" } },
        { text: "All done." },
      ],
    });
    const s = await startServe(["--model", `scripted:${script}`, "--state-dir", state], ws);
    const { sessionId: sid } = await s.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    await s.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "fix it" }] });
    expect(s.client.permissionRequests).toEqual([]);
    const updates = s.client.updates(sid).filter((u) => u.sessionUpdate !== "available_commands_update" && u.sessionUpdate !== "session_info_update");
    expect(updates.map(label)).toEqual([
      "tool_call:call_plan1:pending",
      "tool_call_update:call_plan1:in_progress",
      "tool_call_update:call_plan1:completed",
      "plan",
      "tool_call:call_plan2:pending",
      "tool_call_update:call_plan2:in_progress",
      "tool_call_update:call_plan2:completed",
      "plan",
      "agent_message_chunk:All done.",
    ]);
    const plans = updates.filter((u) => u.sessionUpdate === "plan");
    expect(plans[0]).toEqual({
      sessionUpdate: "plan",
      entries: [
        { content: "Read the failing test", priority: "high", status: "completed" },
        { content: "Fix the parser", priority: "high", status: "in_progress" },
        { content: "Run the suite", priority: "medium", status: "pending" },
      ],
    });
    expect(plans[1]).toMatchObject({ entries: [{ status: "completed" }, { status: "completed" }, { status: "completed" }] });
    expect(updates[0]).toMatchObject({ kind: "think", title: "Plan (1/3 done)" });

    await s.agent.request(acp.methods.agent.session.close, { sessionId: sid });
    const before = s.client.updates(sid).length;
    await s.agent.request(acp.methods.agent.session.load, { sessionId: sid, cwd: ws, mcpServers: [] });
    const replayed = s.client.updates(sid).slice(before);
    expect(replayed.map(label).slice(0, 6)).toEqual(["user_message_chunk:fix it", "tool_call:call_plan1:completed", "plan", "tool_call:call_plan2:completed", "plan", "agent_message_chunk:All done."]);
    expect(replayed[4]).toEqual(plans[1]);
  });
});
