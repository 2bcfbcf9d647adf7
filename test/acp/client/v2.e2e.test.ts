import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AcpClient, ClientPermissionPolicy, ProtocolVersionError, type AcpAgentConfig, type AcpSession, type AcpSessionEvent } from "../../../src/acp/client/index.js";
import { expectGroupGone, repoRoot, tempDir } from "./helpers.js";
import { McpServer } from "@modelcontextprotocol/server";
import * as z from "zod/v4";
import { startMockAnthropic } from "../../../src/testing/index.js";
import { gone, hanging, startedPid } from "../agent/serve-support.js";
import { runCli as runCliInProcess, runCliProcess, type CliRun } from "../../support/cli.js";

const bin = join(repoRoot, "bin/agentkit-acp.js");
const v2Fixture = new URL("../../fixtures/agents/v2-agent.mjs", import.meta.url).pathname;

const clients: AcpClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) {
    const pid = c.pid;
    await c.close();
    if (pid !== undefined) await expectGroupGone(pid);
  }
});

/** A temp dir (removed by helpers.ts after the file). */
function workspace(): string {
  return realpathSync(tempDir());
}

async function start(config: AcpAgentConfig, policy = ClientPermissionPolicy.allowAll()): Promise<AcpClient> {
  const client = await AcpClient.start(config, policy);
  clients.push(client);
  return client;
}

/** `prompt` in-process (argument handling, output, exit codes); Ctrl-C needs the real process. */
const runCli = (args: string[], cwd: string): Promise<CliRun> => runCliInProcess(args, { cwd });

/** `stepFrom: "transcript"`: a later serve on the same session plays the step after its stored turns. */
function serveLine(dir: string, steps: unknown[], protocol?: string, stepFrom?: "transcript"): string {
  const script = join(dir, "script.json");
  writeFileSync(script, JSON.stringify({ steps, ...(stepFrom ? { stepFrom } : {}) }));
  return `"${process.execPath}" "${bin}" serve --model "scripted:${script}" --state-dir "${join(dir, ".state")}"${protocol ? ` --protocol ${protocol}` : ""}`;
}

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

