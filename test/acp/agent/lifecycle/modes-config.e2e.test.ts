import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import type { RequestPermissionResponse, SessionConfigOption } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { deferred } from "../support.js";
import { cleanUp, select, sessionRecords, startServe, textOf, workspace, writeScriptFile } from "./support.js";

afterEach(cleanUp);

const ids = (options: SessionConfigOption[] | null | undefined): string[] => (options ?? []).map((o) => o.id);
const current = (options: SessionConfigOption[] | null | undefined, id: string): unknown => (options ?? []).find((o) => o.id === id)?.currentValue;

describe("session modes through serve: the permission policy follows the mode from the next tool call on", () => {
  it("ask → auto-edit while a permission is pending (the next call in the same turn runs without asking) → read-only → survives load", async () => {
    const { root, ws, state } = workspace();
    const script = writeScriptFile(root, "modes.json", {
      stepFrom: "transcript",
      steps: [
        { toolCall: { name: "write_file", input: { path: "m1.txt", content: "1" }, callId: "call_m1" } },
        { toolCall: { name: "write_file", input: { path: "m2.txt", content: "2" }, callId: "call_m2" } },
        { text: "two files" },
        { toolCall: { name: "write_file", input: { path: "m3.txt", content: "3" }, callId: "call_m3" } },
        { echo: "last_tool_result" },
        { toolCall: { name: "shell", input: { command: "touch m4.txt" }, callId: "call_m4" } },
        { echo: "last_tool_result" },
      ],
    });
    const s = await startServe(["--model", `scripted:${script}`, "--state-dir", state], ws);
    const created = await s.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    const sid = created.sessionId;
    expect(created.modes).toEqual({
      currentModeId: "ask",
      availableModes: [
        { id: "ask", name: "Ask", description: expect.any(String) },
        { id: "auto-edit", name: "Auto-edit", description: expect.any(String) },
        { id: "read-only", name: "Read-only", description: expect.any(String) },
      ],
    });

    // The first write asks (ask mode); while the editor shows the question, the user picks auto-edit.
    const gate = deferred<RequestPermissionResponse>();
    s.client.answer = () => gate.promise;
    const turn = s.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "write two files" }] });
    await s.client.waitFor(() => s.client.permissionRequests.length === 1, "the first permission request");
    await s.agent.request(acp.methods.agent.session.setMode, { sessionId: sid, modeId: "auto-edit" });
    expect(s.client.updates(sid).filter((u) => u.sessionUpdate === "current_mode_update")).toEqual([{ sessionUpdate: "current_mode_update", currentModeId: "auto-edit" }]);
    gate.resolve(select("allow_once"));
    expect((await turn).stopReason).toBe("end_turn");
    expect(s.client.permissionRequests.map((r) => r.toolCall.toolCallId)).toEqual(["call_m1"]); // m2 did not ask
    expect([readFileSync(join(ws, "m1.txt"), "utf8"), readFileSync(join(ws, "m2.txt"), "utf8")]).toEqual(["1", "2"]);

    await s.agent.request(acp.methods.agent.session.setMode, { sessionId: sid, modeId: "read-only" });
    await s.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "write m3" }] });
    expect(existsSync(join(ws, "m3.txt"))).toBe(false);
    expect(s.client.permissionRequests).toHaveLength(1); // refused without asking
    expect(textOf(s.client.updates(sid), "agent_message_chunk")).toContain("Not permitted: the session is read-only");
    await expect(s.agent.request(acp.methods.agent.session.setMode, { sessionId: sid, modeId: "yolo" })).rejects.toMatchObject({ code: -32602 });
    expect(sessionRecords(state, sid).some((r) => r.type === "header_update" && JSON.stringify(r).includes('"modeId":"read-only"'))).toBe(true);

    // A new process: the loaded session is still read-only, and its commands are refused.
    await s.end();
    const t = await startServe(["--model", `scripted:${script}`, "--state-dir", state], ws);
    const loaded = await t.agent.request(acp.methods.agent.session.load, { sessionId: sid, cwd: ws, mcpServers: [] });
    expect(loaded.modes?.currentModeId).toBe("read-only");
    const seen = t.client.updates(sid).length;
    await t.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "touch m4" }] });
    expect(textOf(t.client.updates(sid).slice(seen), "agent_message_chunk")).toContain("Not permitted: commands are not allowed in read-only mode");
    expect(existsSync(join(ws, "m4.txt"))).toBe(false);
    expect(t.client.permissionRequests).toEqual([]);
  });

  it("--mode and --approve pick the starting mode; auto-all approves what auto-edit would ask", async () => {
    const { root, ws, state } = workspace();
    const script = writeScriptFile(root, "cmd.json", { steps: [{ toolCall: { name: "shell", input: { command: "touch ran.txt" } } }, { text: "ran" }] });
    const s = await startServe(["--model", `scripted:${script}`, "--state-dir", state, "--approve", "auto-all"], ws);
    const created = await s.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    expect(created.modes?.currentModeId).toBe("auto-edit");
    await s.agent.request(acp.methods.agent.session.prompt, { sessionId: created.sessionId, prompt: [{ type: "text", text: "go" }] });
    expect(existsSync(join(ws, "ran.txt"))).toBe(true);
    expect(s.client.permissionRequests).toEqual([]);

    const r = await startServe(["--model", `scripted:${script}`, "--state-dir", state, "--mode", "read-only"], ws);
    expect((await r.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] })).modes?.currentModeId).toBe("read-only");
    const d = await startServe(["--model", `scripted:${script}`, "--state-dir", state, "--approve", "deny"], ws);
    expect((await d.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] })).modes?.currentModeId).toBe("read-only");
  });
});

