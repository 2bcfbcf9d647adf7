import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recoverId } from "../../src/acp/agent/line-guard.js";
import { RawRpc, openServe, writeScript, type ServeProcess } from "../acp/agent/serve-support.js";
import { tempDir } from "../acp/agent/support.js";

const LIMIT = 64 * 1024;
const req = (id: number | string, method: string, params: unknown): string => JSON.stringify({ jsonrpc: "2.0", id, method, params });

describe("robustness: hostile wire input to a real `serve` (issue 14 cases 3, 4, 5)", () => {
  const dir = tempDir("agentkit-robust-wire-");
  let proc: ServeProcess;
  let rpc: RawRpc;

  beforeAll(() => {
    const script = writeScript(dir.path, [{ text: "still here" }, { text: "again" }]);
    proc = openServe(["--model", `scripted:${script}`, "--max-message-bytes", String(LIMIT)], { cwd: dir.path, process: true });
    rpc = new RawRpc(proc);
  });
  afterAll(async () => {
    await proc.end();
    dir.remove();
  });

  it("case 5: initialize and session/new written back to back are both served, in order", async () => {
    proc.child.stdin!.write(`${req(1, "initialize", { protocolVersion: 1 })}\n${req(2, "session/new", { cwd: dir.path, mcpServers: [] })}\n`);
    expect((await rpc.response(1)).result).toMatchObject({ protocolVersion: 1 });
    const second = await rpc.response(2);
    expect(second.error).toBeUndefined();
    expect(second.result).toMatchObject({ sessionId: expect.any(String) });
    const lines = proc.stdoutLines() as Array<{ id?: number }>;
    expect(lines.findIndex((l) => l.id === 1)).toBeLessThan(lines.findIndex((l) => l.id === 2));
  });

  const badPaths: Array<[string, (good: string) => Record<string, unknown>, string]> = [
    ["NUL byte in cwd", () => ({ cwd: "/tmp/a\u0000b", mcpServers: [] }), "cwd"],
    ["a 256-byte component in cwd", () => ({ cwd: `/tmp/${"x".repeat(256)}`, mcpServers: [] }), "cwd"],
    ["a 300-byte multi-byte component in cwd", () => ({ cwd: `/tmp/${"é".repeat(150)}`, mcpServers: [] }), "cwd"],
    ["NUL byte in additionalDirectories[1]", (good) => ({ cwd: good, additionalDirectories: [good, "/tmp/\u0000"], mcpServers: [] }), "additionalDirectories[1]"],
    ["a long component in additionalDirectories[0]", (good) => ({ cwd: good, additionalDirectories: [`/${"y".repeat(4096)}`], mcpServers: [] }), "additionalDirectories[0]"],
  ];
  let nextId = 100;
  for (const [name, params, field] of badPaths) {
    it(`case 3: ${name} → -32602 naming ${field}`, async () => {
      const id = nextId++;
      rpc.send(req(id, "session/new", params(dir.path)));
      const { error } = await rpc.response(id);
      expect(error?.code).toBe(-32602);
      expect(error?.message).toContain(`${field} `);
      expect(error?.data).toMatchObject({ field });
    });
  }

  it("case 3: session/load and session/list with a NUL byte in cwd → -32602 naming cwd", async () => {
    rpc.send(req(150, "session/load", { sessionId: "sess_x", cwd: "/a\u0000", mcpServers: [] }));
    const load = await rpc.response(150);
    expect(load.error).toMatchObject({ code: -32602, data: { field: "cwd" } });
    rpc.send(req(151, "session/list", { cwd: `/${"l".repeat(300)}` }));
    expect((await rpc.response(151)).error).toMatchObject({ code: -32602, data: { field: "cwd" } });
  });

  it("case 4: an oversized request gets an error reply with its id; the connection keeps serving", async () => {
    const huge = req(200, "session/new", { cwd: dir.path, mcpServers: [], _meta: { pad: "z".repeat(LIMIT * 3) } });
    // Written in pieces, as a pipe delivers it.
    for (let at = 0; at < huge.length; at += 16 * 1024) proc.child.stdin!.write(huge.slice(at, at + 16 * 1024));
    proc.child.stdin!.write("\n");
    const { error } = await rpc.response(200);
    expect(error).toMatchObject({ code: -32600, data: { maxMessageBytes: LIMIT } });
    expect(error?.message).toContain(String(LIMIT));
    rpc.send(req(201, "session/new", { cwd: dir.path, mcpServers: [] }));
    expect((await rpc.response(201)).result).toMatchObject({ sessionId: expect.any(String) });
    expect(proc.stderr).toContain("over the 65536-byte limit");
  });

  it("case 4: an oversized line whose id cannot be read gets -32600 with id null; a huge notification only a log line", async () => {
    rpc.send("x".repeat(LIMIT + 10));
    expect((await rpc.response(null)).error).toMatchObject({ code: -32600 });
    rpc.send(JSON.stringify({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s", pad: "q".repeat(LIMIT) } }));
    rpc.send(req(202, "session/new", { cwd: dir.path, mcpServers: [] }));
    expect((await rpc.response(202)).result).toMatchObject({ sessionId: expect.any(String) });
    const nullErrors = (proc.stdoutLines() as Array<{ id?: unknown; error?: unknown }>).filter((l) => l.id === null && l.error);
    expect(nullErrors).toHaveLength(1);
  });

  it("stdout stays pure JSON-RPC throughout", () => {
    for (const line of proc.stdoutLines()) expect(line).toMatchObject({ jsonrpc: "2.0" });
  });
});

describe("recoverId reads the top-level id only", () => {
  const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
  it("finds ids before and after params, skipping nested ones and strings", () => {
    expect(recoverId(enc('{"jsonrpc":"2.0","id":7,"method":"x","params":{"a'))).toBe(7);
    expect(recoverId(enc('{"method":"x","params":{"id":1,"s":"\\"id\\":2"},"id":"abc"'))).toBe("abc");
    expect(recoverId(enc('{"method":"x","params":{"id":1,"text":"aaaa'))).toBeUndefined();
    expect(recoverId(enc("not json at all"))).toBeUndefined();
  });
});