describe("our client over ACP v2 (AcpClient protocol: v2, prompt --protocol v2)", () => {
  it("AcpClient ↔ an SDK-built v2 agent: a full turn (chunks, tool call upsert + content chunk, permission, plan), an error turn, cancel, load with replay", async () => {
    const dir = workspace();
    const asked: string[] = [];
    const policy = ClientPermissionPolicy.custom((request) => {
      asked.push(request.title);
      return Promise.resolve({ optionId: request.options.find((o) => o.kind === "allow_once")!.optionId });
    });
    const client = await start({ command: process.execPath, args: [v2Fixture], cwd: dir, protocol: "v2" }, policy);
    expect(client.protocolVersion).toBe(2);
    expect(client.agentInfo).toMatchObject({ name: "v2-fixture", version: "2.0.0" });
    const events: AcpSessionEvent[] = [];
    const session = await client.newSession({ onEvent: (e) => events.push(e) });
    const stream = session.stream("hello");
    for await (const _event of stream); // onEvent records them
    const result = await stream.result;
    // The commands of the session/new answer reach the v1 client as an update.
    expect(session.availableCommands).toEqual([{ name: "hello", description: "say hello", input: { hint: "whom" } }]);
    expect(result.stopReason).toBe("end_turn");
    expect(result.text).toBe("Hello, v2");
    expect(asked).toEqual(["Run ls"]);
    expect(events.find((e) => e.type === "tool_call")).toMatchObject({ toolCall: { toolCallId: "t1", title: "Run ls", kind: "execute", status: "pending" } });
    expect(result.toolCalls).toEqual([expect.objectContaining({ toolCallId: "t1", status: "completed" })]);
    expect(JSON.stringify(result.toolCalls[0])).toContain("a.txt b.txt");
    expect(events.find((e) => e.type === "plan")).toMatchObject({ entries: [{ content: "list files", status: "completed" }] });

    await expect(session.prompt("fail")).rejects.toThrow(/fixture failure/);

    const slow = session.stream("slow");
    let cancelled = false;
    for await (const event of slow) {
      if (event.type === "message_chunk" && !cancelled) {
        cancelled = true;
        await slow.cancel();
      }
    }
    expect((await slow.result).stopReason).toBe("cancelled");

    // A second client loads the session: v2 resume with replay, delivered before load answers.
    const other = await start({ command: process.execPath, args: [v2Fixture], cwd: dir, protocol: "v2" });
    await expect(other.loadSession(session.sessionId)).rejects.toMatchObject({ code: -32002 }); // another process: unknown there
    const replayed: AcpSessionEvent[] = [];
    const again = await client.loadSession(session.sessionId, { onEvent: (e) => replayed.push(e) });
    expect(again.sessionId).toBe(session.sessionId);
    const texts = replayed.filter((e) => e.type === "user_message_chunk" || e.type === "message_chunk").map((e) => (e as { text: string }).text);
    expect(texts).toEqual(["hello", "Hello, v2 (allowed)", "fail", "slow"]);
  });

  it("prompt --protocol v2 ↔ serve --protocol auto: a full turn (stream, tool call, permission, diff) then Ctrl-C cancels a turn (exit 3)", async () => {
    const dir = workspace();
    const agent = serveLine(dir, [
      { toolCall: { name: "write_file", input: { path: "out.txt", content: "over v2\n" }, callId: "c1" }, text: "Writing." },
      { text: "Done over v2.", chunks: 2 },
      { hang: true, text: "thinking forever" },
    ], "auto", "transcript"); // the continued session's turn is the hanging step: Ctrl-C, not a fast turn's end, must stop it
    const run = await runCli(["prompt", "--agent", agent, "--protocol", "v2", "--permissions", "allow-all", "--json", "write it"], dir);
    expect(run.code, run.stderr).toBe(0);
    expect(run.lines[0]).toMatchObject({ type: "session", protocolVersion: 2, agent: { name: "agentkit-acp" } });
    expect(run.lines.find((l) => l.type === "tool_call")).toMatchObject({ toolCall: { toolCallId: "c1", kind: "edit" } });
    expect(run.lines.find((l) => l.type === "permission_answered")).toBeDefined();
    const completed = run.lines.find((l) => l.type === "tool_call_update" && (l.toolCall as { status?: string }).status === "completed");
    expect(completed).toMatchObject({ diffs: [{ type: "diff", path: join(dir, "out.txt"), newText: "over v2\n" }] });
    expect(run.lines.at(-1)).toMatchObject({ type: "done", stopReason: "end_turn", result: { text: "Writing.Done over v2." } });
    expect(readFileSync(join(dir, "out.txt"), "utf8")).toBe("over v2\n");
    const sessionId = (run.lines[0] as { sessionId: string }).sessionId;

    let sent = false;
    const cancelled = await runCliProcess(["prompt", "--agent", agent, "--protocol", "v2", "--session", sessionId, "--json", "again"], { cwd: dir, onLine: (line, pid) => {
      if (line.type === "message_chunk" && !sent) {
        sent = true;
        process.kill(pid, "SIGINT");
      }
    } });
    expect(cancelled.code, cancelled.stderr + JSON.stringify(cancelled.lines)).toBe(3);
    expect(cancelled.lines.find((l) => l.type === "message_chunk")).toMatchObject({ text: "thinking forever" });
    expect(cancelled.lines.at(-1)).toMatchObject({ type: "done", stopReason: "cancelled" });
  });

  it("asked for v2, a v1-only agent (serve without --protocol): start-up fails with ProtocolVersionError; prompt exits 1 saying so; a bad --protocol is exit 2", async () => {
    const dir = workspace();
    const agent = serveLine(dir, [{ text: "v1 only" }]);
    const error = await AcpClient.start({ shellLine: agent, cwd: dir, protocol: "v2" }).then(
      (c) => {
        clients.push(c);
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProtocolVersionError);
    expect((error as ProtocolVersionError).agentVersion).toBe(1);

    const run = await runCli(["prompt", "--agent", agent, "--protocol", "v2", "hi"], dir);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/speaks ACP protocol version 1.*does not speak ACP v2/);
    const bad = await runCli(["prompt", "--agent", agent, "--protocol", "v3", "hi"], dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--protocol must be v1 or v2/);
  });
  it("AcpClient (protocol v2) ↔ serve --protocol v2: fork, titles (derived and set), status, archive / unarchive with the list filter", async () => {
    const dir = workspace();
    const script = join(dir, "echo.json");
    // The model answers with the transcript it was sent: a fork's history shows in its answer.
    writeFileSync(script, JSON.stringify({ steps: [{ echo: "transcript" }], onExhausted: "repeat-last" }));
    const client = await start({ shellLine: `"${process.execPath}" "${bin}" serve --model "scripted:${script}" --state-dir "${join(dir, ".state")}" --protocol v2`, cwd: dir, protocol: "v2", stderr: "ignore" });
    expect(client.protocolVersion).toBe(2);
    expect(client.agentCapabilities.sessionCapabilities).toMatchObject({ fork: {}, title: {}, status: {}, archive: {} });
    const session = await client.newSession();
    await session.prompt("first question");
    expect(session.title).toBe("first question");
    expect(await session.status()).toEqual({ status: "open" });

    const fork = await session.fork();
    expect(fork.sessionId).not.toBe(session.sessionId);
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
    expect(await titles("only")).toEqual(["Forked work*"]);
    expect(await titles("include")).toEqual(["Forked work*", "first question"]);
    expect((await client.sessionStatus(fork.sessionId)).status).toBe("saved");
    await client.unarchiveSession(fork.sessionId);
    expect(await titles()).toEqual(["Forked work", "first question"]);

    // Aborting newSession's signal: the bridge's v2 session/new gets $/cancel_request.
    const slow = hanging(dir, "client-v2");
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
  it("AcpClient (protocol v2) ↔ serve --protocol v2 with a keyed provider: providers list / set / disable, auth status, logout and login with status updates", async () => {
    const dir = workspace();
    const first = await startMockAnthropic({ responses: [{ text: "from first" }] });
    const second = await startMockAnthropic({ responses: [{ text: "from second" }] });
    try {
      const client = await start({
        shellLine: `"${process.execPath}" "${bin}" serve --model anthropic:claude-sonnet-4-5 --base-url ${first.baseUrl} --state-dir "${join(dir, ".state")}" --protocol v2`,
        cwd: dir,
        protocol: "v2",
        env: { ANTHROPIC_API_KEY: "sk-test" },
        stderr: "ignore",
      });
      expect(client.protocolVersion).toBe(2);
      expect((await client.listProviders()).map((p) => [p.providerId, p.current?.baseUrl])).toEqual([["main", first.baseUrl]]);
      await client.setProvider("main", { apiType: "anthropic", baseUrl: second.baseUrl });
      expect((await client.listProviders())[0]?.current?.baseUrl).toBe(second.baseUrl);
      const session = await client.newSession();
      expect((await session.prompt("hi")).text).toBe("from second");
      expect(first.requests).toHaveLength(0);
      await expect(client.disableProvider("main")).rejects.toMatchObject({ code: -32602 });

      expect(await client.authStatus()).toMatchObject({ state: "authenticated" });
      const states: string[] = [];
      let seen: () => void = () => undefined;
      client.onAuthStatus((s) => {
        states.push(s.state);
        seen();
      });
      const twoUpdates = new Promise<void>((resolve) => (seen = () => states.length === 2 && resolve()));
      await client.logout();
      await expect(session.prompt("x")).rejects.toMatchObject({ code: -32000 });
      await client.authenticate("env-api-key");
      await twoUpdates;
      expect(states).toEqual(["unauthenticated", "authenticated"]);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });
  it("AcpClient (protocol v2) ↔ serve --protocol v2: the elicitation callback answers the ask_user form", async () => {
    const dir = workspace();
    const script = join(dir, "ask.json");
    writeFileSync(script, JSON.stringify({ steps: [{ toolCall: { name: "ask_user", callId: "ask1", input: { question: "How many?", fields: [{ name: "count", type: "integer" }] } } }, { text: "thanks" }] }));
    const seen: unknown[] = [];
    const client = await start({
      shellLine: `"${process.execPath}" "${bin}" serve --model "scripted:${script}" --no-persist --protocol v2`,
      cwd: dir,
      protocol: "v2",
      stderr: "ignore",
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
  it("AcpClient (protocol v2) ↔ serve --protocol v2: MCP over ACP — an in-process MCP server's tool is called by serve's model through the v2 mcp/message", async () => {
    const dir = workspace();
    const script = join(dir, "mcp.json");
    writeFileSync(script, JSON.stringify({ steps: [{ toolCall: { name: "calc__add", input: { a: 2, b: 3 } } }, { echo: "last_tool_result" }] }));
    const client = await start({ shellLine: `"${process.execPath}" "${bin}" serve --model "scripted:${script}" --no-persist --approve auto-all --protocol v2`, cwd: dir, protocol: "v2", stderr: "ignore" });
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
  it("prompt --protocol v2 ↔ serve --protocol v2: --fork, --list with titles, --archive and --list --archived only", async () => {
    const dir = workspace();
    const script = join(dir, "echo.json");
    writeFileSync(script, JSON.stringify({ steps: [{ echo: "transcript" }], onExhausted: "repeat-last" }));
    const agent = `"${process.execPath}" "${bin}" serve --model "scripted:${script}" --state-dir "${join(dir, ".state")}" --protocol v2`;
    const cli = (...args: string[]) => runCli(["prompt", "--agent", agent, "--protocol", "v2", ...args], dir);
    const first = await cli("--json", "first question");
    expect(first.code, first.stderr).toBe(0);
    const sessionId = (first.lines[0] as { sessionId: string }).sessionId;
    const fork = await cli("--json", "--fork", sessionId, "in the fork");
    expect(fork.code, fork.stderr).toBe(0);
    const forkId = (fork.lines[0] as { sessionId: string }).sessionId;
    expect(forkId).not.toBe(sessionId);
    const answer = (fork.lines.at(-1) as { result: { text: string } }).result.text;
    expect(answer).toContain("first question");
    expect(answer).toContain("in the fork");
    const listed = await cli("--list");
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`${sessionId}\\s.*first question`));
    expect(listed.stdout).toContain(forkId);
    expect((await cli("--archive", forkId)).code).toBe(0);
    expect((await cli("--list")).stdout).not.toContain(forkId);
    const archived = await cli("--list", "--archived", "only");
    expect(archived.stdout).toContain(forkId);
    expect(archived.stdout).not.toContain(sessionId);
  });
});
