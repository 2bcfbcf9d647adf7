import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { AcpHeadlessRuntime, AcpIntegration, ClientPermissionResolver, titleFromPrompt } from "../../../../src/acp/agent/index.js";
import { silentLogger } from "../../../../src/core/index.js";
import { Agent } from "../../../../src/loop/index.js";
import { InMemorySessionStore, JsonlSessionStore } from "../../../../src/store/index.js";
import { ScriptedModel, script, serveInMemory } from "../../../../src/testing/index.js";
import { ToolRegistry, builtinTools } from "../../../../src/tools/index.js";
import { initialize } from "../fixtures.js";
import { tempDir } from "../support.js";
import { cleanUp, label, onCleanup, startServe, textOf, workspace, writeScriptFile } from "./support.js";

afterEach(cleanUp);

describe("session/list, errors and moves through serve", () => {
  it("pages with a cursor (no repeats, no gaps), filters by cwd, refuses a bad cursor or a relative cwd with -32602", async () => {
    const { root, ws, state } = workspace();
    const other = join(root, "other");
    mkdirSync(other);
    // 51 stored sessions (one more than a page), 3 of them in another directory.
    const store = new JsonlSessionStore({ stateDir: state, logger: silentLogger });
    for (let i = 0; i < 51; i++) {
      await store.create({ sessionId: `stored_${String(i).padStart(2, "0")}`, cwd: i < 3 ? other : ws, title: `session ${i}`, createdAt: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString() });
    }
    const file = writeScriptFile(root, "s.json", { steps: [{ text: "x" }] });
    const s = await startServe(["--model", `scripted:${file}`, "--state-dir", state], ws);
    const page1 = await s.agent.request(acp.methods.agent.session.list, {});
    expect(page1.sessions).toHaveLength(50);
    expect(page1.sessions[0]).toEqual({ sessionId: "stored_50", cwd: ws, additionalDirectories: [], title: "session 50", updatedAt: "2026-01-01T00:50:00.000Z" });
    expect(page1.nextCursor).toEqual(expect.any(String));
    const page2 = await s.agent.request(acp.methods.agent.session.list, { cursor: page1.nextCursor });
    expect(page2.sessions.map((x) => x.sessionId)).toEqual(["stored_00"]);
    expect(page2.nextCursor ?? undefined).toBeUndefined();
    expect(new Set([...page1.sessions, ...page2.sessions].map((x) => x.sessionId)).size).toBe(51);
    expect((await s.agent.request(acp.methods.agent.session.list, { cwd: other })).sessions.map((x) => x.sessionId)).toEqual(["stored_02", "stored_01", "stored_00"]);

    await expect(s.agent.request(acp.methods.agent.session.list, { cursor: "not-a-cursor" })).rejects.toMatchObject({ code: -32602 });
    await expect(s.agent.request(acp.methods.agent.session.list, { cwd: "relative/dir" })).rejects.toMatchObject({ code: -32602 });
    await expect(s.agent.request(acp.methods.agent.session.load, { sessionId: "no_such_session", cwd: ws, mcpServers: [] })).rejects.toMatchObject({ code: -32002, data: { sessionId: "no_such_session" } });
    await expect(s.agent.request(acp.methods.agent.session.resume, { sessionId: "no_such_session", cwd: ws })).rejects.toMatchObject({ code: -32002 });
    await expect(s.agent.request(acp.methods.agent.session.load, { sessionId: "stored_01", cwd: "relative", mcpServers: [] })).rejects.toMatchObject({ code: -32602 });

    // Loading a stored session in another directory moves it there (the list follows).
    await s.agent.request(acp.methods.agent.session.load, { sessionId: "stored_01", cwd: ws, mcpServers: [] });
    expect((await s.agent.request(acp.methods.agent.session.list, { cwd: other })).sessions.map((x) => x.sessionId)).toEqual(["stored_02", "stored_00"]);
    expect((await s.agent.request(acp.methods.agent.session.list, { cwd: ws })).sessions[0]).toMatchObject({ sessionId: "stored_01", title: "session 1" });
  });

  it("load of a session that is open and running: the running turn is cancelled and the old copy closed first", async () => {
    const { root, ws, state } = workspace();
    const file = writeScriptFile(root, "s.json", { stepFrom: "transcript", steps: [{ text: "first" }, { hang: true, text: "working…" }, { echo: "transcript" }] });
    const s = await startServe(["--model", `scripted:${file}`, "--state-dir", state], ws);
    const { sessionId: sid } = await s.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    await s.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "one" }] });
    const hanging = s.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "two" }] });
    await s.client.waitFor(() => textOf(s.client.updates(sid), "agent_message_chunk").endsWith("working…"), "the second turn to stream");
    const before = s.client.updates(sid).length;
    await s.agent.request(acp.methods.agent.session.load, { sessionId: sid, cwd: ws, mcpServers: [] });
    expect((await hanging).stopReason).toBe("cancelled");
    expect(s.client.updates(sid).slice(before).map(label).filter((l) => l.startsWith("user") || l.startsWith("agent"))).toEqual([
      "user_message_chunk:one",
      "agent_message_chunk:first",
      "user_message_chunk:two",
      "agent_message_chunk:working…", // what the cancelled turn had streamed is committed too
    ]);
    await s.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "three" }] });
    expect(textOf(s.client.updates(sid), "agent_message_chunk")).toContain("user: one\nassistant: first\nuser: two\nassistant: working…\nuser: three");
    expect(s.proc.stderr).toMatch(/session closed.*session\/load of an open session/);
  });

  it("--no-persist: sessions live in memory only (listed and loadable in-process, gone after a restart), nothing written", async () => {
    const { root, ws, state } = workspace();
    const file = writeScriptFile(root, "s.json", { steps: [{ text: "x" }] });
    const args = ["--model", `scripted:${file}`, "--state-dir", state, "--no-persist"];
    const s = await startServe(args, ws);
    const { sessionId: sid } = await s.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    await s.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "remember me" }] });
    expect((await s.agent.request(acp.methods.agent.session.list, {})).sessions.map((x) => x.title)).toEqual(["remember me"]);
    await s.agent.request(acp.methods.agent.session.close, { sessionId: sid });
    const before = s.client.updates(sid).length;
    await s.agent.request(acp.methods.agent.session.load, { sessionId: sid, cwd: ws, mcpServers: [] });
    expect(s.client.updates(sid).slice(before).map(label).slice(0, 2)).toEqual(["user_message_chunk:remember me", "agent_message_chunk:x"]);
    await s.end();
    expect(existsSync(state)).toBe(false);
    const t = await startServe(args, ws);
    expect((await t.agent.request(acp.methods.agent.session.list, {})).sessions).toEqual([]);
    await expect(t.agent.request(acp.methods.agent.session.load, { sessionId: sid, cwd: ws, mcpServers: [] })).rejects.toMatchObject({ code: -32002 });
    expect(t.proc.stderr).toContain("in memory only");
  });
});

