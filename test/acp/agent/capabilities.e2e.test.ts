import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { script } from "../../../src/testing/index.js";
import { InMemorySessionStore } from "../../../src/store/index.js";
import { AcpHeadlessRuntime } from "../../../src/acp/agent/index.js";
import { initialize, startInMemory } from "./fixtures.js";
import { connectServe, writeScript } from "./serve-support.js";
import { advertised, tempDir, textOf } from "./support.js";

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("initialize advertises exactly what is implemented, and each advertised capability is exercised", () => {
  it("in-memory runtime with an image-capable model", async () => {
    const dir = tempDir();
    const extra = tempDir("agentkit-extra-");
    const env = startInMemory({
      scripts: [[script.text("saw it")], [script.toolCall("read_file", { path: join(extra.path, "EXTRA.md") }, { callId: "r1" }), script.text("read it")], [script.text("bye")]],
      modelOptions: { capabilities: { image: true, embeddedContext: true } },
      promptCapabilities: { image: true, embeddedContext: true },
    });
    cleanups.push(() => dir.remove(), () => extra.remove(), () => env.close());
    writeFileSync(join(extra.path, "EXTRA.md"), "from the additional directory\n");

    const init = await initialize(env.agent);
    const checks: Record<string, () => Promise<void>> = {
      "promptCapabilities.image": async () => {
        const { sessionId } = await env.agent.request(acp.methods.agent.session.new, { cwd: dir.path, mcpServers: [] });
        await env.agent.request(acp.methods.agent.session.prompt, {
          sessionId,
          prompt: [
            { type: "text", text: "what is this?" },
            { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
            { type: "resource", resource: { uri: "file:///notes.md", text: "embedded notes", mimeType: "text/markdown" } },
            { type: "resource_link", uri: "file:///big.log", name: "big.log" },
          ],
        });
        const parts = env.models[0]!.requests[0]!.items.find((i) => i.role === "user")!.parts;
        expect(parts).toEqual([
          { type: "text", text: "what is this?" },
          { type: "media", mediaType: "image/png", data: "iVBORw0KGgo=" },
          { type: "resource", uri: "file:///notes.md", text: "embedded notes", mimeType: "text/markdown" },
          { type: "resource_link", uri: "file:///big.log", name: "big.log" },
        ]);
      },
      "promptCapabilities.embeddedContext": async () => {
        // Exercised together with image above (the embedded resource reached the model as a resource part).
        expect(env.models[0]!.requests[0]!.items.some((i) => i.parts.some((p) => p.type === "resource"))).toBe(true);
      },
      "sessionCapabilities.additionalDirectories": async () => {
        const { sessionId } = await env.agent.request(acp.methods.agent.session.new, { cwd: dir.path, additionalDirectories: [extra.path], mcpServers: [] });
        await env.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "read it" }] });
        const done = env.client.updates(sessionId).find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
        expect(done).toMatchObject({ toolCallId: "r1" });
        expect(JSON.stringify(done)).toContain("from the additional directory");
      },
      "sessionCapabilities.close": async () => {
        const { sessionId } = await env.agent.request(acp.methods.agent.session.new, { cwd: dir.path, mcpServers: [] });
        await env.agent.request(acp.methods.agent.session.close, { sessionId });
        await expect(env.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "x" }] })).rejects.toMatchObject({ code: -32002 });
      },
      "auth.status": async () => {
        const status = (await env.agent.request("auth/status" as typeof acp.methods.agent.logout, {})) as unknown;
        expect(status).toEqual({ state: "not_required" });
      },
      "sessionCapabilities.status": async () => {
        // Unstable method: sent as the raw method name (the stable SDK client has no typed helper).
        const { sessionId } = await env.agent.request(acp.methods.agent.session.new, { cwd: dir.path, mcpServers: [] });
        const status = (await env.agent.request("session/status" as typeof acp.methods.agent.session.close, { sessionId })) as unknown;
        expect(status).toMatchObject({ status: "open" });
      },
    };
    expect(advertised(init.agentCapabilities!)).toEqual(Object.keys(checks).sort());
    expect(init.agentCapabilities).toMatchObject({ loadSession: false, mcpCapabilities: { http: false, sse: false }, promptCapabilities: { audio: false } });
    expect(init.authMethods).toEqual([]);
    for (const check of Object.values(checks)) await check();
  });

  it("an embedder switches the unstable methods off: not advertised, and -32601", async () => {
    const dir = tempDir();
    const off = startInMemory({ scripts: [], store: new InMemorySessionStore(), unstable: false });
    const noFork = startInMemory({ scripts: [], store: new InMemorySessionStore(), unstable: { fork: false, archive: false } });
    cleanups.push(() => dir.remove(), () => off.close(), () => noFork.close());
    const offAll = advertised((await initialize(off.agent)).agentCapabilities!);
    expect(offAll.filter((c) => c.startsWith("auth."))).toEqual([]);
    const offCaps = offAll.filter((c) => c.startsWith("sessionCapabilities."));
    expect(offCaps).toEqual(["sessionCapabilities.additionalDirectories", "sessionCapabilities.close", "sessionCapabilities.delete", "sessionCapabilities.list", "sessionCapabilities.resume"]);
    const { sessionId } = await off.agent.request(acp.methods.agent.session.new, { cwd: dir.path, mcpServers: [] });
    for (const method of ["session/status", "session/fork", "session/set_title", "session/archive"]) {
      await expect(off.agent.request(method as typeof acp.methods.agent.session.close, { sessionId, cwd: dir.path, title: "t" } as { sessionId: string })).rejects.toMatchObject({ code: -32601 });
    }
    const someCaps = advertised((await initialize(noFork.agent)).agentCapabilities!).filter((c) => /fork|archive|status|title/.test(c));
    expect(someCaps).toEqual(["auth.status", "sessionCapabilities.status", "sessionCapabilities.title"]);
    expect(() => AcpHeadlessRuntime.builder().unstable({ forks: true } as never)).toThrow(/unknown unstable feature "forks"/);
  });

  it("MCP over ACP: `acp` advertised only when the factory takes it (mcpTransports) and the unstable feature is on; otherwise an acp server is refused with -32602", async () => {
    const dir = tempDir();
    const on = startInMemory({ scripts: [], mcpTransports: { acp: true } });
    const off = startInMemory({ scripts: [], mcpTransports: { acp: true }, unstable: { mcpAcp: false } });
    const none = startInMemory({ scripts: [] });
    cleanups.push(() => dir.remove(), () => on.close(), () => off.close(), () => none.close());
    expect(advertised((await initialize(on.agent)).agentCapabilities!).filter((c) => c.startsWith("mcpCapabilities."))).toEqual(["mcpCapabilities.acp"]);
    for (const env of [off, none]) {
      const caps = (await initialize(env.agent)).agentCapabilities!;
      expect(caps.mcpCapabilities).toEqual({ http: false, sse: false });
      const declaration = { type: "acp", name: "tools", serverId: "s1" } as unknown as acp.McpServer;
      await expect(env.agent.request(acp.methods.agent.session.new, { cwd: dir.path, mcpServers: [declaration] })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining("uses the acp transport, which this agent does not advertise"),
      });
    }
  });

  it("advertised but not supported by the session's model → still refused with -32602", async () => {
    const env = startInMemory({ scripts: [[script.text("x")]], promptCapabilities: { image: true } });
    const dir = tempDir();
    cleanups.push(() => dir.remove(), () => env.close());
    await initialize(env.agent);
    const { sessionId } = await env.agent.request(acp.methods.agent.session.new, { cwd: dir.path, mcpServers: [] });
    await expect(
      env.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }] }),
    ).rejects.toMatchObject({ code: -32602, data: { type: "image" } });
  });

  it("agentkit-acp serve (scripted model): embedded context, additional directories, close, load, list, resume, delete, all over stdio", async () => {
    const dir = tempDir("agentkit-caps-");
    const extra = join(dir.path, "extra");
    mkdirSync(extra);
    mkdirSync(join(dir.path, "ws"));
    writeFileSync(join(extra, "NOTE.md"), "note in extra dir\n");
    const scriptPath = writeScript(dir.path, [{ echo: "last_user_message" }, { toolCall: { name: "read_file", input: { path: join(extra, "NOTE.md") } } }, { echo: "last_tool_result" }]);
    const state = join(dir.path, "state");
    const env = connectServe(["--model", `scripted:${scriptPath}`, "--state-dir", state], { cwd: dir.path });
    cleanups.push(
      () => dir.remove(),
      async () => {
        env.connection.close();
        await env.proc.end();
      },
    );
    const init = await env.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    // http/sse MCP servers are exercised against serve in test/acp/agent/mcp-servers.e2e.test.ts,
    // acp (MCP over ACP) in test/acp/agent/mcp-over-acp.e2e.test.ts and test/acp/client/mcp-over-acp.e2e.test.ts.
    // Durable sessions are exercised in depth in test/acp/agent/lifecycle/; here each one once.
    expect(advertised(init.agentCapabilities!)).toEqual([
      "auth.status",
      "loadSession",
      "mcpCapabilities.acp",
      "mcpCapabilities.http",
      "mcpCapabilities.sse",
      "promptCapabilities.embeddedContext",
      "sessionCapabilities.additionalDirectories",
      "sessionCapabilities.archive",
      "sessionCapabilities.close",
      "sessionCapabilities.delete",
      "sessionCapabilities.fork",
      "sessionCapabilities.list",
      "sessionCapabilities.resume",
      "sessionCapabilities.status",
      "sessionCapabilities.title",
    ]);
    // fork, title, status and archive are exercised against serve in unstable-sessions.e2e.test.ts,
    // auth.status (and logout, advertised with a key-needing model) in auth-status.e2e.test.ts.

    const one = await env.agent.request(acp.methods.agent.session.new, { cwd: join(dir.path, "ws"), mcpServers: [] });
    await env.agent.request(acp.methods.agent.session.prompt, {
      sessionId: one.sessionId,
      prompt: [{ type: "resource", resource: { uri: "file:///spec.md", text: "embedded spec text" } }],
    });
    expect(textOf(env.client.updates(one.sessionId), "agent_message_chunk")).toContain("embedded spec text");

    const two = await env.agent.request(acp.methods.agent.session.new, { cwd: join(dir.path, "ws"), additionalDirectories: [extra], mcpServers: [] });
    await env.agent.request(acp.methods.agent.session.prompt, { sessionId: two.sessionId, prompt: [{ type: "text", text: "skip" }] });
    await env.agent.request(acp.methods.agent.session.prompt, { sessionId: two.sessionId, prompt: [{ type: "text", text: "read the note" }] });
    expect(textOf(env.client.updates(two.sessionId), "agent_message_chunk")).toContain("note in extra dir");

    await env.agent.request(acp.methods.agent.session.close, { sessionId: two.sessionId });
    await expect(env.agent.request(acp.methods.agent.session.prompt, { sessionId: two.sessionId, prompt: [{ type: "text", text: "x" }] })).rejects.toMatchObject({ code: -32002 });

    // list: both sessions, with the additional directory and the title of their first prompt.
    const listed = await env.agent.request(acp.methods.agent.session.list, { cwd: join(dir.path, "ws") });
    expect(listed.sessions.map((s) => [s.sessionId, s.additionalDirectories, s.title]).sort()).toEqual(
      [
        [one.sessionId, [], undefined],
        [two.sessionId, [extra], "skip"],
      ].sort(),
    );
    // resume: no replay; the session takes prompts again (with its additional directory).
    const before = env.client.updates(two.sessionId).length;
    await env.agent.request(acp.methods.agent.session.resume, { sessionId: two.sessionId, cwd: join(dir.path, "ws"), additionalDirectories: [extra] });
    expect(env.client.updates(two.sessionId).slice(before).filter((u) => u.sessionUpdate.endsWith("_chunk"))).toEqual([]);
    expect((await env.agent.request(acp.methods.agent.session.prompt, { sessionId: two.sessionId, prompt: [{ type: "text", text: "again" }] })).stopReason).toBe("end_turn");
    // load: the embedded resource comes back as the user's content block.
    const seen = env.client.updates(one.sessionId).length;
    await env.agent.request(acp.methods.agent.session.load, { sessionId: one.sessionId, cwd: join(dir.path, "ws"), mcpServers: [] });
    expect(env.client.updates(one.sessionId).slice(seen).find((u) => u.sessionUpdate === "user_message_chunk")).toMatchObject({
      content: { type: "resource", resource: { uri: "file:///spec.md", text: "embedded spec text" } },
    });
    // delete: gone from the list and the disk.
    await env.agent.request(acp.methods.agent.session.delete, { sessionId: one.sessionId });
    expect((await env.agent.request(acp.methods.agent.session.list, {})).sessions.map((s) => s.sessionId)).toEqual([two.sessionId]);
    expect(existsSync(join(state, "sessions", `${one.sessionId}.jsonl`))).toBe(false);
  });
});
