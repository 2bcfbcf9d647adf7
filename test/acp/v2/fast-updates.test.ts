import * as V1 from "@agentclientprotocol/sdk/unstable";
import type * as V2 from "@agentclientprotocol/sdk/experimental/v2/unstable";
import { describe, expect, it } from "vitest";
import type { SessionUpdateSink } from "../../../src/acp/agent/client-handle.js";
import { serveV2 } from "../../../src/acp/agent/v2-bridge.js";
import { silentLogger } from "../../../src/core/index.js";
import { V1ToV2Updates, isPlainTextChunk, isPlainUpdate } from "../../../src/acp/v2/convert.js";
import { QUEUED_CHUNK_METHOD, RuntimePipe, type RawSessionUpdate } from "../../../src/acp/v2/runtime-pipe.js";

const text = (t: string) => ({ type: "text", text: t });
/** One v1 update of every kind the runtime can send, and chunk variants on both sides of the fast path's line. */
const UPDATES: Array<{ update: Record<string, unknown>; plain?: true }> = [
  { update: { sessionUpdate: "agent_message_chunk", content: text("a"), messageId: "m1" }, plain: true },
  { update: { sessionUpdate: "agent_message_chunk", content: text("b") }, plain: true },
  { update: { content: text("c"), sessionUpdate: "agent_message_chunk", messageId: null }, plain: true },
  { update: { sessionUpdate: "agent_thought_chunk", content: text("think"), messageId: "t1" }, plain: true },
  { update: { sessionUpdate: "agent_thought_chunk", content: { text: "more", type: "text" } }, plain: true },
  { update: { sessionUpdate: "user_message_chunk", content: text("hi"), messageId: "u1" }, plain: true },
  { update: { sessionUpdate: "agent_message_chunk", content: text(""), messageId: "m1" }, plain: true },
  { update: { sessionUpdate: "agent_message_chunk", content: text("meta"), messageId: "m1", _meta: { k: 1 } } },
  { update: { sessionUpdate: "agent_message_chunk", content: { ...text("ann"), annotations: { priority: 1 } }, messageId: "m1" } },
  { update: { sessionUpdate: "agent_message_chunk", content: { ...text("block meta"), _meta: { k: 2 } } } },
  { update: { sessionUpdate: "agent_message_chunk", content: text("extra"), extra: true } },
  { update: { sessionUpdate: "agent_message_chunk", content: { type: "image", data: "AAAA", mimeType: "image/png" } } },
  { update: { sessionUpdate: "agent_thought_chunk", content: { type: "resource_link", uri: "file:///a", name: "a" } } },
  { update: { sessionUpdate: "tool_call", toolCallId: "c1", title: "Edit a", kind: "edit", status: "pending", rawInput: { path: "a" }, locations: [{ path: "/w/a" }] } },
  { update: { sessionUpdate: "tool_call_update", toolCallId: "c1", status: "completed", content: [{ type: "diff", path: "/w/a", oldText: null, newText: "x" }, { type: "content", content: text("done") }] } },
  { update: { sessionUpdate: "tool_call_update", toolCallId: "c1", status: "in_progress", _meta: { agentkit: { progress: "half" } } } },
  { update: { sessionUpdate: "plan", entries: [{ content: "step", priority: "high", status: "pending" }] } },
  { update: { sessionUpdate: "available_commands_update", availableCommands: [{ name: "help", description: "Help" }, { name: "mode", description: "Mode", input: { hint: "ask" } }] }, plain: true },
  { update: { sessionUpdate: "available_commands_update", availableCommands: [{ description: "D", name: "n", input: null, _meta: { a: 1 } }, { name: "m", description: "M", input: { _meta: { b: 2 }, hint: "h" } }], _meta: { sandbox: { fs: "rw" }, n: [1, 2] } }, plain: true },
  { update: { sessionUpdate: "available_commands_update", availableCommands: [], _meta: null }, plain: true },
  { update: { sessionUpdate: "available_commands_update", availableCommands: [{ name: "bad", description: "input hint not a string", input: { hint: 3 } }] } },
  { update: { sessionUpdate: "available_commands_update", availableCommands: [{ name: 7, description: "skipped by the SDK" }, { name: "ok", description: "kept" }] } },
  { update: { sessionUpdate: "available_commands_update", availableCommands: [{ name: "x", description: "extra key", extra: 1 }] } },
  { update: { sessionUpdate: "available_commands_update", availableCommands: [{ name: "x", description: "X" }], _meta: "not a record" } },
  { update: { sessionUpdate: "current_mode_update", currentModeId: "ask" } },
  { update: { sessionUpdate: "config_option_update", configOptions: [{ id: "model", name: "Model", type: "select", currentValue: "a", options: [{ value: "a", name: "A" }] }] } },
  { update: { sessionUpdate: "session_info_update", title: "T", updatedAt: "2026-01-01T00:00:00Z" }, plain: true },
  { update: { updatedAt: "2026-01-01T00:00:00Z", sessionUpdate: "session_info_update", title: null }, plain: true },
  { update: { sessionUpdate: "session_info_update", _meta: { sandbox: "on" } }, plain: true },
  { update: { sessionUpdate: "session_info_update", title: "T", updatedAt: 5 } },
  { update: { sessionUpdate: "session_info_update", title: "T", extra: true } },
  { update: { sessionUpdate: "session_info_update", title: "T", _meta: ["not", "a", "record"] } },
  { update: { sessionUpdate: "usage_update", used: 10, size: 100 } },
  { update: { sessionUpdate: "agent_message_chunk", content: text("after"), messageId: "m2" }, plain: true },
];

