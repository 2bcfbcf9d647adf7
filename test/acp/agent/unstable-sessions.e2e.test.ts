import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { afterEach, describe, expect, it } from "vitest";
import { openServe, type InProcessServe } from "./serve-support.js";
import { tempDir } from "./support.js";

/** The official SDK client from its `/unstable` entrypoint, recording updates. */
function sdkClient(proc: InProcessServe) {
  const updates: acp.SessionNotification[] = [];
  const app = acp.client({ name: "sdk-unstable-client" }).onNotification(acp.methods.client.session.update, ({ params }) => void updates.push(params));
  const connection = app.connect(proc.stream() as acp.Stream);
  const of = (sessionId: string): acp.SessionUpdate[] => updates.filter((u) => u.sessionId === sessionId).map((u) => u.update);
  return { agent: connection.agent, connection, updates, of };
}

const text = (updates: acp.SessionUpdate[], kind: string): string =>
  updates
    .filter((u) => u.sessionUpdate === kind)
    .map((u) => (u.sessionUpdate === kind && "content" in u && u.content && !Array.isArray(u.content) && u.content.type === "text" ? u.content.text : ""))
    .join("");

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function startServe(extra: string[] = []) {
  const dir = tempDir("agentkit-unstable-");
  const scriptPath = join(dir.path, "script.json");
  // Every turn answers with the transcript the model was sent: a fork's first answer shows its inherited history.
  writeFileSync(scriptPath, JSON.stringify({ steps: [{ echo: "transcript" }], onExhausted: "repeat-last" }));
  const state = join(dir.path, "state");
  const proc = openServe(["--model", `scripted:${scriptPath}`, "--state-dir", state, ...extra], { cwd: dir.path });
  const client = sdkClient(proc);
  cleanups.push(
    () => dir.remove(),
    async () => {
      client.connection.close();
      await proc.end();
    },
  );
  return { dir: dir.path, state, proc, ...client };
}