describe("config options through serve: model and thinking level", () => {
  it("switching the model mid-turn takes effect on the next model call; thinking appears with a thinking model; values survive load", async () => {
    const { root, ws, state } = workspace();
    const alpha = writeScriptFile(root, "alpha.json", {
      id: "alpha",
      stepFrom: "transcript",
      steps: [{ text: "alpha speaking" }, { toolCall: { name: "write_file", input: { path: "cfg.txt", content: "c" }, callId: "call_cfg" } }, { text: "alpha again" }],
    });
    const beta = writeScriptFile(root, "beta.json", { id: "beta", capabilities: { thinking: true }, steps: [{ echo: "thinking" }] });
    const args = ["--model", `scripted:${alpha}`, "--models", `scripted:${beta}`, "--state-dir", state];
    const s = await startServe(args, ws);
    const created = await s.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    const sid = created.sessionId;
    expect(created.configOptions).toEqual([
      {
        id: "model",
        name: "Model",
        category: "model",
        type: "select",
        currentValue: `scripted:${alpha}`,
        options: [
          { value: `scripted:${alpha}`, name: "scripted alpha.json" },
          { value: `scripted:${beta}`, name: "scripted beta.json", description: "scripted (testing only)" },
        ],
      },
    ]);
    await s.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "hello" }] });
    expect(textOf(s.client.updates(sid), "agent_message_chunk")).toBe("alpha speaking");

    // Mid-turn: alpha asks to write; while the permission is pending the user switches to beta.
    const gate = deferred<RequestPermissionResponse>();
    s.client.answer = () => gate.promise;
    const turn = s.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "write cfg" }] });
    await s.client.waitFor(() => s.client.permissionRequests.length === 1, "the permission request");
    const switched = await s.agent.request(acp.methods.agent.session.setConfigOption, { sessionId: sid, configId: "model", value: `scripted:${beta}` });
    expect(ids(switched.configOptions)).toEqual(["model", "thinking"]);
    expect(switched.configOptions.find((o) => o.id === "thinking")).toMatchObject({ category: "thought_level", currentValue: "off", options: [{ value: "off" }, { value: "low" }, { value: "medium" }, { value: "high" }] });
    // The option list changed shape: config_option_update tells clients that watch updates.
    expect(s.client.updates(sid).filter((u) => u.sessionUpdate === "config_option_update").map((u) => ids((u as { configOptions: SessionConfigOption[] }).configOptions))).toEqual([["model", "thinking"]]);
    gate.resolve(select("allow_once"));
    await turn;
    expect(textOf(s.client.updates(sid), "agent_message_chunk")).toBe("alpha speakingthinking: off"); // the model call after the tool was beta's

    const high = await s.agent.request(acp.methods.agent.session.setConfigOption, { sessionId: sid, configId: "thinking", value: "high" });
    expect(current(high.configOptions, "thinking")).toBe("high");
    expect(s.client.updates(sid).filter((u) => u.sessionUpdate === "config_option_update")).toHaveLength(1); // same shape: the answer suffices
    const seen = s.client.updates(sid).length;
    await s.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "think hard" }] });
    expect(textOf(s.client.updates(sid).slice(seen), "agent_message_chunk")).toBe("thinking: high");

    for (const [configId, value] of [
      ["nope", "x"],
      ["model", "anthropic:not-offered"],
      ["thinking", "extreme"],
    ] as const) {
      await expect(s.agent.request(acp.methods.agent.session.setConfigOption, { sessionId: sid, configId, value })).rejects.toMatchObject({ code: -32602 });
    }
    await expect(s.agent.request(acp.methods.agent.session.setConfigOption, { sessionId: sid, configId: "model", type: "boolean", value: true })).rejects.toMatchObject({ code: -32602 });

    // Survives a restart and load.
    await s.end();
    const t = await startServe(args, ws);
    const loaded = await t.agent.request(acp.methods.agent.session.load, { sessionId: sid, cwd: ws, mcpServers: [] });
    expect([current(loaded.configOptions, "model"), current(loaded.configOptions, "thinking")]).toEqual([`scripted:${beta}`, "high"]);
    const before = t.client.updates(sid).length;
    await t.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "still?" }] });
    expect(textOf(t.client.updates(sid).slice(before), "agent_message_chunk")).toBe("thinking: high");

    // Back to alpha: the thinking option goes away (and an update says so).
    const back = await t.agent.request(acp.methods.agent.session.setConfigOption, { sessionId: sid, configId: "model", value: `scripted:${alpha}` });
    expect(ids(back.configOptions)).toEqual(["model"]);
    await t.client.waitFor(() => t.client.updates(sid).some((u) => u.sessionUpdate === "config_option_update"), "the config update");
  });

  it("--models leaves out a provider whose key is not set, with a warning", async () => {
    const { root, ws, state } = workspace();
    const alpha = writeScriptFile(root, "alpha.json", { steps: [{ text: "a" }] });
    const s = await startServe(["--model", `scripted:${alpha}`, "--models", "anthropic:claude-sonnet-4-5,demo", "--state-dir", state], ws);
    const created = await s.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    const model = created.configOptions?.find((o) => o.id === "model") as { options: Array<{ value: string }> } | undefined;
    expect(model?.options.map((o) => o.value)).toEqual([`scripted:${alpha}`, "demo"]);
    expect(s.proc.stderr).toMatch(/--models anthropic:claude-sonnet-4-5 is not offered: .*ANTHROPIC_API_KEY/);
  });
});
