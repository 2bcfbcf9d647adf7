import { McpServer } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod/v4";
import { AcpClient, CapabilityError, type AcpInProcessMcpServer, type ClientLifecycleEvent } from "../../../src/acp/client/index.js";
import type { ScriptFileStep } from "../../../src/testing/scripted-script.js";
import { Workspace, startServeClient } from "../agent/services-support.js";
import { fixtureConfig, repoRoot } from "./helpers.js";
import { agentFixture } from "../../support/fixture-agents.js";

const mcpAcpFixture = agentFixture("mcp-acp-agent.mjs");

// MCP over ACP (unstable `mcp/message`): MCP servers built with the official MCP SDK, living in
// the client's process, handed to `agentkit-acp serve` in session/new as `acp` servers; serve's
// model calls their tools like any other MCP server's.

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const call = (name: string, input: unknown): ScriptFileStep => ({ toolCall: { name, input } });
const echo: ScriptFileStep = { echo: "last_tool_result" };

async function serve(steps: ScriptFileStep[], extraArgs: string[] = []): Promise<AcpClient> {
  const ws = new Workspace("agentkit-mcp-acp-");
  cleanups.push(() => ws.cleanup());
  const client = await startServeClient(ws, ["--model", `scripted:${ws.script(steps)}`, "--approve", "auto-all", ...extraArgs]);
  cleanups.push(() => client.close());
  return client;
}

/** A calculator served in-process; `calls` records what reached it, `hang` a tool that answers only when cancelled. */
function calculator(): { server: AcpInProcessMcpServer; calls: unknown[]; hanging: Promise<void>; aborted: Promise<string> } {
  const calls: unknown[] = [];
  let onAbort!: (reason: string) => void;
  const aborted = new Promise<string>((resolve) => (onAbort = resolve));
  let onHang!: () => void;
  const hanging = new Promise<void>((resolve) => (onHang = resolve));
  const build = (): McpServer => {
    const server = new McpServer({ name: "calc", version: "1.0.0" });
    server.registerTool("add", { description: "Adds two numbers", inputSchema: z.object({ a: z.number(), b: z.number() }) }, ({ a, b }) => {
      calls.push({ a, b });
      return { content: [{ type: "text", text: `sum=${a + b}` }] };
    });
    // Reports progress each second, longer than --mcp-call-timeout in total: progress resets the bound.
    server.registerTool("slow", { description: "Slow, with progress", inputSchema: z.object({ steps: z.number() }) }, async ({ steps }, ctx) => {
      const progressToken = ctx.mcpReq._meta?.progressToken;
      for (let i = 1; i <= steps; i++) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        if (progressToken !== undefined) await ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken, progress: i, total: steps, message: `step ${i}` } });
      }
      return { content: [{ type: "text", text: `done after ${steps} steps` }] };
    });
    server.registerTool("hang", { description: "Never answers", inputSchema: z.object({}) }, (_args, ctx) => {
      calls.push("hang");
      onHang();
      return new Promise((_, reject) => {
        ctx.mcpReq.signal.addEventListener("abort", () => {
          onAbort(String(ctx.mcpReq.signal.reason));
          reject(new Error("cancelled"));
        });
      });
    });
    return server;
  };
  return { server: { name: "calc", server: build }, calls, hanging, aborted };
}