describe("unstable session methods: the official SDK client (/unstable) against agentkit-acp serve over stdio (in-process)", () => {
  it("session/fork copies history, mode/config and lineage; the original is untouched", async () => {
    const env = startServe(["--models", "demo"]);
    const init = await env.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    expect(init.agentCapabilities?.sessionCapabilities).toMatchObject({ fork: {}, title: {}, status: {}, archive: {} });
    const a = await env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, mcpServers: [] });
    await env.agent.request(acp.methods.agent.session.prompt, { sessionId: a.sessionId, prompt: [{ type: "text", text: "alpha question" }] });
    // The source's model choice (a config option) goes with the fork.
    const model = a.configOptions?.find((o) => o.id === "model");
    const other = model?.type === "select" ? model.options.flatMap((o) => ("value" in o ? [o.value] : o.options.map((x) => x.value))).find((v) => v !== model.currentValue) : undefined;
    expect(other).toBeDefined();
    await env.agent.request(acp.methods.agent.session.setConfigOption, { sessionId: a.sessionId, configId: "model", value: other! });
    // …and back, so the scripted model answers the fork's prompt.
    await env.agent.request(acp.methods.agent.session.setConfigOption, { sessionId: a.sessionId, configId: "model", value: model!.currentValue as string });
    const b = await env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, mcpServers: [] });
    await env.agent.request(acp.methods.agent.session.setConfigOption, { sessionId: b.sessionId, configId: "model", value: other! });
    const forkOfB = await env.agent.request(acp.methods.agent.session.fork, { sessionId: b.sessionId, cwd: env.dir });
    expect(forkOfB.configOptions?.find((o) => o.id === "model")?.currentValue).toBe(other);

    const fork = await env.agent.request(acp.methods.agent.session.fork, { sessionId: a.sessionId, cwd: env.dir });
    expect(fork.sessionId).not.toBe(a.sessionId);
    expect(fork.configOptions?.find((o) => o.id === "model")?.currentValue).toBe(model!.currentValue);
    const before = env.of(fork.sessionId).length;
    await env.agent.request(acp.methods.agent.session.prompt, { sessionId: fork.sessionId, prompt: [{ type: "text", text: "beta in fork" }] });
    const forkAnswer = text(env.of(fork.sessionId).slice(before), "agent_message_chunk");
    expect(forkAnswer).toContain("alpha question");
    expect(forkAnswer).toContain("beta in fork");

    // Durable with lineage; the source's file does not mention the fork's prompt.
    const forkFile = readFileSync(join(env.state, "sessions", `${fork.sessionId}.jsonl`), "utf8");
    expect(JSON.parse(forkFile.split("\n")[0]!)).toMatchObject({ type: "header", forkedFrom: a.sessionId, title: "Fork of alpha question" });
    expect(readFileSync(join(env.state, "sessions", `${a.sessionId}.jsonl`), "utf8")).not.toContain("beta in fork");
    const seen = env.of(a.sessionId).length;
    await env.agent.request(acp.methods.agent.session.prompt, { sessionId: a.sessionId, prompt: [{ type: "text", text: "gamma" }] });
    expect(text(env.of(a.sessionId).slice(seen), "agent_message_chunk")).not.toContain("beta in fork");

    await expect(env.agent.request(acp.methods.agent.session.fork, { sessionId: "sess_nope", cwd: env.dir })).rejects.toMatchObject({ code: -32002 });
    await expect(env.agent.request(acp.methods.agent.session.fork, { sessionId: a.sessionId, cwd: "relative" })).rejects.toMatchObject({ code: -32602 });
  });

  it("session/set_title stores the title, tells the client (session_info_update) and session/list shows it; derived titles come from the first prompt", async () => {
    const env = startServe();
    await env.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const s = await env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, mcpServers: [] });
    await env.agent.request(acp.methods.agent.session.prompt, { sessionId: s.sessionId, prompt: [{ type: "text", text: "  derive   me\nsecond line" }] });
    expect(env.of(s.sessionId).filter((u) => u.sessionUpdate === "session_info_update").map((u) => (u as acp.SessionInfoUpdate).title)).toEqual(["derive me"]);

    const answer = await env.agent.request(acp.methods.agent.session.setTitle, { sessionId: s.sessionId, title: "  My   own\ttitle " });
    expect(answer.title).toBe("My own title");
    expect(env.of(s.sessionId).filter((u) => u.sessionUpdate === "session_info_update").at(-1)).toMatchObject({ title: "My own title" });
    expect((await env.agent.request(acp.methods.agent.session.list, {})).sessions.map((x) => x.title)).toEqual(["My own title"]);
    await expect(env.agent.request(acp.methods.agent.session.setTitle, { sessionId: s.sessionId, title: "   " })).rejects.toMatchObject({ code: -32602 });
    await expect(env.agent.request(acp.methods.agent.session.setTitle, { sessionId: "sess_nope", title: "x" })).rejects.toMatchObject({ code: -32002 });

    // A closed (stored) session can be retitled too, and the title survives.
    await env.agent.request(acp.methods.agent.session.close, { sessionId: s.sessionId });
    await env.agent.request(acp.methods.agent.session.setTitle, { sessionId: s.sessionId, title: "Renamed while closed" });
    expect((await env.agent.request(acp.methods.agent.session.list, {})).sessions[0]).toMatchObject({ sessionId: s.sessionId, title: "Renamed while closed" });
  });

  it("session/status is open / saved without side effects; session/archive hides, closes and filters; unarchive brings back", async () => {
    const env = startServe();
    await env.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const a = await env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, mcpServers: [] });
    const b = await env.agent.request(acp.methods.agent.session.new, { cwd: env.dir, mcpServers: [] });
    expect(await env.agent.request(acp.methods.agent.session.status, { sessionId: a.sessionId })).toMatchObject({ status: "open", _meta: { running: false } });
    await env.agent.request(acp.methods.agent.session.close, { sessionId: a.sessionId });
    expect((await env.agent.request(acp.methods.agent.session.status, { sessionId: a.sessionId })).status).toBe("saved");
    // Still saved: status did not load it.
    expect((await env.agent.request(acp.methods.agent.session.status, { sessionId: a.sessionId })).status).toBe("saved");
    await expect(env.agent.request(acp.methods.agent.session.status, { sessionId: "sess_nope" })).rejects.toMatchObject({ code: -32002, data: { sessionId: "sess_nope" } });

    // Archiving the open session b closes it.
    await env.agent.request(acp.methods.agent.session.archive, { sessionId: b.sessionId });
    await env.agent.request(acp.methods.agent.session.archive, { sessionId: b.sessionId }); // idempotent
    await expect(env.agent.request(acp.methods.agent.session.prompt, { sessionId: b.sessionId, prompt: [{ type: "text", text: "x" }] })).rejects.toMatchObject({ code: -32002 });
    const ids = async (archived?: acp.SessionArchiveFilter): Promise<string[]> =>
      (await env.agent.request(acp.methods.agent.session.list, archived ? { archived } : {})).sessions.map((s) => s.sessionId + (s.archived ? "*" : "")).sort();
    expect(await ids()).toEqual([a.sessionId]);
    expect(await ids("exclude")).toEqual([a.sessionId]);
    expect(await ids("only")).toEqual([`${b.sessionId}*`]);
    expect(await ids("include")).toEqual([a.sessionId, `${b.sessionId}*`].sort());
    await expect(env.agent.request(acp.methods.agent.session.list, { archived: "_mine" })).rejects.toMatchObject({ code: -32602 });
    await expect(env.agent.request(acp.methods.agent.session.archive, { sessionId: "sess_nope" })).rejects.toMatchObject({ code: -32002 });

    await env.agent.request(acp.methods.agent.session.unarchive, { sessionId: b.sessionId });
    await env.agent.request(acp.methods.agent.session.unarchive, { sessionId: b.sessionId });
    expect(await ids()).toEqual([a.sessionId, b.sessionId].sort());
    // An archived session can still be resumed; unarchive did not open it.
    expect((await env.agent.request(acp.methods.agent.session.status, { sessionId: b.sessionId })).status).toBe("saved");
  });
});
