import { realpathSync } from "node:fs";
import { PassThrough } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { AcpClient } from "../../../src/acp/client/index.js";
import { terminalForm } from "../../../src/cli/prompt-form.js";
import { openServe, serveBehindBridge, writeScript } from "./serve-support.js";
import { tempDir } from "./support.js";
import { runCli } from "../../support/cli.js";
import { agentFixture } from "../../support/fixture-agents.js";

const unstableFixture = agentFixture("unstable-agent.mjs");
const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const askStep = {
  toolCall: {
    name: "ask_user",
    callId: "ask1",
    input: { question: "Which colour and how many?", fields: [{ name: "color", type: "choice", options: ["red", "blue"] }, { name: "count", type: "integer", title: "How many" }] },
  },
};

function scriptDir() {
  const dir = tempDir("agentkit-elicit-");
  cleanups.push(() => dir.remove());
  const script = writeScript(dir.path, [askStep, { echo: "last_tool_result" }]);
  return { dir: dir.path, serveArgs: ["--model", `scripted:${script}`, "--no-persist"] };
}

describe("elicitation: the ask_user tool ↔ clients", () => {
  it("official SDK client with elicitation.form: the form arrives scoped to the tool call, the answers reach the model, no permission question", async () => {
    const { dir, serveArgs } = scriptDir();
    const proc = openServe(serveArgs, { cwd: dir });
    const requests: acp.CreateElicitationRequest[] = [];
    const permissions: unknown[] = [];
    const updates: acp.SessionUpdate[] = [];
    const connection = acp
      .client({ name: "sdk-elicit" })
      .onRequest(acp.methods.client.elicitation.create, ({ params }) => {
        requests.push(params);
        return { action: "accept", content: { color: "blue", count: 3 } };
      })
      .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
        permissions.push(params);
        return { outcome: { outcome: "cancelled" } };
      })
      .onNotification(acp.methods.client.session.update, ({ params }) => void updates.push(params.update))
      .connect(proc.stream());
    cleanups.push(async () => {
      connection.close();
      await proc.end();
    });
    await connection.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: { elicitation: { form: {} } } });
    const { sessionId } = await connection.agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const answer = await connection.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] });
    expect(answer.stopReason).toBe("end_turn");
    expect(permissions).toEqual([]);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      mode: "form",
      message: "Which colour and how many?",
      sessionId,
      toolCallId: "ask1",
      requestedSchema: { type: "object", properties: { color: { type: "string", enum: ["red", "blue"] }, count: { type: "integer", title: "How many" } }, required: ["color", "count"] },
    });
    // The answers are the tool's result, which the model gets next.
    const done = updates.find((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "ask1" && u.status === "completed");
    expect(done).toMatchObject({ rawOutput: { answers: { color: "blue", count: 3 } } });
    expect(JSON.stringify(done)).toContain('The user answered: {\\"color\\":\\"blue\\",\\"count\\":3}');
  });

  it("our AcpClient's elicitation callback; prompt without a terminal declines, saying why", async () => {
    const { dir, serveArgs } = scriptDir();
    const seen: acp.CreateElicitationRequest[] = [];
    // serve in-process behind a bridge process (one fresh serve per agent process started).
    const agent = await serveBehindBridge(serveArgs, { cwd: dir });
    const client = await AcpClient.start({
      command: agent.command,
      args: agent.args,
      cwd: dir,
      stderr: "ignore",
      elicitation: async (request) => {
        seen.push(request);
        return { action: "decline", _meta: { reason: "not now" } };
      },
    });
    cleanups.push(() => client.close());
    const session = await client.newSession();
    const result = await session.prompt("go");
    expect(seen.map((r) => r.message)).toEqual(["Which colour and how many?"]);
    expect(result.text).toContain("The user declined to answer (not now)");

    const cli = await runCli(["prompt", "--agent", agent.line, "--cwd", dir, "go"], { cwd: dir });
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain("declined to answer (agentkit-acp prompt runs without a terminal to ask on, so questions are declined)");
  }, 60_000);

  it("our AcpClient against an agent built on the official SDK that asks a question", async () => {
    const client = await AcpClient.start({
      command: process.execPath,
      args: [unstableFixture],
      cwd: realpathSync(tempDir().path),
      stderr: "ignore",
      elicitation: async () => ({ action: "accept", content: { pick: "b" } }),
    });
    cleanups.push(() => client.close());
    expect((await (await client.newSession()).prompt("ask")).text).toBe('answer: {"action":"accept","content":{"pick":"b"}}');
  });

  it("the terminal form: numbered choices, typed values, re-asks on bad input, /decline", async () => {
    const request = {
      mode: "form",
      message: "Which colour and how many?",
      sessionId: "s",
      requestedSchema: { type: "object", properties: { color: { type: "string", enum: ["red", "blue"] }, count: { type: "integer" }, note: { type: "string" } }, required: ["color", "count"] },
    } as acp.CreateElicitationRequest;
    // Each line is typed when the form shows its next question (as a person would).
    const run = async (lines: string[]) => {
      const input = new PassThrough();
      const output = new PassThrough();
      let shown = "";
      output.on("data", (c: Buffer) => {
        shown += c.toString();
        if (shown.endsWith(": ") && lines.length > 0) input.write(`${lines.shift()}\n`);
      });
      const form = terminalForm(input, output, () => undefined, false);
      const answer = await form(request, new AbortController().signal);
      return { answer, shown };
    };
    const accepted = await run(["2", "many", "3", ""]);
    expect(accepted.answer).toEqual({ action: "accept", content: { color: "blue", count: 3 } });
    expect(accepted.shown).toContain("2) blue");
    expect(accepted.shown).toContain("Please give an integer");
    expect((await run(["/decline"])).answer).toEqual({ action: "decline" });
  });
});
