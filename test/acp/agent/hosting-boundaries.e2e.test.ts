import { existsSync, mkdirSync, statSync, symlinkSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startListening, type ListeningServe, connectOver } from "./http-support.js";
import { cleanEnv, connectServe, writeScript } from "./serve-support.js";
import { tempDir, textOf } from "./support.js";
import { runCli } from "../../support/cli.js";
import { requireWorkspaceRoot } from "../../../src/cli/serve-listen.js";
import { sandboxOrSkip } from "../../support/sandbox-engine.js";

const engine = await sandboxOrSkip("serve --listen's hosting boundaries");

// Issue #22, the attacks a client holding the token tries against `serve --listen` (and stdio where
// the rule holds on every transport), repeated through the real CLI: each must fail, and what the
// owner legitimately does must still work.

const init = { protocolVersion: 1, clientCapabilities: {} };
const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A loopback web server that counts requests and answers 500 with a body that must never reach a client. */
async function internalServer(): Promise<{ url: string; requests: () => number; server: Server }> {
  let requests = 0;
  const server = createServer((req, res) => {
    requests += 1;
    req.resume();
    res.writeHead(500, { "Content-Type": "text/plain" }).end("INTERNAL-SECRET-BODY db=postgres://admin:hunter2@10.0.0.5");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/mcp`, requests: () => requests, server };
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** The request is refused with -32602 whose message names `field` and matches `message`. */
async function expectInvalid(request: Promise<unknown>, field: string, message: RegExp): Promise<void> {
  const error = (await request.then(
    () => undefined,
    (e: unknown) => e,
  )) as { code?: number; message?: string } | undefined;
  expect(error, `${field}: the request must be refused`).toMatchObject({ code: -32602 });
  expect(error?.message).toMatch(message);
  expect(error?.message).toContain(field);
}

describe.skipIf(!engine.available).each(["http", "ws"] as const)("serve --listen over %s: a client stays inside its workspace, runs no command, fetches nothing internal, cannot raise the operator's mode", (transport) => {
  let dir: { path: string; remove(): void };
  let root: string;
  let proc: ListeningServe;
  const outside = (): string => join(dir.path, "outside");

  beforeAll(async () => {
    dir = tempDir("agentkit-bounds-");
    root = join(dir.path, "workspaces");
    mkdirSync(outside());
    const script = writeScript(dir.path, [{ toolCall: { name: "write_file", input: { path: "pwned.txt", content: "x" } } }, { echo: "last_tool_result" }]);
    proc = startListening(["--model", `scripted:${script}`, "--no-persist", "--workspace-root", root, "--approve", "deny", "--mode", "read-only"], { cwd: dir.path });
    await proc.url;
  }, 30_000);
  afterAll(async () => {
    await proc.kill();
    dir.remove();
  });

  async function connect() {
    const { agent, client, connection } = connectOver(transport, await proc.url);
    cleanups.push(() => connection.close());
    await agent.request(acp.methods.agent.initialize, init);
    return { agent, client };
  }

  it("cwd /proc/self, a directory outside DIR/<principal>/ (by name or through a symlink) and such additionalDirectories are -32602 naming the field; the workspace is made 0700", async () => {
    const { agent } = await connect();
    await expectInvalid(agent.request(acp.methods.agent.session.new, { cwd: "/proc/self", mcpServers: [] }), "cwd", /outside your workspace|never a workspace/);
    await expectInvalid(agent.request(acp.methods.agent.session.new, { cwd: outside(), mcpServers: [] }), "cwd", /outside your workspace/);
    const home = join(root, "default");
    expect(statSync(home).mode & 0o777).toBe(0o700);
    const link = join(home, `escape-${transport}`);
    symlinkSync(outside(), link);
    await expectInvalid(agent.request(acp.methods.agent.session.new, { cwd: link, mcpServers: [] }), "cwd", /outside your workspace/);
    await expectInvalid(agent.request(acp.methods.agent.session.new, { cwd: home, additionalDirectories: [outside()], mcpServers: [] }), "additionalDirectories[0]", /outside your workspace/);
    // The owner's own workspace and a directory inside it work.
    const sub = join(home, `project-${transport}`);
    mkdirSync(sub);
    const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: sub, additionalDirectories: [home], mcpServers: [] });
    expect(sessionId).toMatch(/\S/);
  });

  it("a stdio MCP server named in session/new is refused (-32602 naming mcpServers[0]) and its command never runs", async () => {
    const { agent } = await connect();
    const marker = join(dir.path, `ran-${transport}`);
    const server = { name: "evil", command: "/bin/sh", args: ["-c", `touch '${marker}'`], env: [] };
    await expectInvalid(agent.request(acp.methods.agent.session.new, { cwd: join(root, "default"), mcpServers: [server] }), "mcpServers[0]", /stdio MCP server/);
    expect(existsSync(marker)).toBe(false);
  });

  it("an http MCP URL to a loopback server is refused (-32602 naming mcpServers[0]) and the server sees no request", async () => {
    const internal = await internalServer();
    cleanups.push(() => closeServer(internal.server));
    const { agent } = await connect();
    for (const url of [internal.url, internal.url.replace("127.0.0.1", "localhost")]) {
      await expectInvalid(agent.request(acp.methods.agent.session.new, { cwd: join(root, "default"), mcpServers: [{ type: "http", name: "internal", url, headers: [] }] }), "mcpServers[0]", /non-public address/);
    }
    expect(internal.requests()).toBe(0);
  });

  it("under --approve deny --mode read-only: only read-only is offered; set_mode auto-edit / ask and /mode auto-edit are refused naming the ceiling, and the write does not happen", async () => {
    const { agent, client } = await connect();
    const cwd = join(root, "default", `ceiling-${transport}`);
    mkdirSync(cwd);
    const created = await agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    expect(created.modes).toEqual({ currentModeId: "read-only", availableModes: [expect.objectContaining({ id: "read-only" })] });
    for (const modeId of ["auto-edit", "ask"]) {
      await expect(agent.request(acp.methods.agent.session.setMode, { sessionId: created.sessionId, modeId })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining(`mode "${modeId}" is not allowed: the operator's ceiling is read-only (--approve deny --mode read-only)`) as unknown,
      });
    }
    const slash = await agent.request(acp.methods.agent.session.prompt, { sessionId: created.sessionId, prompt: [{ type: "text", text: "/mode auto-edit" }] });
    expect(slash.stopReason).toBe("end_turn");
    expect(textOf(client.updates(created.sessionId), "agent_message_chunk")).toContain("not allowed: the operator's ceiling is read-only");
    const turn = await agent.request(acp.methods.agent.session.prompt, { sessionId: created.sessionId, prompt: [{ type: "text", text: "write pwned.txt" }] });
    expect(turn.stopReason).toBe("end_turn");
    expect(existsSync(join(cwd, "pwned.txt"))).toBe(false);
    expect(textOf(client.updates(created.sessionId), "agent_message_chunk")).toContain("Not permitted: the session is read-only");
    expect(client.updates(created.sessionId).some((u) => u.sessionUpdate === "current_mode_update")).toBe(false);
    // The mode at the ceiling is still the client's to pick.
    await agent.request(acp.methods.agent.session.setMode, { sessionId: created.sessionId, modeId: "read-only" });
  });
});

