import { randomUUID } from "node:crypto";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import type { AcpClient, AcpSession } from "../../../src/acp/client/index.js";
import type { ScriptFileStep } from "../../../src/testing/scripted-script.js";
import { mcpFixtureStdioCommand, startMcpFixtureHttpServer, type McpFixtureHttpServer } from "../../../src/testing/index.js";
import { connectServe } from "./serve-support.js";
import { Workspace, eventually, pidAlive, pidsWithEnv, serveEnv, startServeClient } from "./services-support.js";

// MCP servers handed to session/new by our client: stdio, Streamable HTTP and SSE, started per
// session by serve, their tools namespaced and visible to that session only, stopped on close.

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function workspace(): Workspace {
  const ws = new Workspace("agentkit-mcp-");
  cleanups.push(() => ws.cleanup());
  return ws;
}

async function httpFixture(): Promise<McpFixtureHttpServer> {
  const server = await startMcpFixtureHttpServer();
  cleanups.push(() => server.close());
  return server;
}

/** `startServeClient` with a script; `{ process: true }` where the test signals serve. */
async function serve(ws: Workspace, steps: ScriptFileStep[], extraArgs: string[] = [], where: { process?: true } = {}): Promise<AcpClient> {
  const client = await startServeClient(ws, ["--model", `scripted:${ws.script(steps)}`, "--approve", "auto-all", ...extraArgs], where);
  cleanups.push(() => client.close());
  return client;
}

function stdio(name: string, options: Parameters<typeof mcpFixtureStdioCommand>[0] = {}, env: Record<string, string> = {}): acp.McpServer {
  const { command, args } = mcpFixtureStdioCommand(options);
  return { name, command, args, env: Object.entries(env).map(([n, value]) => ({ name: n, value })) };
}

const call = (name: string, input: unknown): ScriptFileStep => ({ toolCall: { name, input } });
const echo: ScriptFileStep = { echo: "last_tool_result" };

interface FixtureStatus {
  pid: number;
  childPids: number[];
}

async function fixtureStatus(session: AcpSession): Promise<FixtureStatus> {
  const result = await session.prompt("status?");
  expect(result.stopReason).toBe("end_turn");
  return JSON.parse(result.text) as FixtureStatus;
}

