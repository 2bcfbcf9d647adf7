import * as acp from "@agentclientprotocol/sdk/unstable";
import { afterEach, describe, expect, it } from "vitest";
import { startMockAnthropic } from "../../../src/testing/index.js";
import { openServe, serveBehindBridge } from "./serve-support.js";
import { Workspace, serveEnv } from "./services-support.js";
import { runCli, type CliRun } from "../../support/cli.js";

// The unstable providers/* methods against serve: provider "main" routes the session model.

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function mock(reply: string) {
  const server = await startMockAnthropic({ responses: [{ text: reply }] });
  cleanups.push(() => server.close());
  return server;
}

/** `agentkit-acp prompt` in-process (the serve it launches is a real process). */
function runPrompt(args: string[], ws: Workspace, env: Record<string, string>): Promise<CliRun> {
  return runCli(["prompt", ...args], { cwd: ws.cwd, env: serveEnv(ws, env) });
}

describe("providers/list, set, disable (serve)", () => {
  it("official SDK client (/unstable): list main, route new sessions to another base URL with headers, refuse what cannot be done", async () => {
    const first = await mock("from first");
    const second = await mock("from second");
    const ws = new Workspace("agentkit-providers-");
    const proc = openServe(["--model", "anthropic:claude-sonnet-4-5", "--base-url", first.baseUrl], { cwd: ws.cwd, env: serveEnv(ws, { ANTHROPIC_API_KEY: "sk-test" }) });
    const connection = acp.client({ name: "sdk-providers" }).connect(proc.stream() as acp.Stream);
    cleanups.push(
      () => ws.cleanup(),
      async () => {
        connection.close();
        await proc.end();
      },
    );
    const agent = connection.agent;
    const init = await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    expect(init.agentCapabilities?.providers).toEqual({});
    expect(await agent.request(acp.methods.agent.providers.list, {})).toEqual({
      providers: [{ providerId: "main", supported: ["anthropic"], required: true, current: { apiType: "anthropic", baseUrl: first.baseUrl } }],
    });
    const one = await agent.request(acp.methods.agent.session.new, { cwd: ws.cwd, mcpServers: [] });
    await agent.request(acp.methods.agent.session.prompt, { sessionId: one.sessionId, prompt: [{ type: "text", text: "hi" }] });
    expect(first.requests).toHaveLength(1);

    await agent.request(acp.methods.agent.providers.set, { providerId: "main", apiType: "anthropic", baseUrl: second.baseUrl, headers: { "x-gateway": "g1" } });
    expect((await agent.request(acp.methods.agent.providers.list, {})).providers[0]?.current).toEqual({ apiType: "anthropic", baseUrl: second.baseUrl });
    const two = await agent.request(acp.methods.agent.session.new, { cwd: ws.cwd, mcpServers: [] });
    await agent.request(acp.methods.agent.session.prompt, { sessionId: two.sessionId, prompt: [{ type: "text", text: "hi" }] });
    expect(first.requests).toHaveLength(1);
    expect(second.requests).toHaveLength(1);
    expect(second.requests[0]?.headers["x-gateway"]).toBe("g1");
    // A route a client set never gets the server's key (the client authenticates through its headers).
    expect(second.requests[0]?.headers["x-api-key"]).not.toBe("sk-test");

    await expect(agent.request(acp.methods.agent.providers.set, { providerId: "main", apiType: "openai", baseUrl: second.baseUrl })).rejects.toMatchObject({ code: -32602 });
    await expect(agent.request(acp.methods.agent.providers.set, { providerId: "main", apiType: "anthropic", baseUrl: "ftp://x" })).rejects.toMatchObject({ code: -32602 });
    await expect(agent.request(acp.methods.agent.providers.set, { providerId: "other", apiType: "anthropic", baseUrl: second.baseUrl })).rejects.toMatchObject({ code: -32602 });
    await expect(agent.request(acp.methods.agent.providers.disable, { providerId: "main" })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("required") });
  });

  it("prompt --provider main=URL routes the turn; bad values are usage errors, an agent without providers an error", async () => {
    const configured = await mock("configured");
    const routed = await mock("routed");
    const ws = new Workspace("agentkit-providers-");
    cleanups.push(() => ws.cleanup());
    const env = { ANTHROPIC_API_KEY: "sk-test" };
    // serve in-process behind the agent process prompt starts (a bridge; a fresh serve per run).
    const agentLine = (await serveBehindBridge(["--model", "anthropic:claude-sonnet-4-5", "--base-url", configured.baseUrl], { cwd: ws.cwd, env: serveEnv(ws, env) })).line;
    const ok = await runPrompt(["--agent", agentLine, "--provider", `main=${routed.baseUrl}`, "hi"], ws, env);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain("routed");
    expect(configured.requests).toHaveLength(0);
    expect(routed.requests).toHaveLength(1);

    const bad = await runPrompt(["--agent", agentLine, "--provider", "main=ftp://x", "hi"], ws, env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("is not an http(s) URL");
    const unknown = await runPrompt(["--agent", agentLine, "--provider", "nope=http://127.0.0.1:9", "hi"], ws, env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no provider "nope" (it has: main)');
    const demoLine = (await serveBehindBridge(["--model", "demo"], { cwd: ws.cwd, env: serveEnv(ws) })).line;
    const demo = await runPrompt(["--agent", demoLine, "--provider", "main=http://127.0.0.1:9", "hi"], ws, {});
    expect(demo.code).toBe(1); // the agent lacks the capability: an error, as for --add-dir
    expect(demo.stderr).toContain("providers");
  });
});