/** The updates as the SDK's v1 client validates them (the general path's input), in order. */
async function validatedBySdk(updates: Array<Record<string, unknown>>): Promise<unknown[]> {
  const received: unknown[] = [];
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  const client = V1.client().onNotification(V1.methods.client.session.update, ({ params }) => {
    if (params.update.sessionUpdate === "session_info_update" && params.update.title === "END") done();
    else received.push(params.update);
  });
  const connection = V1.agent().connect(client);
  for (const update of updates) await connection.client.notify(V1.methods.client.session.update, { sessionId: "s", update: update as V1.SessionUpdate });
  await connection.client.notify(V1.methods.client.session.update, { sessionId: "s", update: { sessionUpdate: "session_info_update", title: "END" } });
  await all;
  connection.close();
  return received;
}

/** Generated message ids (random) as the order they first appear in, so two runs compare. */
function normalised(json: string[]): string[] {
  const ids = new Map<string, string>();
  return json.map((line) => line.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => ids.get(id) ?? (ids.set(id, `id${ids.size}`), `id${ids.size - 1}`)));
}

describe("the v2 bridge's fast path for plain updates", () => {
  it("gives byte for byte what the general path (SDK validation, then convert) gives, for every update kind, in sequence", async () => {
    const raw = UPDATES.map((u) => u.update);
    const validated = await validatedBySdk(raw);
    expect(validated).toHaveLength(raw.length);
    const general = new V1ToV2Updates();
    const mixed = new V1ToV2Updates();
    const fastUsed: boolean[] = [];
    const viaGeneral = validated.map((update) => JSON.stringify(general.convert(update as V1.SessionUpdate) ?? null));
    const viaMixed = raw.map((update, i) => {
      const fast = mixed.convertPlain(update);
      fastUsed.push(fast !== undefined);
      return JSON.stringify(fast ?? mixed.convert(validated[i] as V1.SessionUpdate) ?? null);
    });
    expect(normalised(viaMixed)).toEqual(normalised(viaGeneral));
    expect(fastUsed).toEqual(UPDATES.map((u) => u.plain === true));
    // The SDK rebuilds a text block as {text, type}: the fast path must too.
    expect(viaMixed[0]).toBe('{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"text":"a","type":"text"}}');
  });

  it("refuses what the SDK would refuse or reshape", () => {
    expect(isPlainTextChunk({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: 1 } })).toBe(false);
    expect(isPlainTextChunk({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "x" }, messageId: 7 })).toBe(false);
    expect(isPlainTextChunk({ sessionUpdate: "agent_message_chunk", content: null })).toBe(false);
    expect(isPlainTextChunk({ sessionUpdate: "tool_call", content: { type: "text", text: "x" } })).toBe(false);
    expect(isPlainTextChunk(Object.assign(Object.create({ inherited: 1 }) as object, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "x" } }))).toBe(false);
    expect(isPlainTextChunk("agent_message_chunk")).toBe(false);
  });

  // Through the runtime's SDK connection (its write queue hands the pipe one message at a time),
  // or handed to the pipe directly (`RuntimePipe.sessionUpdate`, what serve does: all at once).
  it.each([
    { via: "the runtime's SDK connection", handedOver: false },
    { via: "RuntimePipe.sessionUpdate", handedOver: true },
  ])("keeps the runtime's order through $via: after a message that went through the client, chunks follow it there until it caught up; then they go directly again", async ({ handedOver }) => {
    const seen: string[] = [];
    const direct: string[] = [];
    let queued = false;
    const label = (update: unknown): string => {
      const u = update as { sessionUpdate: string; content?: { text?: string } };
      return u.content?.text ?? u.sessionUpdate;
    };
    const pipe = new RuntimePipe((params: RawSessionUpdate) => {
      if (!isPlainUpdate(params.update)) return undefined;
      seen.push(label(params.update));
      if (!queued) direct.push(label(params.update));
      waiters.get(label(params.update))?.();
      return Promise.resolve();
    });
    const waiters = new Map<string, () => void>();
    const handled = (name: string) => new Promise<void>((resolve) => waiters.set(name, resolve));
    const end = handled("usage_update");
    const app = V1.client();
    // As in the bridge, where the forwarded methods come first: each message walks these handlers (one await each).
    for (let i = 0; i < 30; i++) app.onNotification(`_test/${i}`, (params) => params, () => undefined);
    const client = app
      .onNotification(V1.methods.client.session.update, ({ params }) => {
        seen.push(label(params.update));
        waiters.get(label(params.update))?.();
      })
      .onNotification(QUEUED_CHUNK_METHOD, (params) => params as RawSessionUpdate, ({ params }) => {
        queued = true;
        pipe.dequeued(params);
        queued = false;
      })
      .connect(pipe.client);
    const runtime = V1.agent().connect(pipe.runtime);
    const send = (update: unknown): Promise<void> => {
      const params = { sessionId: "s", update: update as V1.SessionUpdate };
      return handedOver ? pipe.sessionUpdate(params) : runtime.client.notify(V1.methods.client.session.update, params);
    };
    const sent = ["a", "b", "tool_call", "c", "d", "plan", "e", "f", "g", "usage_update"];
    for (const name of sent) {
      const update = name.length === 1 ? { sessionUpdate: "agent_message_chunk", content: text(name) } : name === "tool_call" ? { sessionUpdate: "tool_call", toolCallId: "x", title: "x" } : name === "plan" ? { sessionUpdate: "plan", entries: [] } : { sessionUpdate: "usage_update", used: 1, size: 2 };
      // Not awaited: the runtime writes as fast as it can.
      void send(update);
    }
    await end;
    expect(seen).toEqual(sent);
    // Only the chunk right after each message that went through the client waited in line: the
    // runtime's next write waits until that one was handled, and finds the line empty.
    expect(direct).toEqual(["a", "b", "d", "f", "g"]);
    // Once the client caught up (h, after usage_update, waited in line), chunks go directly again.
    const chunk = (t: string) => send({ sessionUpdate: "agent_message_chunk", content: text(t) });
    const h = handled("h");
    await chunk("h");
    await h;
    await chunk("i");
    expect(seen.slice(-2)).toEqual(["h", "i"]);
    expect(direct).not.toContain("h");
    expect(direct.at(-1)).toBe("i");
    runtime.close();
    client.close();
    pipe.close();
    await expect(pipe.sessionUpdate({ sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: text("late") } })).rejects.toThrow(/closed/);
  });
});