describe("MCP over ACP: our client's in-process MCP server ↔ agentkit-acp serve", () => {
  it("serve advertises mcpCapabilities.acp; the model calls calc__add, the call reaches the in-process McpServer and its result returns to the model", async () => {
    const client = await serve([call("calc__add", { a: 2, b: 3 }), echo, call("calc__add", { a: 10, b: -4 }), echo]);
    expect(client.agentCapabilities.mcpCapabilities).toEqual({ http: true, sse: true, acp: true });
    const calc = calculator();
    const session = await client.newSession({ mcpServers: [calc.server] });
    const first = await session.prompt("add 2 and 3");
    expect(first.stopReason).toBe("end_turn");
    expect(first.toolCalls[0]).toMatchObject({ status: "completed", title: expect.stringContaining("calc") });
    // The scripted model echoes the tool result it was sent: the in-process server's answer.
    expect(first.text).toBe("sum=5");
    const second = await session.prompt("again");
    expect(second.text).toBe("sum=6");
    expect(calc.calls).toEqual([
      { a: 2, b: 3 },
      { a: 10, b: -4 },
    ]);
  });

  it("a request the client never answers ends as a tool error at --mcp-call-timeout (cancelled with $/cancel_request); the turn goes on", async () => {
    const client = await serve([call("calc__hang", {}), echo], ["--mcp-call-timeout", "1500"]);
    const calc = calculator();
    const session = await client.newSession({ mcpServers: [calc.server] });
    const result = await session.prompt("hang");
    expect(result.stopReason).toBe("end_turn");
    expect(result.toolCalls[0]).toMatchObject({ status: "failed" });
    expect(result.text).toMatch(/MCP server calc failed to run hang: the ACP client did not answer MCP tools\/call within 1500 ms/);
    // The agent withdrew the request: the in-process handler saw its cancellation.
    await expect(calc.aborted).resolves.toBeDefined();
  });

  it("progress notifications travel back over mcp/message: they reset --mcp-call-timeout and reach the editor as tool call updates", async () => {
    // 4 × 1 s in total, beyond the 3 s bound (2 s of slack per step for a busy machine); each progress note resets it.
    const client = await serve([call("calc__slow", { steps: 4 }), echo], ["--mcp-call-timeout", "3000"]);
    const calc = calculator();
    const session = await client.newSession({ mcpServers: [calc.server] });
    const updates: string[] = [];
    const unsubscribe = session.onEvent((event) => {
      if (event.type === "tool_call_update") updates.push(JSON.stringify(event));
    });
    const result = await session.prompt("slow");
    unsubscribe();
    expect(result.text).toBe("done after 4 steps");
    expect(updates.some((u) => u.includes("step 3"))).toBe(true);
  });

  it("cancelling the turn cancels the MCP request in flight", async () => {
    const client = await serve([call("calc__hang", {}), echo]);
    const calc = calculator();
    const session = await client.newSession({ mcpServers: [calc.server] });
    const stream = session.stream("hang until cancelled");
    await calc.hanging;
    await session.cancel();
    const done = await stream.result;
    expect(done.stopReason).toBe("cancelled");
    await expect(calc.aborted).resolves.toBeDefined();
  });

  it("after the agent crashes, recovery re-registers the in-process server under the same serverId: the resumed session still reaches it", async () => {
    const ws = new Workspace("agentkit-mcp-acp-recover-");
    cleanups.push(() => ws.cleanup());
    const steps = [call("calc__add", { a: 1, b: 2 }), echo];
    const recovering = await startServeClient(ws, ["--model", `scripted:${ws.script(steps)}`, "--approve", "auto-all"], { process: true, recovery: { enabled: true, maxRestarts: 1 } });
    cleanups.push(() => recovering.close());
    const recovered = new Promise<ClientLifecycleEvent>((resolve) => recovering.onLifecycle((event) => event.type !== "agent_exited" && resolve(event)));
    const calc = calculator();
    const session = await recovering.newSession({ mcpServers: [calc.server] });
    expect((await session.prompt("add")).text).toBe("sum=3");
    process.kill(-recovering.pid!, "SIGKILL");
    expect(await recovered).toMatchObject({ type: "recovered", sessions: [session.sessionId] });
    expect((await session.prompt("add again")).text).toBe("sum=3");
    expect(calc.calls).toEqual([
      { a: 1, b: 2 },
      { a: 1, b: 2 },
    ]);
  });

  it("an agent that does not advertise mcpCapabilities.acp: a CapabilityError before anything is sent; a server instance instead of a factory: a ConfigError", async () => {
    const client = await AcpClient.start(fixtureConfig());
    cleanups.push(() => client.close());
    const calc = calculator();
    await expect(client.newSession({ mcpServers: [calc.server] })).rejects.toThrow(CapabilityError);
    await expect(client.newSession({ mcpServers: [calc.server] })).rejects.toThrow(/mcpCapabilities\.acp/);

    const served = await serve([echo]);
    const instance = new McpServer({ name: "x", version: "1" });
    await expect(served.newSession({ mcpServers: [{ name: "x", server: instance as never }] })).rejects.toThrow(/must be a function returning a fresh McpServer/);
  });
});

describe("MCP over ACP: our client ↔ an agent on the official SDK's McpOverAcpCaller", () => {
  it("two in-process servers in one session: the agent lists and calls their tools over mcp/message", async () => {
    const client = await AcpClient.start({ command: process.execPath, args: [mcpAcpFixture], cwd: repoRoot.replace(/\/$/, ""), stderr: "ignore" });
    cleanups.push(() => client.close());
    const calc = calculator();
    const greeter: AcpInProcessMcpServer = {
      name: "greeter",
      server: () => {
        const server = new McpServer({ name: "greeter", version: "1.0.0" });
        server.registerTool("greet", { inputSchema: z.object({ a: z.number() }) }, ({ a }) => ({ content: [{ type: "text", text: `hello #${a}` }] }));
        return server;
      },
    };
    const session = await client.newSession({ mcpServers: [calc.server, greeter] });
    expect((await session.prompt("which tools?")).text).toBe("calc: add,slow,hang\ngreeter: greet");
    expect((await session.prompt('tool:{"a":4,"b":5}')).text).toBe("sum=9\nhello #4");
    expect(calc.calls).toEqual([{ a: 4, b: 5 }]);
    // The same server object in a second session: the same registration (one serverId per server and connection).
    const again = await client.newSession({ mcpServers: [calc.server] });
    expect((await again.prompt('tool:{"a":1,"b":1}')).text).toBe("sum=2");
  });
});
