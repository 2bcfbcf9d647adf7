import { createServer, type Socket } from "node:net";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAI, type MockProviderServer, type MockReply } from "../../../src/testing/index.js";
import { cleanEnv, connectServe } from "./serve-support.js";
import { tempDir } from "./support.js";

// serve with a real provider (openai-compatible) against loopback mock servers: update
// coalescing (--coalesce-ms) and the model time bounds (--model-*-timeout), end to end.

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function mockModel(responses: MockReply[]): Promise<MockProviderServer> {
  const mock = await startMockOpenAI({ responses });
  cleanups.push(() => mock.close());
  return mock;
}

function serve(baseUrl: string, extra: string[]) {
  const dir = tempDir("agentkit-serve-streaming-");
  cleanups.push(() => dir.remove());
  const env = connectServe(["--model", "openai-compatible:mock", "--base-url", baseUrl, "--approve", "auto-all", ...extra], {
    cwd: dir.path,
    env: cleanEnv({ AGENTKIT_STATE_DIR: `${dir.path}/state` }),
  });
  cleanups.push(async () => {
    env.connection.close();
    await env.proc.end();
  });
  return { ...env, cwd: dir.path };
}

/** One prompt; the updates it produced (in arrival order) and the bytes serve wrote for it. */
async function turn(baseUrl: string, extra: string[]) {
  const { agent, client, proc, cwd } = serve(baseUrl, extra);
  await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  const before = Buffer.byteLength(proc.stdout);
  const seen = client.notifications.length;
  const response = await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] });
  const turnKinds = new Set(["agent_thought_chunk", "agent_message_chunk", "tool_call", "tool_call_update"]);
  const updates = client.notifications
    .slice(seen)
    .map((n) => n.update)
    .filter((u) => turnKinds.has(u.sessionUpdate));
  return { response, updates, bytes: Buffer.byteLength(proc.stdout) - before, stderr: () => proc.stderr };
}

/** Kinds in order with consecutive repeats folded, and the text of each kind. */
function shape(updates: acp.SessionUpdate[]) {
  const kinds: string[] = [];
  const text: Record<string, string> = {};
  for (const u of updates) {
    if (kinds.at(-1) !== u.sessionUpdate) kinds.push(u.sessionUpdate);
    if ((u.sessionUpdate === "agent_message_chunk" || u.sessionUpdate === "agent_thought_chunk") && u.content.type === "text") {
      text[u.sessionUpdate] = (text[u.sessionUpdate] ?? "") + u.content.text;
    }
  }
  return { kinds, text };
}

const replies = (): MockReply[] => [
  {
    reasoning: "thinking ".repeat(100),
    text: "word, ".repeat(400),
    chunkSize: 6,
    toolCalls: [{ id: "call_1", name: "read_file", input: { path: "missing.txt" } }],
  },
  { text: "after the tool ".repeat(100), chunkSize: 5 },
];

describe("serve --coalesce-ms", () => {
  it("≥5× fewer updates and bytes, the same text, and the tool call neither held back nor reordered", async () => {
    const plain = await turn((await mockModel(replies())).baseUrl, []);
    // A wide window, so the count does not depend on how fast a busy machine streams.
    const merged = await turn((await mockModel(replies())).baseUrl, ["--coalesce-ms", "2000"]);
    for (const run of [plain, merged]) expect(run.response.stopReason).toBe("end_turn");

    // Same client-visible result: the same kinds in the same order, the same assembled text.
    expect(shape(merged.updates)).toEqual(shape(plain.updates));
    expect(shape(plain.updates).kinds).toEqual(["agent_thought_chunk", "agent_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"]);
    const chunks = (run: typeof plain) => run.updates.filter((u) => u.sessionUpdate.endsWith("_chunk")).length;
    expect(chunks(plain)).toBe(100 * 9 / 6 + 400 + (15 * 100) / 5); // one update per model delta without coalescing
    expect(chunks(merged) * 5).toBeLessThanOrEqual(chunks(plain));
    expect(merged.bytes * 5).toBeLessThanOrEqual(plain.bytes);
  });

  it("rejects a bad value with exit 2", async () => {
    const { proc } = serve("http://127.0.0.1:9/v1", ["--coalesce-ms", "soon"]);
    expect((await proc.exited).code).toBe(2);
    expect(proc.stderr).toContain('--coalesce-ms must be a non-negative number of milliseconds (got "soon")');
  });
});

describe("serve --model-*-timeout", () => {
  it("a model server that accepts and stays silent ends the turn with an error naming the bound", async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => {
      sockets.add(socket);
      socket.on("error", () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => { for (const s of sockets) s.destroy(); silent.close(() => resolve()); }));
    const port = (silent.address() as { port: number }).port;
    const started = performance.now();
    const { agent, client, proc, cwd } = serve(`http://127.0.0.1:${port}/v1`, ["--model-connect-timeout", "200", "--model-timeout", "700"]);
    await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    const outcome = await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hi" }] }).then(
      (response) => ({ response, error: undefined }),
      (error: unknown) => ({ response: undefined, error: error as acp.RequestError }),
    );
    const said = [
      outcome.error?.message ?? "",
      ...client.notifications.map((n) => (n.update.sessionUpdate === "agent_message_chunk" && n.update.content.type === "text" ? n.update.content.text : "")),
      proc.stderr,
    ].join("\n");
    expect(said).toContain("(connect timeout)");
    expect(said).not.toContain("could not connect");
    expect(performance.now() - started).toBeLessThan(30_000);
  });

  it("rejects a bad value with exit 2", async () => {
    const { proc } = serve("http://127.0.0.1:9/v1", ["--model-idle-timeout", "0"]);
    expect((await proc.exited).code).toBe(2);
    expect(proc.stderr).toContain('--model-idle-timeout must be a positive number of milliseconds (got "0")');
  });
});
