import { writeFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { openServe, writeScript } from "../acp/agent/serve-support.js";
import { tempDir, textOf } from "../acp/agent/support.js";

// Issue 14 case 2: a client that never answers fs/terminal requests cannot hold a turn; a
// permission question waits for the human until cancel.

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A promise that never resolves on its own: ends (rejects) when the request is cancelled, records that. */
function never<T>(signal: AbortSignal, cancelled: string[], what: string): Promise<T> {
  return new Promise<T>((_, reject) => {
    signal.addEventListener("abort", () => {
      cancelled.push(what);
      reject(acp.RequestError.requestCancelled());
    });
  });
}

function start(steps: Parameters<typeof writeScript>[1], extra: string[], build: (app: acp.ClientApp, cancelled: string[]) => acp.ClientApp) {
  const dir = tempDir("agentkit-robust-waits-");
  writeFileSync(join(dir.path, "notes.txt"), "hello");
  const proc = openServe(["--model", `scripted:${writeScript(dir.path, steps)}`, "--no-persist", ...extra], { cwd: dir.path });
  const cancelled: string[] = [];
  const updates: acp.SessionNotification[] = [];
  const app = build(
    acp.client({ name: "slow-client" }).onNotification(acp.methods.client.session.update, ({ params }) => void updates.push(params)),
    cancelled,
  );
  const connection = app.connect(proc.stream());
  cleanups.push(async () => {
    connection.close();
    await proc.end();
    dir.remove();
  });
  return { dir, proc, agent: connection.agent, cancelled, updates };
}

async function open(agent: acp.ClientContext, cwd: string, capabilities: acp.ClientCapabilities): Promise<string> {
  await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: capabilities });
  return (await agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] })).sessionId;
}

const prompt = (sessionId: string, text = "go"): acp.PromptRequest => ({ sessionId, prompt: [{ type: "text", text }] });

describe("robustness: bounded waits on the client (real serve)", () => {
  it("fs/read_text_file never answered: the tool call fails after --client-timeout with a clear message, the turn goes on", async () => {
    const { dir, agent, cancelled, updates } = start(
      [{ toolCall: { name: "read_file", input: { path: "notes.txt" } } }, { echo: "last_tool_result" }],
      ["--approve", "auto-all", "--client-timeout", "1500"],
      (app, cancelled) => app.onRequest(acp.methods.client.fs.readTextFile, ({ signal }) => never(signal, cancelled, "fs/read_text_file")),
    );
    const sessionId = await open(agent, dir.path, { fs: { readTextFile: true, writeTextFile: false } });
    const started = Date.now();
    const response = await agent.request(acp.methods.agent.session.prompt, prompt(sessionId));
    const elapsed = Date.now() - started;
    expect(response.stopReason).toBe("end_turn");
    expect(textOf(updates.map((u) => u.update), "agent_message_chunk")).toContain("did not answer fs/read_text_file within 1500 ms");
    expect(cancelled).toContain("fs/read_text_file"); // the agent cancelled it: nothing left pending
    expect(elapsed).toBeGreaterThanOrEqual(1400);
    expect(elapsed).toBeLessThan(10_000);
  });

  it("a terminal client that answers only terminal/create: a 3 s command timeout ends the tool within ~2 s of it", async () => {
    const { dir, agent, cancelled, updates } = start(
      [{ toolCall: { name: "shell", input: { command: "sleep 600", timeout_ms: 3000 } } }, { echo: "last_tool_result" }],
      ["--approve", "auto-all", "--client-timeout", "20000"],
      (app, cancelled) =>
        app
          .onRequest(acp.methods.client.terminal.create, () => ({ terminalId: "t1" }))
          .onRequest(acp.methods.client.terminal.waitForExit, ({ signal }) => never(signal, cancelled, "wait_for_exit"))
          .onRequest(acp.methods.client.terminal.kill, ({ signal }) => never(signal, cancelled, "kill"))
          .onRequest(acp.methods.client.terminal.output, ({ signal }) => never(signal, cancelled, "output"))
          .onRequest(acp.methods.client.terminal.release, ({ signal }) => never(signal, cancelled, "release")),
    );
    const sessionId = await open(agent, dir.path, { terminal: true });
    const started = Date.now();
    const response = await agent.request(acp.methods.agent.session.prompt, prompt(sessionId));
    const elapsed = Date.now() - started;
    expect(response.stopReason).toBe("end_turn");
    expect(textOf(updates.map((u) => u.update), "agent_message_chunk")).toContain("timed out after 3000 ms");
    expect(elapsed).toBeGreaterThanOrEqual(2900);
    // 3 s timeout + at most 1 s (kill + exit) + 1 s (output + release) + scheduling slack.
    expect(elapsed).toBeLessThan(3000 + 2000 + 1500);
    expect(cancelled).toEqual(expect.arrayContaining(["wait_for_exit", "kill", "output"]));
  });

  it("a permission question is not bounded: it waits past --client-timeout until session/cancel ends it", async () => {
    let asked!: () => void;
    const questionSeen = new Promise<void>((resolve) => (asked = resolve));
    const { dir, agent } = start(
      [{ toolCall: { name: "shell", input: { command: "echo hi" } } }, { text: "done" }],
      ["--approve", "ask", "--client-timeout", "500"],
      (app, cancelled) =>
        app.onRequest(acp.methods.client.session.requestPermission, ({ signal }) => {
          asked();
          return never(signal, cancelled, "permission");
        }),
    );
    const sessionId = await open(agent, dir.path, {});
    const running = agent.request(acp.methods.agent.session.prompt, prompt(sessionId));
    await questionSeen;
    // Four times the client bound passes with the question still open and the turn running.
    const state = await Promise.race([running.then(() => "ended"), new Promise((resolve) => setTimeout(() => resolve("waiting"), 2000))]);
    expect(state).toBe("waiting");
    await agent.notify(acp.methods.agent.session.cancel, { sessionId });
    expect((await running).stopReason).toBe("cancelled");
  });
});