describe("the v2 bridge's plain sends", () => {
  it("reach the runtime's writer as written, or rejected once the client's stream fails (its update queue then stops, as over v1)", async () => {
    let fail = false;
    const written: Array<{ id?: unknown; params?: { update?: { sessionUpdate?: string } } }> = [];
    const answered = new Map<unknown, () => void>();
    const toAgent = new TransformStream<V2.AnyMessage, V2.AnyMessage>();
    const fromAgent = new WritableStream<V2.AnyMessage>({
      write(message) {
        if (fail) throw new Error("the client is gone");
        written.push(message as (typeof written)[number]);
        answered.get((message as { id?: unknown }).id)?.();
      },
    });
    let sink!: SessionUpdateSink;
    serveV2({ readable: toAgent.readable, writable: fromAgent }, (runtime, sessionUpdates) => {
      sink = sessionUpdates;
      const app = V1.agent()
        .onRequest(V1.methods.agent.initialize, () => ({ protocolVersion: 1, agentCapabilities: {} }))
        .onRequest(V1.methods.agent.session.new, () => ({ sessionId: "s" }))
        .connect(runtime);
      return { closed: app.closed.then(() => undefined), close: async () => app.close() };
    }, silentLogger);
    const input = toAgent.writable.getWriter();
    const request = async (id: number, method: string, params: unknown): Promise<void> => {
      const answer = new Promise<void>((resolve) => answered.set(id, resolve));
      await input.write({ jsonrpc: "2.0", id, method, params } as V2.AnyMessage);
      await answer;
    };
    await request(1, "initialize", { protocolVersion: 2, info: { name: "t", version: "1" }, capabilities: {} });
    await request(2, "session/new", { cwd: "/tmp" });
    const chunk = (t: string) => sink({ sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: t } } });
    await chunk("a");
    expect(written.at(-1)?.params?.update?.sessionUpdate).toBe("agent_message_chunk");
    fail = true;
    await expect(chunk("b")).rejects.toThrow(/gone/);
    await expect(chunk("c")).rejects.toThrow();
  });
});
