import * as acp from "@agentclientprotocol/sdk/unstable";
import { afterEach, describe, expect, it } from "vitest";
import { startMockAnthropic } from "../../../src/testing/index.js";
import { openServe } from "./serve-support.js";
import { Workspace, serveEnv } from "./services-support.js";

// logout and the unstable auth/status + auth/status_update, against serve's env-api-key method.

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const text = (t: string): acp.ContentBlock[] => [{ type: "text", text: t }];

async function mockProvider(replies: number) {
  const mock = await startMockAnthropic({ responses: Array.from({ length: replies }, (_, i) => ({ text: `reply ${i + 1}` })) });
  cleanups.push(() => mock.close());
  return mock;
}

describe("logout, auth/status and auth/status_update (serve)", () => {
  it("official SDK client (/unstable): status authenticated → logout → update + prompts -32000 → authenticate → update + prompts work", async () => {
    const mock = await mockProvider(2);
    const ws = new Workspace("agentkit-authstatus-");
    const proc = openServe(["--model", "anthropic:claude-sonnet-4-5", "--base-url", mock.baseUrl], { cwd: ws.cwd, env: serveEnv(ws, { ANTHROPIC_API_KEY: "sk-test" }) });
    const updates: acp.AuthStatusUpdateNotification[] = [];
    let changed: () => void = () => undefined;
    const connection = acp
      .client({ name: "sdk-auth-client" })
      .onNotification(acp.methods.client.auth.statusUpdate, ({ params }) => {
        updates.push(params);
        changed();
      })
      .connect(proc.stream() as acp.Stream);
    cleanups.push(
      () => ws.cleanup(),
      async () => {
        connection.close();
        await proc.end();
      },
    );
    const nextUpdate = (count: number): Promise<void> => new Promise((resolve) => (changed = () => updates.length >= count && resolve()));
    const agent = connection.agent;
    const init = await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    expect(init.agentCapabilities?.auth).toEqual({ logout: {}, status: {} });
    expect(await agent.request(acp.methods.agent.auth.status, {})).toEqual({ state: "authenticated", accounts: [{ label: "ANTHROPIC_API_KEY (anthropic:claude-sonnet-4-5)", active: true }] });
    const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: ws.cwd, mcpServers: [] });
    expect((await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: text("one") })).stopReason).toBe("end_turn");

    const loggedOut = nextUpdate(1);
    await agent.request(acp.methods.agent.logout, {});
    await loggedOut;
    expect(updates[0]).toMatchObject({ state: "unauthenticated" });
    expect((await agent.request(acp.methods.agent.auth.status, {})).state).toBe("unauthenticated");
    await expect(agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: text("two") })).rejects.toMatchObject({ code: -32000, message: expect.stringContaining("logged out") });
    expect(mock.requests).toHaveLength(1);
    // A second logout changes nothing: no second update.
    await agent.request(acp.methods.agent.logout, {});

    const back = nextUpdate(2);
    await agent.request(acp.methods.agent.authenticate, { methodId: "env-api-key" });
    await back;
    expect(updates.map((u) => u.state)).toEqual(["unauthenticated", "authenticated"]);
    expect((await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: text("three") })).stopReason).toBe("end_turn");
    expect(mock.requests).toHaveLength(2);
  });

  it("the demo model: auth/status not_required, logout not advertised (-32601)", async () => {
    const ws = new Workspace("agentkit-authstatus-");
    const proc = openServe(["--model", "demo"], { cwd: ws.cwd, env: serveEnv(ws) });
    const connection = acp.client({ name: "sdk-auth-client" }).connect(proc.stream() as acp.Stream);
    cleanups.push(
      () => ws.cleanup(),
      async () => {
        connection.close();
        await proc.end();
      },
    );
    const init = await connection.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    expect(init.agentCapabilities?.auth).toEqual({ status: {} });
    expect(await connection.agent.request(acp.methods.agent.auth.status, {})).toEqual({ state: "not_required" });
    await expect(connection.agent.request(acp.methods.agent.logout, {})).rejects.toMatchObject({ code: -32601 });
  });
  // Our AcpClient's side (authStatus, logout, onAuthStatus, the -32000 gate): test/acp/client/protocols.e2e.test.ts, over v1 and v2.
});
