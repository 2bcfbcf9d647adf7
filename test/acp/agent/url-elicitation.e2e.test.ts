import { realpathSync } from "node:fs";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { afterEach, describe, expect, it } from "vitest";
import { AcpClient, type AcpUrlElicitation } from "../../../src/acp/client/index.js";
import { startMockAnthropic } from "../../../src/testing/index.js";
import { openServe, serveBehindBridge } from "./serve-support.js";
import { typeKey } from "./key-page-support.js";
import { Workspace, serveEnv } from "./services-support.js";
import { tempDir } from "./support.js";
import { agentFixture } from "../../support/fixture-agents.js";

// URL-mode elicitation of a missing model key: serve opens a one-shot page on 127.0.0.1, the
// client shows its URL, the human (here: fetch) pastes the key there, serve stores it (memory),
// sends elicitation/complete and runs the prompt with it; logout forgets it.

const unstableFixture = agentFixture("unstable-agent.mjs");
const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const text = (t: string): acp.ContentBlock[] => [{ type: "text", text: t }];

async function setup(replies: number) {
  const mock = await startMockAnthropic({ responses: Array.from({ length: replies }, (_, i) => ({ text: `reply ${i + 1}` })) });
  const ws = new Workspace("agentkit-urlelicit-");
  cleanups.push(() => mock.close(), () => ws.cleanup());
  const serveArgs = ["--model", "anthropic:claude-sonnet-4-5", "--base-url", mock.baseUrl];
  return { mock, ws, serveArgs };
}

