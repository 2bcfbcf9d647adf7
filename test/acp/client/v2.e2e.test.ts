import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ClientPermissionPolicy, ProtocolVersionError, type AcpSessionEvent } from "../../../src/acp/client/index.js";
import { startAgent as start, tempDir } from "./helpers.js";
import { runCli as runCliInProcess, runCliProcess, type CliRun } from "../../support/cli.js";
import { agentFixture } from "../../support/fixture-agents.js";
import { serveBehindBridge } from "../agent/serve-support.js";

const v2Fixture = agentFixture("v2-agent.mjs");

/** A temp dir (removed by helpers.ts after the file). */
function workspace(): string {
  return realpathSync(tempDir());
}

/** `prompt` in-process (argument handling, output, exit codes); Ctrl-C needs the real process. */
const runCli = (args: string[], cwd: string): Promise<CliRun> => runCliInProcess(args, { cwd });

/**
 * The agent command line of serve, run in-process behind a bridge process (a fresh serve for
 * each agent process started). `stepFrom: "transcript"`: a later serve on the same session plays
 * the step after its stored turns.
 */
async function serveLine(dir: string, steps: unknown[], protocol?: string, stepFrom?: "transcript"): Promise<string> {
  const script = join(dir, "script.json");
  writeFileSync(script, JSON.stringify({ steps, ...(stepFrom ? { stepFrom } : {}) }));
  const args = ["--model", `scripted:${script}`, "--state-dir", join(dir, ".state"), ...(protocol ? ["--protocol", protocol] : [])];
  return (await serveBehindBridge(args, { cwd: dir })).line;
}

// What v1 and v2 must do alike (session methods, providers and auth, elicitation, MCP over ACP, prompt's session flags) is
// in protocols.e2e.test.ts, run once per protocol; what only v2 has stays here.
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
    const agent = await serveLine(dir, [
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
    const agent = await serveLine(dir, [{ text: "v1 only" }]);
    const error = await start({ shellLine: agent, cwd: dir, protocol: "v2" }).then(
      () => undefined,
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
});
