import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { startMockAnthropic } from "../../../src/testing/index.js";
import { connectServe } from "./serve-support.js";
import { Workspace, serveEnv, startServeClient } from "./services-support.js";

// `authenticate` and the -32000 gate: serve advertises "API key from the environment" for a
// provider that needs a key; prompts answer auth-required until the key is there.

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function start(args: string[], env: Record<string, string> = {}) {
  const ws = new Workspace("agentkit-auth-");
  const served = connectServe(args, { cwd: ws.cwd, env: serveEnv(ws, env) });
  cleanups.push(
    () => ws.cleanup(),
    async () => {
      served.connection.close();
      await served.proc.end();
    },
  );
  return { ws, ...served };
}

const text = (t: string): acp.ContentBlock[] => [{ type: "text", text: t }];

describe("authentication (serve)", () => {
  it("no key for the configured provider: env-api-key is advertised, prompts answer -32000, authenticate says what to set", async () => {
    const { ws, agent } = start(["--model", "anthropic:claude-sonnet-4-5"]);
    const init = await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    expect(init.authMethods).toEqual([
      { id: "env-api-key", name: "ANTHROPIC_API_KEY from the environment", description: expect.stringContaining("Set ANTHROPIC_API_KEY") },
    ]);
    // Opening a session works (an editor can show the session and the auth message).
    const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: ws.cwd, mcpServers: [] });
    const refused = agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: text("hi") });
    await expect(refused).rejects.toMatchObject({ code: -32000, message: expect.stringMatching(/ANTHROPIC_API_KEY.*is not set/), data: { authMethods: ["env-api-key"] } });
    await expect(agent.request(acp.methods.agent.authenticate, { methodId: "env-api-key" })).rejects.toMatchObject({
      code: -32000,
      message: expect.stringContaining("ANTHROPIC_API_KEY"),
    });
    await expect(agent.request(acp.methods.agent.authenticate, { methodId: "oauth" })).rejects.toMatchObject({ code: -32602 });
  });

  it("with the key set: authenticate succeeds and prompts reach the provider with that key", async () => {
    const mock = await startMockAnthropic({ responses: [{ text: "hello from the provider" }] });
    cleanups.push(() => mock.close());
    const { ws, agent, client } = start(["--model", "anthropic:claude-sonnet-4-5", "--base-url", mock.baseUrl], { ANTHROPIC_API_KEY: "sk-test-key" });
    const init = await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    expect(init.authMethods?.map((m) => m.id)).toEqual(["env-api-key"]);
    await expect(agent.request(acp.methods.agent.authenticate, { methodId: "env-api-key" })).resolves.toEqual({});
    const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: ws.cwd, mcpServers: [] });
    const answer = await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: text("hi") });
    expect(answer.stopReason).toBe("end_turn");
    expect(mock.requests[0]?.headers["x-api-key"]).toBe("sk-test-key");
    const reply = client
      .updates(sessionId)
      .flatMap((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? [u.content.text] : []))
      .join("");
    expect(reply).toBe("hello from the provider");
  });

  it("the demo model never requires auth and advertises no method", async () => {
    const { ws, agent } = start(["--model", "demo"]);
    const init = await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    expect(init.authMethods).toEqual([]);
    const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: ws.cwd, mcpServers: [] });
    await expect(agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: text("hi") })).resolves.toMatchObject({ stopReason: "end_turn" });
    await expect(agent.request(acp.methods.agent.authenticate, { methodId: "env-api-key" })).rejects.toMatchObject({ code: -32602 });
  });

  it("our AcpClient: a configured authMethodId fails start-up with the agent's explanation; prompting without it surfaces -32000", async () => {
    const ws = new Workspace("agentkit-auth-");
    cleanups.push(() => ws.cleanup());
    await expect(startServeClient(ws, ["--model", "openai:gpt-4.1"], { authMethodId: "env-api-key" })).rejects.toMatchObject({
      code: -32000,
      message: expect.stringContaining("OPENAI_API_KEY"),
    });
    const client = await startServeClient(ws, ["--model", "openai:gpt-4.1"]);
    cleanups.push(() => client.close());
    expect(client.initializeResponse.authMethods?.map((m) => m.id)).toEqual(["env-api-key"]);
    await expect(client.authenticate("env-api-key")).rejects.toMatchObject({ code: -32000 });
    const session = await client.newSession();
    await expect(session.prompt("hi")).rejects.toMatchObject({ code: -32000, message: expect.stringContaining("OPENAI_API_KEY") });
  });
});