describe("serve on stdio: a failing remote MCP server's body is never echoed; /proc is never a workspace", () => {
  it("an MCP server answering 500 is reported by status only, its body kept from the client; session/new {cwd: /proc/self} is -32602 naming cwd", async () => {
    const dir = tempDir("agentkit-bounds-stdio-");
    cleanups.push(() => dir.remove());
    const internal = await internalServer();
    cleanups.push(() => closeServer(internal.server));
    const script = writeScript(dir.path, [{ toolCall: { name: "read_file", input: { path: "environ" } } }, { echo: "last_tool_result" }]);
    const { proc, client, connection, agent } = connectServe(["--model", `scripted:${script}`, "--no-persist", "--approve", "auto-all"], {
      cwd: dir.path,
      env: cleanEnv({ AGENTKIT_ACP_TOKEN: "stdio-secret-token" }),
    });
    cleanups.push(async () => {
      connection.close();
      await proc.end();
    });
    await agent.request(acp.methods.agent.initialize, init);

    // On stdio the editor's own loopback MCP servers are allowed: this one is fetched, and fails.
    const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: dir.path, mcpServers: [{ type: "http", name: "internal", url: internal.url, headers: [] }] });
    expect(internal.requests()).toBeGreaterThan(0);
    await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hi" }] });
    const text = textOf(client.updates(sessionId), "agent_message_chunk");
    expect(text).toContain('MCP server "internal" was not started');
    expect(text).toContain("HTTP 500 (Internal Server Error)");
    expect(text).not.toContain("INTERNAL-SECRET-BODY");
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain("stdio-secret-token");

    // /proc (the server's environment, its token and keys) is never a workspace, on stdio too.
    await expectInvalid(agent.request(acp.methods.agent.session.new, { cwd: "/proc/self", mcpServers: [] }), "cwd", /is in \/proc, which is never a workspace/);
    await expectInvalid(agent.request(acp.methods.agent.session.new, { cwd: dir.path, additionalDirectories: ["/sys"], mcpServers: [] }), "additionalDirectories[0]", /never a workspace/);
  });
});

describe("serve flags: ceilings, MCP policy, workspace root", () => {
  it("contradictory or bad flags exit 2 saying what to fix; --listen with several principals needs --workspace-root", async () => {
    const run = (args: string[]) => runCli(["serve", "--model", "demo", ...args], { cwd: process.cwd(), env: cleanEnv() });
    const deny = await run(["--approve", "deny", "--mode", "auto-edit"]);
    expect(deny.code).toBe(2);
    expect(deny.stderr).toContain("--mode auto-edit is above what --approve deny allows");
    const policy = await run(["--client-mcp", "some"]);
    expect(policy.code).toBe(2);
    expect(policy.stderr).toContain("--client-mcp must be one of none, http, all");
    const help = await runCli(["serve", "--help"], { cwd: process.cwd(), env: cleanEnv() });
    for (const flag of ["--workspace-root DIR", "--client-mcp none|http|all", "--client-mcp-private"]) expect(help.stdout).toContain(flag);
    expect(() => requireWorkspaceRoot(1, undefined)).not.toThrow();
    expect(() => requireWorkspaceRoot(2, undefined)).toThrow("--listen with 2 principals needs --workspace-root DIR");
    expect(() => requireWorkspaceRoot(Infinity, undefined)).toThrow("any number of principals");
    expect(() => requireWorkspaceRoot(3, "/srv/ws")).not.toThrow();
  });
});
