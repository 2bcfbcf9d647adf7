import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { AcpHeadlessRuntime, AcpIntegration, AutoApproveResolver, SESSION_ACTIVE_ELSEWHERE } from "../../../../src/acp/agent/index.js";
import { silentLogger } from "../../../../src/core/index.js";
import { Agent } from "../../../../src/loop/index.js";
import type { SessionLeases, SessionStore } from "../../../../src/store/index.js";
import { JsonlSessionStore } from "../../../../src/store/index.js";
import type { PostgresStore } from "../../../../src/store/postgres/index.js";
import type { ModelRequest } from "../../../../src/model/index.js";
import { ScriptedModel, script, serveInMemory } from "../../../../src/testing/index.js";
import { ToolRegistry, builtinTools } from "../../../../src/tools/index.js";
import { initialize } from "../fixtures.js";
import { tempDir, textOf } from "../support.js";
import { postgresOrSkip } from "../../../support/postgres.js";
import { schemaScope } from "../../../support/postgres-store.js";
import { cleanUp, onCleanup } from "./support.js";

afterEach(cleanUp);
const pg = await postgresOrSkip("the session lease tests through the runtime");

/** One "instance": a runtime on a shared store (with its own leases unless given), one client connected. */
async function instance(store: SessionStore, leases?: SessionLeases) {
  const integration = AcpIntegration.builder().approvalResolver(new AutoApproveResolver()).logger(silentLogger).build();
  const builder = AcpHeadlessRuntime.builder()
    .integration(integration)
    .logger(silentLogger)
    .sessionStore(store)
    .agentFactory((ctx) =>
      Agent.builder()
        .model(new ScriptedModel([reply], { onExhausted: "repeat-last" }))
        .tools(new ToolRegistry(builtinTools()))
        .observer(ctx.integration)
        .cancellation(ctx.cancellation)
        .logger(silentLogger)
        .build(),
    );
  if (leases) builder.sessionLeases(leases);
  const runtime = builder.build();
  const { client, connection, close } = serveInMemory(runtime);
  onCleanup(close);
  await initialize(connection.agent);
  return { agent: connection.agent, client, runtime };
}

/** "use a tool" → one list_dir call, then a text answer; anything else → how many items the model was sent. */
function reply(request: ModelRequest) {
  const last = request.items.at(-1);
  const lastText = last?.parts.map((p) => (p.type === "text" ? p.text : "")).join("");
  if (last?.role === "user" && lastText === "use a tool") return script.toolCall("list_dir", { path: "." });
  if (last?.role === "tool") return script.text("listed");
  return script.text(`seen ${request.items.length} items`);
}

const elsewhere = { code: -32600, data: { reason: SESSION_ACTIVE_ELSEWHERE } };

async function oneInstanceAtATime(a: Awaited<ReturnType<typeof instance>>, b: Awaited<ReturnType<typeof instance>>, cwd: string): Promise<string> {
  const { sessionId } = await a.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  expect((await a.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hello" }] })).stopReason).toBe("end_turn");

  // Open on A: B refuses to open it, run it, or delete it, and says why.
  await expect(b.agent.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [] })).rejects.toMatchObject(elsewhere);
  await expect(b.agent.request(acp.methods.agent.session.resume, { sessionId, cwd })).rejects.toMatchObject(elsewhere);
  await expect(b.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "me too" }] })).rejects.toMatchObject(elsewhere);
  await expect(b.agent.request(acp.methods.agent.session.delete, { sessionId })).rejects.toMatchObject(elsewhere);
  const error: unknown = await b.agent.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [] }).then(() => undefined, (e: unknown) => e);
  expect((error as Error).message).toMatch(/is active on another instance.*retry/);

  // Closed on A: B opens it with the whole history and runs the next turn; now A is refused.
  await a.agent.request(acp.methods.agent.session.close, { sessionId });
  await b.agent.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
  expect(textOf(b.client.updates(sessionId), "agent_message_chunk")).toBe("seen 1 items");
  expect((await b.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "again" }] })).stopReason).toBe("end_turn");
  expect(textOf(b.client.updates(sessionId), "agent_message_chunk")).toBe("seen 1 itemsseen 3 items");
  await expect(a.agent.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [] })).rejects.toMatchObject(elsewhere);
  return sessionId;
}

describe("session leases through the runtime", () => {
  it("in-process leases (file store): two runtimes in one process never run one session at once", async () => {
    const dir = tempDir("agentkit-lease-");
    onCleanup(() => dir.remove());
    const store = new JsonlSessionStore({ stateDir: dir.path, logger: silentLogger });
    await oneInstanceAtATime(await instance(store), await instance(store), dir.path);
  });

  describe.runIf(pg.url)("on PostgreSQL", () => {
    it("two instances on one database: a session opened on one is refused on the other until closed there; writes per turn", async () => {
      const dir = tempDir("agentkit-lease-");
      onCleanup(() => dir.remove());
      const scope = schemaScope(pg.url!);
      onCleanup(() => scope.cleanup());
      const sa: PostgresStore = await scope.open();
      const sb: PostgresStore = await scope.open();
      const a = await instance(sa.sessions, sa.leases);
      const b = await instance(sb.sessions, sb.leases);
      const sessionId = await oneInstanceAtATime(a, b, dir.path);

      // What one more plain turn costs in PostgreSQL writes.
      const before = sb.stats();
      await b.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "count" }] });
      const after = sb.stats();
      expect(after.items - before.items).toBe(2); // the user's item and the assistant's
      expect(after.writes - before.writes).toBe(2);
      // A turn with one tool call: user, assistant (the call), tool result, assistant.
      await b.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "use a tool" }] });
      const tool = sb.stats();
      expect(textOf(b.client.updates(sessionId), "agent_message_chunk")).toMatch(/listed$/);
      expect(tool.items - after.items).toBe(4);
      expect(tool.writes - after.writes).toBe(4);
      process.stderr.write(`[leases] PostgreSQL writes per turn: plain ${after.writes - before.writes}, with one tool call ${tool.writes - after.writes}\n`);
    });
  });
});