describe("URL elicitation of a missing model key (serve ↔ clients)", () => {
  it("official SDK client: elicitation/create (url, session-scoped) → the human pastes the key on the page → complete → the prompt runs with it; logout forgets it", async () => {
    const { mock, ws, serveArgs } = await setup(1);
    const proc = openServe(serveArgs, { cwd: ws.cwd, env: serveEnv(ws) });
    const requests: acp.CreateElicitationRequest[] = [];
    const completes: string[] = [];
    let completeSeen: () => void = () => undefined;
    const completed = new Promise<void>((resolve) => (completeSeen = resolve));
    const statuses: string[] = [];
    let statusChanged: () => void = () => undefined;
    const statusCount = (n: number): Promise<void> => new Promise((resolve) => (statusChanged = () => statuses.length >= n && resolve()));
    let answer: (params: acp.CreateElicitationRequest) => acp.CreateElicitationResponse = () => ({ action: "accept" });
    let human: Promise<unknown> = Promise.resolve();
    const connection = acp
      .client({ name: "sdk-url-elicit" })
      .onRequest(acp.methods.client.elicitation.create, ({ params }) => {
        requests.push(params);
        const reply = answer(params);
        if (reply.action === "accept") human = typeKey((params as { url: string }).url, "sk-typed-on-page");
        return reply;
      })
      .onNotification(acp.methods.client.elicitation.complete, ({ params }) => {
        completes.push(params.elicitationId);
        completeSeen();
      })
      .onNotification(acp.methods.client.auth.statusUpdate, ({ params }) => {
        statuses.push(params.state);
        statusChanged();
      })
      .connect(proc.stream() as acp.Stream);
    cleanups.push(async () => {
      connection.close();
      await proc.end();
    });
    const agent = connection.agent;
    const init = await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: { elicitation: { url: {} } } });
    expect(init.authMethods?.map((m) => m.id)).toEqual(["env-api-key"]);
    const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: ws.cwd, mcpServers: [] });

    const signedIn = statusCount(1);
    expect((await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: text("one") })).stopReason).toBe("end_turn");
    await signedIn;
    const { page, saved } = (await human) as { page: string; saved: string };
    expect(requests).toHaveLength(1);
    const request = requests[0] as acp.CreateElicitationRequest & { url: string; elicitationId: string };
    expect(request).toMatchObject({ mode: "url", sessionId, message: expect.stringContaining("ANTHROPIC_API_KEY for anthropic:claude-sonnet-4-5") });
    expect(request.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/key\/[\w-]{32}$/);
    expect(page).toContain('type="password"');
    expect(saved).toContain("You can close this tab");
    await completed;
    expect(completes).toEqual([request.elicitationId]);
    expect(statuses).toEqual(["authenticated"]);
    // The key reached the model API, and nowhere else: not in the client's messages, not on stdout.
    expect(mock.requests[0]!.headers["x-api-key"]).toBe("sk-typed-on-page");
    expect(proc.stdout).not.toContain("sk-typed-on-page");
    // One-shot: the page is gone.
    await expect(fetch(request.url)).rejects.toThrow();

    // logout forgets the key: the next prompt asks again; this time the human declines.
    const loggedOut = statusCount(2);
    await agent.request(acp.methods.agent.logout, {});
    await loggedOut;
    expect(statuses).toEqual(["authenticated", "unauthenticated"]);
    answer = () => ({ action: "decline", _meta: { reason: "not now" } });
    await expect(agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: text("two") })).rejects.toMatchObject({
      code: -32000,
      message: expect.stringContaining("the key page was declined: not now"),
    });
    expect(requests).toHaveLength(2);
    expect(mock.requests).toHaveLength(1);
    expect(proc.stdoutLines().every((m) => (m as { jsonrpc?: string }).jsonrpc === "2.0")).toBe(true);
  });

  it("without elicitation.url (or with --key-page-timeout 0) a blocked prompt answers -32000 at once; a client error on the request → -32000 saying so", async () => {
    const { ws, serveArgs } = await setup(0);
    for (const [args, caps] of [
      [serveArgs, {}],
      [[...serveArgs, "--key-page-timeout", "0"], { elicitation: { url: {} } }],
    ] as const) {
      const proc = openServe([...args], { cwd: ws.cwd, env: serveEnv(ws) });
      // A client that would answer: the refusal must come from serve not asking, not from this answer.
      let asked = 0;
      const connection = acp
        .client({ name: "sdk-no-url" })
        .onRequest(acp.methods.client.elicitation.create, () => {
          asked += 1;
          return { action: "decline" as const };
        })
        .connect(proc.stream() as acp.Stream);
      cleanups.push(async () => {
        connection.close();
        await proc.end();
      });
      await connection.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: caps });
      const { sessionId } = await connection.agent.request(acp.methods.agent.session.new, { cwd: ws.cwd, mcpServers: [] });
      await expect(connection.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: text("x") })).rejects.toMatchObject({ code: -32000 });
      expect(asked).toBe(0);
    }
    // A client that advertises elicitation.url but answers the request with an error: -32000 saying so.
    const proc = openServe([...serveArgs], { cwd: ws.cwd, env: serveEnv(ws) });
    const connection = acp
      .client({ name: "sdk-url-error" })
      .onRequest(acp.methods.client.elicitation.create, () => {
        throw acp.RequestError.invalidParams({}, "no browser here");
      })
      .connect(proc.stream() as acp.Stream);
    cleanups.push(async () => {
      connection.close();
      await proc.end();
    });
    await connection.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: { elicitation: { url: {} } } });
    const { sessionId } = await connection.agent.request(acp.methods.agent.session.new, { cwd: ws.cwd, mcpServers: [] });
    await expect(connection.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: text("x") })).rejects.toMatchObject({
      code: -32000,
      message: expect.stringContaining("(asking for the key through the client failed: Invalid params: no browser here)"),
    });
  });

  it("our AcpClient's urlElicitation callback: completed resolves; session cancel while waiting on the page → cancelled, page closed", async () => {
    const { mock, ws, serveArgs } = await setup(1);
    const seen: AcpUrlElicitation[] = [];
    let submit = true;
    let asked: () => void = () => undefined;
    const agent = await serveBehindBridge(serveArgs, { cwd: ws.cwd, env: serveEnv(ws) }); // serve in-process behind a bridge process
    const client = await AcpClient.start({
      command: agent.command,
      args: agent.args,
      cwd: ws.cwd,
      env: serveEnv(ws),
      inheritEnv: false,
      stderr: "ignore",
      urlElicitation: async (elicitation) => {
        seen.push(elicitation);
        asked();
        if (submit) void typeKey(elicitation.request.url, "sk-from-callback");
        return { action: "accept" };
      },
    });
    cleanups.push(() => client.close());

    // First: the human does not come back; cancelling the turn ends the wait and closes the page.
    submit = false;
    const session = await client.newSession();
    const shown = new Promise<void>((resolve) => (asked = resolve));
    const pending = session.prompt("wait");
    await shown;
    await session.cancel();
    expect((await pending).stopReason).toBe("cancelled");
    // The page was closed before the prompt answered.
    await expect(fetch(seen[0]!.request.url)).rejects.toThrow();

    submit = true;
    const result = await session.prompt("now");
    expect(result.text).toBe("reply 1");
    await seen[1]!.completed;
    expect(seen[1]!.request.elicitationId).not.toBe(seen[0]!.request.elicitationId);
    expect(mock.requests[0]!.headers["x-api-key"]).toBe("sk-from-callback");
  });

  it("our AcpClient against an official-SDK agent: url callback with completion (unknown ids ignored), non-web URLs refused with -32602, capabilities advertised exactly", async () => {
    const start = (config: Partial<Parameters<typeof AcpClient.start>[0]>) =>
      AcpClient.start({ command: process.execPath, args: [unstableFixture], cwd: realpathSync(tempDir().path), stderr: "ignore", ...config });
    let completed: Promise<void> | undefined;
    const client = await start({
      urlElicitation: async (e) => {
        completed = e.completed;
        return { action: "accept" };
      },
    });
    cleanups.push(() => client.close());
    const session = await client.newSession();
    expect((await session.prompt("caps")).text).toBe('answer: {"url":{}}');
    expect((await session.prompt("url")).text).toBe('answer: {"action":"accept"}');
    await completed;
    expect((await session.prompt("badurl")).text).toMatch(/^answer: \{"code":-32602,"message":".*http:\/\/ or https:\/\//);
    // Form mode is not offered by this client: the agent's form request is refused, not answered.
    await expect(session.prompt("ask")).rejects.toThrow();

    const both = await start({ urlElicitation: async () => ({ action: "decline" }), elicitation: async () => ({ action: "cancel" }) });
    cleanups.push(() => both.close());
    expect((await (await both.newSession()).prompt("caps")).text).toBe('answer: {"form":{},"url":{}}');
    const none = await start({});
    cleanups.push(() => none.close());
    expect((await (await none.newSession()).prompt("caps")).text).toBe("answer: null");
  });
});