describe("MCP servers from session/new (serve)", () => {
  it("stdio, http and sse servers: the agent calls their namespaced tools, results reach the model; close ends the processes and the HTTP sessions", async () => {
    const ws = workspace();
    const web = await httpFixture();
    const client = await serve(ws, [
      call("fixture__echo", { text: "hi from stdio" }),
      echo,
      call("web__add", { a: 2, b: 3 }),
      echo,
      call("events__echo", { text: "hi over sse" }),
      echo,
      call("fixture__status", {}),
      echo,
    ]);
    expect(client.agentCapabilities.mcpCapabilities).toEqual({ http: true, sse: true, acp: true });
    const session = await client.newSession({
      mcpServers: [
        stdio("fixture", { spawnChild: true }),
        { type: "http", name: "web", url: web.url, headers: [] },
        { type: "sse", name: "events", url: web.sseUrl, headers: [] },
      ],
    });
    expect(web.sessionCount()).toBe(2);

    const one = await session.prompt("echo over stdio");
    expect(one.toolCalls[0]).toMatchObject({ status: "completed", title: expect.stringContaining("fixture") });
    expect(one.text).toBe("hi from stdio");
    expect((await session.prompt("add over http")).text).toBe("5");
    expect((await session.prompt("echo over sse")).text).toBe("hi over sse");
    const status = await fixtureStatus(session);
    const pids = [status.pid, ...status.childPids];
    expect(status.childPids).toHaveLength(1);
    for (const pid of pids) expect(pidAlive(pid)).toBe(true);

    await session.close();
    // session/close answers after the servers were stopped.
    for (const pid of pids) expect(pidAlive(pid), `pid ${pid}`).toBe(false);
    await eventually(() => web.sessionCount() === 0, "the HTTP and SSE sessions to end");
  });

  it("a session's MCP tools are visible to that session only", async () => {
    const ws = workspace();
    const client = await serve(ws, [call("fixture__echo", { text: "mine" }), echo]);
    const withServer = await client.newSession({ mcpServers: [stdio("fixture")] });
    const without = await client.newSession({ mcpServers: [] });
    expect((await withServer.prompt("go")).text).toBe("mine");
    const other = await without.prompt("go");
    expect(other.toolCalls[0]?.status).toBe("failed");
    expect(other.text).toMatch(/fixture__echo/);
    expect(other.text).not.toBe("mine");
  });

  it("session/load and session/resume start the MCP servers they are given; close and delete stop them again", async () => {
    const ws = workspace();
    const web = await httpFixture();
    const client = await serve(ws, [call("web__echo", { text: "again" }), echo]);
    const servers: acp.McpServer[] = [{ type: "http", name: "web", url: web.url, headers: [] }];
    const first = await client.newSession({ mcpServers: servers });
    expect((await first.prompt("go")).text).toBe("again");
    await first.close();
    await eventually(() => web.sessionCount() === 0, "the first HTTP session to end");
    await expect(client.loadSession(first.sessionId, { mcpServers: [...servers, ...servers] })).rejects.toMatchObject({ code: -32602 });
    for (const how of ["load", "resume"] as const) {
      const session = how === "load" ? await client.loadSession(first.sessionId, { mcpServers: servers }) : await client.resumeSession(first.sessionId, { mcpServers: servers });
      expect(web.sessionCount(), how).toBe(1);
      const result = await session.prompt("go");
      expect(result.toolCalls.at(-1)?.status, how).toBe("completed");
      if (how === "load") await session.close();
      else await client.deleteSession(first.sessionId); // deleting an open session stops its servers too
      await eventually(() => web.sessionCount() === 0, `${how}: the HTTP session to end`);
    }
  });

  it("stdin EOF (the client quits) and SIGTERM end every session's MCP servers", async () => {
    // The two ways run side by side: separate serve processes, workspaces and servers.
    await Promise.all((["eof", "sigterm"] as const).map(async (how) => {
      const ws = workspace();
      const web = await httpFixture();
      const client = await serve(ws, [call("fixture__status", {}), echo], [], { process: true });
      const session = await client.newSession({ mcpServers: [stdio("fixture", { spawnChild: true }), { type: "http", name: "web", url: web.url, headers: [] }] });
      const status = await fixtureStatus(session);
      const pids = [status.pid, ...status.childPids];
      expect(web.sessionCount()).toBe(1);
      if (how === "sigterm") process.kill(client.pid!, "SIGTERM");
      await client.close();
      await eventually(() => pids.every((p) => !pidAlive(p)), `${how}: the MCP processes to end`);
      await eventually(() => web.sessionCount() === 0, `${how}: the HTTP session to end`);
    }));
  });

  it("a hanging and a failing server are skipped within the start-up bound and reported; the session still works and the hung process is ended", async () => {
    const ws = workspace();
    const marker = randomUUID();
    const client = await serve(ws, [call("fixture__echo", { text: "still works" }), echo], ["--mcp-startup-timeout", "6000"]);
    const started = Date.now();
    const opening = client.newSession({
      mcpServers: [stdio("fixture"), stdio("stuck", { hang: true }, { AGENTKIT_TEST_MARKER: marker }), stdio("broken", { fail: true })],
    });
    await eventually(() => pidsWithEnv("AGENTKIT_TEST_MARKER", marker).length > 0, "the hanging server to be running");
    const session = await opening;
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(5900);
    expect(took).toBeLessThan(20_000);
    // Skipped servers are shut down in the background; nothing of the hung one is left.
    await eventually(() => pidsWithEnv("AGENTKIT_TEST_MARKER", marker).length === 0, "the hung MCP server to be ended");

    const result = await session.prompt("go");
    expect(result.stopReason).toBe("end_turn");
    // Without session.notices the warnings open the first turn's message text.
    expect(result.text).toMatch(/^\[agentkit-acp warning\] MCP server "(stuck|broken)"/);
    expect(result.text).toMatch(/"stuck" was not started.*did not start within 6000 ms/);
    expect(result.text).toMatch(/"broken" was not started.*fixture failed on purpose/);
    expect(result.text.endsWith("still works")).toBe(true);
    expect((await session.prompt("again")).text).toBe("still works"); // reported once
  });

  it("a client that advertises session.notices gets a warning notice after session/new", async () => {
    const ws = workspace();
    const { proc, client, connection, agent } = connectServe(["--model", `scripted:${ws.script([{ text: "hello" }])}`, "--mcp-startup-timeout", "5000"], {
      cwd: ws.cwd,
      env: serveEnv(ws),
    });
    cleanups.push(async () => {
      connection.close();
      await proc.end();
    });
    await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: { session: { notices: {} } } });
    const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: ws.cwd, mcpServers: [stdio("broken", { fail: true })] });
    await client.waitFor(() => client.updates(sessionId).some((u) => u.sessionUpdate === "notice"), "a notice");
    const notice = client.updates(sessionId).find((u) => u.sessionUpdate === "notice");
    expect(notice).toMatchObject({ severity: "warning", title: 'MCP server "broken" was not started, so its tools are unavailable in this session' });
    expect((notice as { description: string }).description).toMatch(/fixture failed on purpose/);
    // The notice followed the session/new answer on the wire.
    const lines = proc.stdoutLines() as Array<{ id?: unknown; result?: { sessionId?: string }; params?: { update?: { sessionUpdate?: string } } }>;
    const answer = lines.findIndex((l) => l.result?.sessionId === sessionId);
    const noticeLine = lines.findIndex((l) => l.params?.update?.sessionUpdate === "notice");
    expect(answer).toBeGreaterThanOrEqual(0);
    expect(noticeLine).toBeGreaterThan(answer);
    await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hi" }] });
    expect(client.updates(sessionId).filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => (u as { content: { text: string } }).content.text).join("")).toBe("hello");
  });

  it("duplicate names and invalid entries are refused with -32602 before anything starts", async () => {
    const ws = workspace();
    const marker = randomUUID();
    const { proc, connection, agent } = connectServe(["--model", `scripted:${ws.script([{ text: "x" }])}`], { cwd: ws.cwd, env: serveEnv(ws) });
    cleanups.push(async () => {
      connection.close();
      await proc.end();
    });
    await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const marked = stdio("fixture", {}, { AGENTKIT_TEST_MARKER: marker });
    const bad: Array<[string, unknown[]]> = [
      ["duplicate name", [marked, stdio("fixture")]],
      ["shared tool prefix", [stdio("my tools"), stdio("my_tools")]],
      ["empty name", [{ ...stdio("x"), name: " " }]],
      ["empty command", [{ name: "x", command: "", args: [], env: [] }]],
      ["bad url", [{ type: "http", name: "web", url: "ftp://127.0.0.1/mcp", headers: [] }]],
      ["relative url", [{ type: "sse", name: "web", url: "/sse", headers: [] }]],
    ];
    for (const [what, mcpServers] of bad) {
      await expect(agent.request(acp.methods.agent.session.new, { cwd: ws.cwd, mcpServers: mcpServers as acp.McpServer[] }), what).rejects.toMatchObject({ code: -32602 });
    }
    expect(pidsWithEnv("AGENTKIT_TEST_MARKER", marker)).toEqual([]);
    // The connection still works.
    await expect(agent.request(acp.methods.agent.session.new, { cwd: ws.cwd, mcpServers: [] })).resolves.toMatchObject({ sessionId: expect.any(String) });
  });
});
