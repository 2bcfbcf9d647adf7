import { realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { McpServer } from "@modelcontextprotocol/server";
import * as z from "zod/v4";
import { ClientPermissionPolicy, type AcpAgentConfig, type AcpClient, type AcpSession } from "../../../src/acp/client/index.js";
import { startMockAnthropic } from "../../../src/testing/index.js";
import { gone, hanging, serveBehindBridge, startedPid, type BridgedServe } from "../agent/serve-support.js";
import { runCli as runCliInProcess, type CliRun } from "../../support/cli.js";
import { expectSignOutAndIn, repoRoot, startAgent, tempDir } from "./helpers.js";

// v1/v2 parity: one suite, run once per protocol. Our AcpClient speaks v1; with `protocol: "v2"`
// it goes through the client's v2 bridge to `serve --protocol v2`, which serves it through the
// agent's v2 bridge (the method table, src/acp/methods.ts, derives both): every behaviour below
// must be the same whichever protocol carries it.


/** The session's title, waiting for the agent's session_info_update when none has arrived yet. */
function titleOf(session: AcpSession): Promise<string> {
  if (session.title !== undefined) return Promise.resolve(session.title);
  return new Promise((resolve) => {
    const off = session.onEvent((event) => {
      if (event.type !== "session_info" || typeof event.title !== "string") return;
      off();
      resolve(event.title);
    });
  });
}

/** A model script in a new workspace that answers with the transcript it was sent (a fork's history shows in its answer). */
function echoWorkspace(): { dir: string; script: string } {
  const dir = realpathSync(tempDir());
  const script = join(dir, "echo.json");
  writeFileSync(script, JSON.stringify({ steps: [{ echo: "transcript" }], onExhausted: "repeat-last" }));
  return { dir, script };
}

describe.each(["v1", "v2"] as const)("AcpClient ↔ agentkit-acp serve over ACP %s", (protocol) => {
  /**
   * `serve` with `args`, speaking `protocol`, run in-process behind a bridge process (what serve
   * says over ACP is the point; each agent process the client starts gets a fresh serve).
   */
  const serve = (args: string[], env: Record<string, string> = {}): Promise<BridgedServe> =>
    serveBehindBridge([...args, ...(protocol === "v2" ? ["--protocol", "v2"] : [])], { cwd: repoRoot, env: { ...process.env, ...env } });
  const start = async (config: Omit<AcpAgentConfig, "protocol">, policy = ClientPermissionPolicy.allowAll()): Promise<AcpClient> => {
    const client = await startAgent({ ...config, protocol, stderr: "ignore" }, policy);
    expect(client.protocolVersion).toBe(protocol === "v2" ? 2 : 1);
    return client;
  };

  it("fork, titles (derived and set), status, archive / unarchive with the list filter; a cancelled newSession leaves nothing", async () => {
    const { dir, script } = echoWorkspace();
    const agent = await serve(["--model", `scripted:${script}`, "--state-dir", join(dir, ".state")]);
    const client = await start({ command: agent.command, args: agent.args, cwd: dir });
    expect(client.agentCapabilities.sessionCapabilities).toMatchObject({ fork: {}, title: {}, status: {}, archive: {} });
    const session = await client.newSession();
    await session.prompt("first question");
    expect(session.title).toBe("first question");
    expect((await session.status()).status).toBe("open");

    const fork = await session.fork();
    expect(fork.sessionId).not.toBe(session.sessionId);
    // The agent reports a restored session's title (session_info_update) just after its answer.
    expect(await titleOf(fork)).toBe("Fork of first question");
    const answer = await fork.prompt("in the fork");
    expect(answer.text).toContain("first question");
    expect(answer.text).toContain("in the fork");
    expect((await session.prompt("original again")).text).not.toContain("in the fork");

    expect(await fork.setTitle("  Forked   work ")).toBe("Forked work");
    expect(fork.title).toBe("Forked work");
    const titles = async (archived?: "include" | "only"): Promise<string[]> =>
      (await client.listSessions(archived ? { archived } : {})).sessions.map((s) => `${s.title ?? ""}${s.archived ? "*" : ""}`).sort();
    expect(await titles()).toEqual(["Forked work", "first question"]);
    await client.archiveSession(fork.sessionId);
    expect(client.sessions.map((s) => s.sessionId)).toEqual([session.sessionId]);
    expect(await titles()).toEqual(["first question"]);
    expect(await titles("only")).toEqual(["Forked work*"]);
    expect(await titles("include")).toEqual(["Forked work*", "first question"]);
    expect((await client.sessionStatus(fork.sessionId)).status).toBe("saved");
    await client.unarchiveSession(fork.sessionId);
    expect(await titles()).toEqual(["Forked work", "first question"]);

    // Aborting newSession's signal sends $/cancel_request for session/new (through both bridges on v2).
    const slow = hanging(dir, `client-${protocol}`);
    const abort = new AbortController();
    const opening = client.newSession({ mcpServers: [slow.server], signal: abort.signal }).then(
      () => "opened",
      (e: unknown) => e,
    );
    const pid = await startedPid(slow.pidFile);
    abort.abort();
    expect(await opening).toMatchObject({ name: "AbortError" });
    expect(await gone(pid)).toBe(true);
    expect(await titles("include")).toEqual(["Forked work", "first question"]);
    expect(client.sessions.map((s) => s.sessionId)).toEqual([session.sessionId]);
  });

  it("a keyed provider: providers list / set / disable, auth status, logout and login with status updates", async () => {
    const dir = realpathSync(tempDir());
    const first = await startMockAnthropic({ responses: [{ text: "from first" }] });
    const second = await startMockAnthropic({ responses: [{ text: "from second" }] });
    try {
      const agent = await serve(["--model", "anthropic:claude-sonnet-4-5", "--base-url", first.baseUrl, "--state-dir", join(dir, ".state")], { ANTHROPIC_API_KEY: "sk-test" });
      const client = await start({ command: agent.command, args: agent.args, cwd: dir });
      expect((await client.listProviders()).map((p) => [p.providerId, p.current?.baseUrl])).toEqual([["main", first.baseUrl]]);
      await client.setProvider("main", { apiType: "anthropic", baseUrl: second.baseUrl });
      expect((await client.listProviders())[0]?.current?.baseUrl).toBe(second.baseUrl);
      const session = await client.newSession();
      expect((await session.prompt("hi")).text).toBe("from second");
      expect(first.requests).toHaveLength(0);
      await expect(client.disableProvider("main")).rejects.toMatchObject({ code: -32602 });

      expect(await client.authStatus()).toMatchObject({ state: "authenticated" });
      await expectSignOutAndIn(client, session, "env-api-key");
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it("the elicitation callback answers the ask_user form", async () => {
    const dir = realpathSync(tempDir());
    const script = join(dir, "ask.json");
    writeFileSync(script, JSON.stringify({ steps: [{ toolCall: { name: "ask_user", callId: "ask1", input: { question: "How many?", fields: [{ name: "count", type: "integer" }] } } }, { text: "thanks" }] }));
    const seen: unknown[] = [];
    const agent = await serve(["--model", `scripted:${script}`, "--no-persist"]);
    const client = await start({
      command: agent.command,
      args: agent.args,
      cwd: dir,
      elicitation: (request) => {
        seen.push(request);
        return Promise.resolve({ action: "accept", content: { count: 7 } });
      },
    });
    const session = await client.newSession();
    const result = await session.prompt("ask me");
    expect(result.stopReason).toBe("end_turn");
    expect(seen).toEqual([expect.objectContaining({ mode: "form", message: "How many?", sessionId: session.sessionId, toolCallId: "ask1" })]);
    expect(result.toolCalls[0]).toMatchObject({ toolCallId: "ask1", status: "completed" });
    expect(JSON.stringify(result.toolCalls[0])).toContain('The user answered: {\\"count\\":7}');
    expect(result.text).toBe("thanks");
  });

  it("MCP over ACP: an in-process MCP server's tool is called by serve's model through mcp/message", async () => {
    const dir = realpathSync(tempDir());
    const script = join(dir, "mcp.json");
    writeFileSync(script, JSON.stringify({ steps: [{ toolCall: { name: "calc__add", input: { a: 2, b: 3 } } }, { echo: "last_tool_result" }] }));
    const agent = await serve(["--model", `scripted:${script}`, "--no-persist", "--approve", "auto-all"]);
    const client = await start({ command: agent.command, args: agent.args, cwd: dir });
    expect(client.agentCapabilities.mcpCapabilities).toMatchObject({ acp: true });
    const calls: unknown[] = [];
    const build = (): McpServer => {
      const server = new McpServer({ name: "calc", version: "1.0.0" });
      server.registerTool("add", { description: "Adds two numbers", inputSchema: z.object({ a: z.number(), b: z.number() }) }, ({ a, b }) => {
        calls.push({ a, b });
        return { content: [{ type: "text", text: `sum=${a + b}` }] };
      });
      return server;
    };
    const session = await client.newSession({ mcpServers: [{ name: "calc", server: build }] });
    const result = await session.prompt("add 2 and 3");
    expect(result.stopReason).toBe("end_turn");
    expect(result.toolCalls[0]).toMatchObject({ status: "completed" });
    expect(result.text).toBe("sum=5");
    expect(calls).toEqual([{ a: 2, b: 3 }]);
  });

  it("agentkit-acp prompt: --fork, --list with titles, --archive / --unarchive, --list --archived only", async () => {
    const { dir, script } = echoWorkspace();
    const agent = await serve(["--model", `scripted:${script}`, "--state-dir", join(dir, ".state")]);
    /** The CLI in-process; its agent is a process (the bridge), a fresh serve for each run. */
    const cli = (...args: string[]): Promise<CliRun> => runCliInProcess(["prompt", "--agent", agent.line, "--cwd", dir, "--protocol", protocol, ...args], { cwd: dir });
    const first = await cli("--json", "plan the trip");
    expect(first.code, first.stderr).toBe(0);
    const sessionId = (first.lines[0] as { sessionId: string }).sessionId;

    const forked = await cli("--fork", sessionId, "and the return");
    expect(forked.code, forked.stderr).toBe(0);
    const forkId = new RegExp(`forked session ${sessionId} into (sess_\\w+)`).exec(forked.stderr)?.[1];
    expect(forkId, forked.stderr).toBeDefined();
    expect(forked.stdout).toContain("plan the trip");
    expect(forked.stdout).toContain("and the return");

    const listed = await cli("--list");
    expect(listed.code, listed.stderr).toBe(0);
    const rows = listed.stdout.trim().split("\n");
    expect(rows).toHaveLength(2);
    expect(rows.every((r) => r.endsWith("plan the trip"))).toBe(true);
    expect(rows.some((r) => r.startsWith(sessionId))).toBe(true);

    expect((await cli("--archive", forkId!)).code).toBe(0);
    expect((await cli("--list")).stdout).not.toContain(forkId);
    const only = await cli("--list", "--archived", "only");
    expect(only.stdout).toMatch(new RegExp(`^${forkId}  \\S+  Fork of plan the trip \\[archived\\]\\n$`));
    expect((await cli("--unarchive", forkId!)).code).toBe(0);
    expect((await cli("--list")).stdout.trim().split("\n")).toHaveLength(2);
    expect(agent.starts()).toBe(8); // one serve per run, as with a serve process per run
  }, 180_000); // eight CLI runs (in-process), each starting its agent on a busy machine
});
