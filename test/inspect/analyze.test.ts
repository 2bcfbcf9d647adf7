import { describe, expect, it } from "vitest";
import { Analyzer } from "../../src/inspect/analyze.js";
import { redactMessage, redactSecretsIn, REDACTED } from "../../src/core/redact.js";
import { diffLines, normalize } from "../../src/inspect/index.js";

const init = (a: Analyzer, agentCaps: object = {}, clientCaps: object = {}): void => {
  a.add(1, "client", { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1, clientCapabilities: clientCaps } });
  a.add(2, "agent", { jsonrpc: "2.0", id: 0, result: { protocolVersion: 1, agentCapabilities: agentCaps } });
  a.add(3, "client", { jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: "/w", mcpServers: [] } });
  a.add(4, "agent", { jsonrpc: "2.0", id: 1, result: { sessionId: "s1" } });
};
const rules = (a: Analyzer, seq: number): string[] => a.entries[seq - 1]?.issues.map((i) => i.rule) ?? [];

describe("inspect analyzer", () => {
  it("pairs requests with responses and measures latency", () => {
    const a = new Analyzer();
    init(a);
    expect(a.entries[0]).toMatchObject({ kind: "request", pairSeq: 2, latencyMs: 1 });
    expect(a.entries[3]).toMatchObject({ kind: "response", method: "session/new", sessionId: "s1", pairSeq: 3 });
    expect(a.entries.every((e) => e.issues.length === 0)).toBe(true);
  });

  it("flags schema violations with the SDK's zod schemas", () => {
    const a = new Analyzer();
    init(a);
    a.add(5, "client", { jsonrpc: "2.0", id: 2, method: "session/prompt", params: { sessionId: "s1", prompt: "not an array" } });
    a.add(6, "agent", { jsonrpc: "2.0", method: "session/update", params: { sessionId: "s1", update: { sessionUpdate: "no_such_update" } } });
    a.add(7, "agent", { jsonrpc: "2.0", id: 2, result: { stopReason: "finished" } });
    a.add(8, "agent", "not json at all");
    expect(rules(a, 5)).toContain("schema");
    expect(a.entries[4]?.issues[0]?.detail).toMatch(/session\/prompt params: prompt/);
    expect(rules(a, 6)).toContain("schema");
    expect(rules(a, 7)).toContain("schema");
    expect(a.entries[6]?.issues[0]?.detail).toMatch(/result: stopReason/);
    expect(rules(a, 8)).toEqual(["jsonrpc"]);
  });

  it("flags protocol-order mistakes with the rule broken", () => {
    const a = new Analyzer();
    a.add(0, "client", { jsonrpc: "2.0", id: 9, method: "session/new", params: { cwd: "/w", mcpServers: [] } });
    expect(rules(a, 1)).toContain("order/before-initialize");
    init(a, { promptCapabilities: {} }, { fs: { readTextFile: false } });
    a.add(5, "agent", { jsonrpc: "2.0", id: 77, result: {} });
    expect(rules(a, 6)).toEqual(["order/unknown-response-id"]);
    a.add(6, "client", { jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId: "s1", prompt: [{ type: "image", data: "", mimeType: "image/png" }] } });
    expect(rules(a, 7)).toContain("capability/promptCapabilities.image");
    a.add(7, "agent", { jsonrpc: "2.0", id: 5, method: "fs/read_text_file", params: { sessionId: "s1", path: "/w/a" } });
    expect(rules(a, 8)).toContain("capability/fs.readTextFile");
    a.add(8, "agent", { jsonrpc: "2.0", id: 3, result: { stopReason: "end_turn" } });
    a.add(9, "agent", { jsonrpc: "2.0", method: "session/update", params: { sessionId: "s1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "late" } } } });
    expect(rules(a, 10)).toEqual(["order/update-after-prompt-answer"]);
    a.add(10, "agent", { jsonrpc: "2.0", method: "session/update", params: { sessionId: "s1", update: { sessionUpdate: "session_info_update", title: "t" } } });
    expect(rules(a, 11)).toEqual([]);
    a.add(11, "client", { jsonrpc: "2.0", id: 4, method: "session/load", params: { sessionId: "s1", cwd: "/w", mcpServers: [] } });
    expect(rules(a, 12)).toContain("capability/loadSession");
  });

  it("redacts MCP env/header values and authenticate params, nothing else", () => {
    const m = { jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: "/w", mcpServers: [{ name: "x", command: "c", args: ["a"], env: [{ name: "TOKEN", value: "s3cret" }] }, { type: "http", name: "h", url: "u", headers: [{ name: "Authorization", value: "Bearer s3cret" }] }] } };
    const r = JSON.stringify(redactMessage(m));
    expect(r).not.toContain("s3cret");
    expect(r).toContain("TOKEN");
    expect(r).toContain(REDACTED);
    const auth = redactMessage({ jsonrpc: "2.0", id: 2, method: "authenticate", params: { methodId: "key", apiKey: "s3cret" } });
    expect(auth).toEqual({ jsonrpc: "2.0", id: 2, method: "authenticate", params: { methodId: "key", apiKey: REDACTED } });
    const prompt = { jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId: "s", prompt: [] } };
    expect(redactMessage(prompt)).toBe(prompt);
  });

  it("redacts secret-shaped text in every string of a message, copying only what changed", () => {
    const key = "sk-abcdefghijklmnopqrstuvwx";
    const m = { jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId: "s", prompt: [{ type: "text", text: `use ${key} please` }, { type: "text", text: "plain" }] } };
    const r = redactSecretsIn(m);
    expect(JSON.stringify(r)).not.toContain(key);
    expect(r.params.prompt[0]?.text).toBe(`use ${REDACTED} please`);
    expect(r.params.prompt[1]).toBe(m.params.prompt[1]);
    expect(m.params.prompt[0]?.text).toContain(key); // the wire's message is not changed
    const clean = { jsonrpc: "2.0", id: 4, result: { stopReason: "end_turn", n: 1, ok: true, none: null } };
    expect(redactSecretsIn(clean)).toBe(clean);
    expect(redactSecretsIn(`Bearer ${key}`)).toBe(`Bearer ${REDACTED}`);
    let deep: unknown = key;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(JSON.stringify(redactSecretsIn(deep))).not.toContain(key); // bounded depth, no stack overflow
  });

  it("normalizes ids and timestamps for the replay diff", () => {
    const a = normalize([{ id: 4, result: { sessionId: "sess_a", updatedAt: "2026-01-01T00:00:00Z" } }]);
    const b = normalize([{ id: 9, result: { sessionId: "sess_b", updatedAt: "2027-02-02T00:00:00Z" } }]);
    expect(a).toEqual(b);
    // Content still counts: update text, nested option ids.
    const upd = (text: string): unknown => ({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } } });
    expect(normalize([upd("hello")])).not.toEqual(normalize([upd("bye")]));
    expect(normalize([{ id: 1, result: { configOptions: [{ id: "model" }] } }])).not.toEqual(normalize([{ id: 1, result: { configOptions: [{ id: "effort" }] } }]));
    expect(normalize([{ id: 1, result: { startedAt: 5, title: "x" } }])).toEqual(normalize([{ id: 2, result: { startedAt: 9, title: "x" } }]));
    expect(diffLines(["a", "b", "c"], ["a", "c", "d"])).toEqual([
      { op: "same", text: "a" },
      { op: "removed", text: "b" },
      { op: "same", text: "c" },
      { op: "added", text: "d" },
    ]);
  });
});
