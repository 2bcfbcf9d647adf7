import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RawRpc, bin, cleanEnv, openServe, writeScript, type ServeProcess } from "./serve-support.js";
import { tempDir } from "./support.js";
import { runCli } from "../../support/cli.js";

describe("agentkit-acp serve: bad input over stdio gets the right JSON-RPC error and the process keeps serving", () => {
  const dir = tempDir("agentkit-serve-errors-");
  let proc: ServeProcess;
  let rpc: RawRpc;

  beforeAll(() => {
    const scriptPath = writeScript(dir.path, [{ text: "fine" }]);
    proc = openServe(["--model", `scripted:${scriptPath}`], { cwd: dir.path, process: true });
    rpc = new RawRpc(proc);
  });
  afterAll(async () => {
    await proc.end();
    dir.remove();
  });

  it("a prompt before initialize → -32600", async () => {
    rpc.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "session/prompt", params: { sessionId: "x", prompt: [{ type: "text", text: "hi" }] } }));
    expect((await rpc.response(1)).error).toMatchObject({ code: -32600 });
    rpc.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "initialize", params: { protocolVersion: 1 } }));
    expect((await rpc.response(2)).result).toMatchObject({ protocolVersion: 1 });
  });

  it("a line that is not JSON → -32700 with id null", async () => {
    rpc.send("this is { not json");
    expect((await rpc.response(null)).error).toMatchObject({ code: -32700 });
  });

  it("wrong param types → -32602", async () => {
    rpc.send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "session/new", params: { cwd: 42, mcpServers: "none" } }));
    expect((await rpc.response(3)).error).toMatchObject({ code: -32602 });
  });

  it("an unknown method → -32601", async () => {
    rpc.send(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "session/frobnicate", params: {} }));
    expect((await rpc.response(4)).error).toMatchObject({ code: -32601 });
  });

  it("an unknown session → -32002 naming the id", async () => {
    rpc.send(JSON.stringify({ jsonrpc: "2.0", id: 5, method: "session/prompt", params: { sessionId: "sess_nope", prompt: [{ type: "text", text: "hi" }] } }));
    const { error } = await rpc.response(5);
    expect(error).toMatchObject({ code: -32002, data: { sessionId: "sess_nope" } });
    expect(error?.message).toContain("sess_nope");
  });

  it("a relative cwd → -32602 saying it must be absolute", async () => {
    rpc.send(JSON.stringify({ jsonrpc: "2.0", id: 6, method: "session/new", params: { cwd: "relative/dir", mcpServers: [] } }));
    const { error } = await rpc.response(6);
    expect(error).toMatchObject({ code: -32602 });
    expect(error?.message).toContain("absolute");
  });

  it("an unsupported content block → -32602 naming the block type; the session still works", async () => {
    rpc.send(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "session/new", params: { cwd: dir.path, mcpServers: [] } }));
    const { result } = await rpc.response(7);
    const sessionId = (result as { sessionId: string }).sessionId;
    rpc.send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 8,
        method: "session/prompt",
        params: { sessionId, prompt: [{ type: "text", text: "look" }, { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }] },
      }),
    );
    const { error } = await rpc.response(8);
    expect(error).toMatchObject({ code: -32602, data: { type: "image", index: 1 } });
    expect(error?.message).toContain('"image"');
    rpc.send(JSON.stringify({ jsonrpc: "2.0", id: 9, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "hi" }] } }));
    expect((await rpc.response(9)).result).toMatchObject({ stopReason: "end_turn" });
  });

  it("after all of that stdout is still pure JSON-RPC and the process is alive", () => {
    expect(proc.child.exitCode).toBeNull();
    for (const line of proc.stdoutLines()) expect(line).toMatchObject({ jsonrpc: "2.0" });
  });
});

describe("agentkit-acp serve command line", () => {
  const run = (args: string[], env = cleanEnv()) => spawnSync(process.execPath, [bin, "serve", ...args], { encoding: "utf8", env, input: "", timeout: 30_000 });
  // Flag checks need no process of their own (in-process: exit code and output are the point).
  const check = (args: string[]) => runCli(["serve", ...args], { cwd: process.cwd(), env: cleanEnv() });

  it.each([
    [["--approve", "sometimes"], "--approve must be one of ask, auto-reads, auto-all, deny"],
    [["--max-sessions", "zero"], "--max-sessions must be a positive integer"],
    [["--log-level", "loud"], "--log-level must be one of"],
    [["--frobnicate"], "unknown option --frobnicate"],
    [["--base-url", "not a url"], "--base-url must be a URL"],
  ])("%j → a message on stderr, exit 2, stdout untouched", async (args, message) => {
    const r = await check(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(message);
  });

  // Model specs are resolved when serving starts (in-process too).
  it.each([
    [["--model", "nosuchprovider:x"], "unknown provider 'nosuchprovider'"],
    [["--model", "scripted:/nonexistent/script.json"], "cannot read the scripted model file"],
  ])("%j → a message on stderr, exit 2, stdout untouched", async (args, message) => {
    const r = await check(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(message);
  });

  it("--help lists every option and env variable, exit 0", async () => {
    const r = await check(["--help"]);
    expect(r.code).toBe(0);
    for (const word of ["--model", "--base-url", "--approve", "--max-sessions", "--log-level", "AGENTKIT_MODEL", "AGENTKIT_BASE_URL"]) expect(r.stdout).toContain(word);
  });

  it("with stdin already closed it exits 0 without writing to stdout", () => {
    const r = run([]);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("demo");
  });
});