describe("AcpHeadlessRuntime with a session store (library)", () => {
  it("two connections: loading a session open in the other connection closes it there first", async () => {
    const dir = tempDir("agentkit-twoconn-");
    onCleanup(() => dir.remove());
    const store = new InMemorySessionStore();
    const integration = AcpIntegration.builder().approvalResolver(new ClientPermissionResolver()).logger(silentLogger).build();
    let made = 0;
    const runtime = AcpHeadlessRuntime.builder()
      .integration(integration)
      .logger(silentLogger)
      .sessionStore(store)
      .modes()
      .agentFactory((ctx) => {
        made += 1;
        const steps = made === 1 ? [script.text("hello"), script.hang()] : [(request: { items: unknown[] }) => script.text(`items: ${request.items.length}`)];
        return Agent.builder().model(new ScriptedModel(steps)).tools(new ToolRegistry(builtinTools())).observer(ctx.integration).cancellation(ctx.cancellation).logger(silentLogger).build();
      })
      .build();
    const connect = () => {
      const { client, connection, close } = serveInMemory(runtime);
      onCleanup(close);
      return { client, agent: connection.agent };
    };
    const one = connect();
    const two = connect();
    await initialize(one.agent);
    const init = await initialize(two.agent);
    expect(init.agentCapabilities).toMatchObject({ loadSession: true, sessionCapabilities: { list: {}, resume: {}, delete: {} } });

    const { sessionId: sid } = await one.agent.request(acp.methods.agent.session.new, { cwd: dir.path, mcpServers: [] });
    await one.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "hi" }] });
    const hanging = one.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "long" }] });
    await one.client.waitFor(() => textOf(one.client.updates(sid), "agent_message_chunk").endsWith("working…"), "streaming");
    expect(runtime.sessionCount).toBe(1);

    await two.agent.request(acp.methods.agent.session.load, { sessionId: sid, cwd: dir.path, mcpServers: [] });
    expect((await hanging).stopReason).toBe("cancelled");
    expect(runtime.sessionCount).toBe(1);
    await expect(one.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "x" }] })).rejects.toMatchObject({ code: -32002 });
    await two.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "continue" }] });
    // hi, hello, long, the cancelled turn's streamed text, continue
    expect(textOf(two.client.updates(sid), "agent_message_chunk")).toBe("helloworking…items: 5");
    // Without .models() no config options; without .slashCommands() no available_commands_update.
    expect(two.client.updates(sid).some((u) => u.sessionUpdate === "available_commands_update")).toBe(false);
  });

  it("titleFromPrompt: first non-empty text line, whitespace collapsed, at most 60 characters", () => {
    expect(titleFromPrompt([{ type: "text", text: "\n\n   Fix   the\tparser  \nmore" }])).toBe("Fix the parser");
    expect(titleFromPrompt([{ type: "resource_link", uri: "file:///a", name: "a" }, { type: "text", text: "x".repeat(80) }])).toBe(`${"x".repeat(59)}…`);
    expect(titleFromPrompt([{ type: "resource_link", uri: "file:///a", name: "a" }])).toBeUndefined();
  });
});
