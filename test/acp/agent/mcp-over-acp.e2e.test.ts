import * as acp from "@agentclientprotocol/sdk/unstable";
import { fromMcpServer } from "@agentclientprotocol/sdk/experimental/mcp-server";
import { McpServer } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod/v4";
import { openServe, cleanEnv } from "./serve-support.js";
import { Workspace } from "./services-support.js";

// serve against the official SDK's client side of MCP over ACP: a raw SDK client that serves an
// @modelcontextprotocol/server McpServer through McpOverAcpProvider + fromMcpServer and declares
// it in session/new as `{ type: "acp", name, serverId }`.

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function rawClient(steps: unknown[]) {
  const ws = new Workspace("agentkit-mcp-acp-raw-");
  cleanups.push(() => ws.cleanup());
  const proc = openServe(["--model", `scripted:${ws.script(steps as never)}`, "--approve", "auto-all", "--state-dir", ws.stateDir], { cwd: ws.cwd, env: cleanEnv() });
  const updates: acp.SessionNotification[] = [];
  const provider = new acp.McpOverAcpProvider();
  const app = acp
    .client({ name: "raw-sdk-client" })
    .onNotification(acp.methods.client.session.update, ({ params }) => void updates.push(params))
    .onRequest(acp.methods.client.mcp.message, provider.handleRequest);
  const connection = app.connect(proc.stream());
  cleanups.push(async () => {
    connection.close();
    await proc.end();
  });
  return { ws, proc, provider, connection, updates };
}

function notes(): McpServer {
  const server = new McpServer({ name: "notes", version: "1.0.0" });
  server.registerTool("lookup", { description: "Looks a note up", inputSchema: z.object({ key: z.string() }) }, ({ key }) => ({
    content: [{ type: "text", text: `note ${key}: buy milk` }],
  }));
  return server;
}

const textOf = (updates: acp.SessionNotification[], sessionId: string): string =>
  updates
    .filter((n) => n.sessionId === sessionId && n.update.sessionUpdate === "agent_message_chunk")
    .map((n) => (n.update.sessionUpdate === "agent_message_chunk" && n.update.content.type === "text" ? n.update.content.text : ""))
    .join("");

describe("serve ↔ the official SDK client serving an MCP server over ACP", () => {
  it("the declared server's tools become session tools: the model's call reaches it over mcp/message and the result returns to the model", async () => {
    const env = rawClient([{ toolCall: { name: "notes__lookup", input: { key: "k1" } } }, { echo: "last_tool_result" }]);
    const init = await env.connection.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    expect(init.agentCapabilities?.mcpCapabilities?.acp).toBe(true);
    const adapter = fromMcpServer(() => notes());
    cleanups.push(() => adapter.close());
    const registration = env.provider.registerServer(env.connection.agent, { name: "notes", handler: adapter.handler });
    const { sessionId } = await env.connection.agent.request(acp.methods.agent.session.new, { cwd: env.ws.cwd, mcpServers: [{ ...registration.declaration }] });
    const answer = await env.connection.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "look k1 up" }] });
    expect(answer.stopReason).toBe("end_turn");
    expect(textOf(env.updates, sessionId)).toBe("note k1: buy milk");
    const done = env.updates.find((n) => n.update.sessionUpdate === "tool_call_update" && n.update.status === "completed");
    expect(done).toBeDefined();
  });

  it("bad acp declarations: no serverId → -32602 (the SDK's schema), an empty one → -32602 naming the entry; an unregistered serverId → the server is skipped with a warning, the session still opens", async () => {
    const env = rawClient([{ text: "fine" }]);
    await env.connection.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    await expect(
      env.connection.agent.request(acp.methods.agent.session.new, { cwd: env.ws.cwd, mcpServers: [{ type: "acp", name: "ghost" } as never] }),
    ).rejects.toMatchObject({ code: -32602 });
    await expect(
      env.connection.agent.request(acp.methods.agent.session.new, { cwd: env.ws.cwd, mcpServers: [{ type: "acp", name: "ghost", serverId: "" }] }),
    ).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('mcpServers[0] ("ghost") needs a non-empty serverId') });
    const { sessionId } = await env.connection.agent.request(acp.methods.agent.session.new, {
      cwd: env.ws.cwd,
      mcpServers: [{ type: "acp", name: "ghost", serverId: "never-registered" }],
    });
    await env.connection.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hi" }] });
    expect(textOf(env.updates, sessionId)).toContain('MCP server "ghost" was not started');
  });
});
