import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import type { ClientCapabilities } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { AcpClientHandle, ClientFileOperations, ClientTerminalCommandRunner } from "../../../src/acp/agent/index.js";
import { createFileSystemHost, createTerminalHost, type HostSessionInfo } from "../../../src/acp/client/index.js";
import type { CommandRequest } from "../../../src/tools/index.js";
import { memoryPipes } from "./support.js";
import { Audit, Workspace, eventually, pidAlive } from "./services-support.js";

// ClientFileOperations / ClientTerminalCommandRunner against the real client hosts, over an
// in-memory ACP connection with real framing (official SDK on both sides).

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function connect(capabilities: ClientCapabilities, fsAccess: "read" | "read-write" = "read-write", options: { stuckKill?: boolean } = {}) {
  const ws = new Workspace("agentkit-client-ops-");
  const audit = new Audit();
  const session: HostSessionInfo = { sessionId: "s1", cwd: ws.cwd, additionalDirectories: [] };
  const fs = createFileSystemHost({ access: fsAccess, onRequest: audit.hook });
  const terminal = createTerminalHost({ onRequest: audit.hook, killGraceMs: 500 });
  let handle: AcpClientHandle | undefined;
  // A client that never answers terminal/kill (answered at clean-up, so nothing is left pending).
  let answerKill: (value: acp.KillTerminalResponse) => void = () => undefined;
  const stuck = { promise: new Promise<acp.KillTerminalResponse>((resolve) => (answerKill = resolve)), resolve: (v: acp.KillTerminalResponse) => answerKill(v) };
  const pipes = memoryPipes();
  const agentConnection = acp
    .agent({ name: "ops-agent" })
    .onRequest(acp.methods.agent.initialize, ({ params, client }) => {
      handle = new AcpClientHandle(client, params.clientCapabilities ?? {});
      return { protocolVersion: 1, agentCapabilities: {}, authMethods: [] };
    })
    .connect(pipes.agent);
  const clientConnection = acp
    .client({ name: "host" })
    .onRequest(acp.methods.client.fs.readTextFile, ({ params, signal }) => fs.readTextFile(params, session, signal))
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params, signal }) => fs.writeTextFile(params, session, signal))
    .onRequest(acp.methods.client.terminal.create, ({ params, signal }) => terminal.create(params, session, signal))
    .onRequest(acp.methods.client.terminal.output, ({ params }) => terminal.output(params, session))
    .onRequest(acp.methods.client.terminal.waitForExit, ({ params, signal }) => terminal.waitForExit(params, session, signal))
    .onRequest(acp.methods.client.terminal.kill, ({ params }) => (options.stuckKill ? stuck.promise : terminal.kill(params, session)))
    .onRequest(acp.methods.client.terminal.release, ({ params }) => terminal.release(params, session))
    .connect(pipes.client);
  cleanups.push(
    () => ws.cleanup(),
    async () => {
      stuck.resolve({});
      await terminal.dispose();
      clientConnection.close();
      agentConnection.close();
    },
  );
  await clientConnection.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: capabilities });
  return { ws, audit, terminal, client: handle! };
}

const all: ClientCapabilities = { fs: { readTextFile: true, writeTextFile: true }, terminal: true };

function request(ws: Workspace, command: string, extra: Partial<CommandRequest> = {}): CommandRequest {
  return { command, cwd: ws.cwd, timeoutMs: 30_000, outputByteLimit: 64 * 1024, signal: new AbortController().signal, ...extra };
}

describe("ClientFileOperations", () => {
  it("reads (line/limit) and writes through the client; a missing file keeps the ENOENT code; a refusal names the editor", async () => {
    const { ws, audit, client } = await connect(all);
    const files = new ClientFileOperations(client, "s1");
    const path = ws.file("a.txt", "1\n2\n3\n4\n");
    expect(await files.readTextFile(path, { line: 2, limit: 2 })).toBe("2\n3\n");
    await files.writeTextFile(join(ws.cwd, "new/b.txt"), "written\n");
    expect(readFileSync(join(ws.cwd, "new/b.txt"), "utf8")).toBe("written\n");
    await expect(files.readTextFile(join(ws.cwd, "missing.txt"))).rejects.toMatchObject({ code: "ENOENT" });
    await expect(files.readTextFile(join(ws.root, "outside.txt"))).rejects.toThrow(/^the editor refused to read .*outside\.txt: /);
    expect(audit.kinds()).toEqual(["fs_read", "fs_write", "fs_read", "fs_read"]);
  });

  it("uses the client only for what it advertised: read-only client → writes stay local", async () => {
    const { ws, audit, client } = await connect({ fs: { readTextFile: true } }, "read");
    const files = new ClientFileOperations(client, "s1");
    const path = join(ws.cwd, "local.txt");
    await files.writeTextFile(path, "local\n");
    expect(existsSync(path)).toBe(true);
    expect(await files.readTextFile(path)).toBe("local\n");
    expect(audit.kinds()).toEqual(["fs_read"]);
  });
});

describe("ClientTerminalCommandRunner", () => {
  it("reports the terminal id, passes env and the byte limit (UTF-8 safe), returns exit status and releases the terminal", async () => {
    const { ws, audit, terminal, client } = await connect(all);
    const runner = new ClientTerminalCommandRunner(client, "s1");
    const seen: string[] = [];
    const result = await runner.run(request(ws, `printf 'é%.0s' $(seq 1 500); echo " $GREETING"; exit 4`, { env: { GREETING: "hi" }, outputByteLimit: 101, onTerminal: (id) => seen.push(id) }));
    expect(seen).toEqual([result.terminalId]);
    expect(result).toMatchObject({ exitCode: 4, signal: null, timedOut: false, truncated: true });
    expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(101);
    expect(result.output.endsWith("é hi\n")).toBe(true);
    expect(result.output).not.toContain("\uFFFD");
    expect(audit.events.filter((e) => e.terminalId === result.terminalId).map((e) => e.kind)).toEqual(["terminal_create", "terminal_exit", "terminal_wait", "terminal_output", "terminal_release"]);
    expect(terminal.count("s1")).toBe(0);
  });

  it("with outputPollMs streams new output to onOutput while the command runs", async () => {
    const { ws, client } = await connect(all);
    const runner = new ClientTerminalCommandRunner(client, "s1", { outputPollMs: 20 });
    const chunks: string[] = [];
    const result = await runner.run(request(ws, "for i in 1 2 3; do echo line$i; sleep 0.3; done", { onOutput: (c) => chunks.push(c) }));
    expect(chunks.join("")).toBe("line1\nline2\nline3\n");
    expect(chunks.length).toBeGreaterThan(1);
    expect(result.output).toBe("line1\nline2\nline3\n");
  });

  it("abort kills the command (whole group) and releases the terminal; nothing keeps running", async () => {
    const { ws, audit, terminal, client } = await connect(all);
    const runner = new ClientTerminalCommandRunner(client, "s1");
    const controller = new AbortController();
    const pidFile = join(ws.cwd, "pid");
    const running = runner.run(request(ws, `sleep 600 & echo $! > ${pidFile}; wait`, { signal: controller.signal }));
    await eventually(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "", "the background sleep to start");
    const sleeper = Number(readFileSync(pidFile, "utf8").trim());
    controller.abort();
    const result = await running;
    expect(result.exitCode).toBeNull();
    expect(result.signal).toBe("SIGTERM");
    expect(audit.kinds()).toEqual(expect.arrayContaining(["terminal_kill", "terminal_release"]));
    expect(terminal.count()).toBe(0);
    await eventually(() => !pidAlive(sleeper), "the background sleep to end");
  });

  it("a client that never answers terminal/kill cannot hold the tool: the runner goes on after killWaitMs and still releases", async () => {
    const { ws, audit, terminal, client } = await connect(all, "read-write", { stuckKill: true });
    const runner = new ClientTerminalCommandRunner(client, "s1", { killWaitMs: 1000 });
    const controller = new AbortController();
    let terminalId = "";
    const running = runner.run(request(ws, "echo begun; sleep 600", { signal: controller.signal, onTerminal: (id) => (terminalId = id) }));
    await eventually(() => terminalId !== "", "the terminal");
    // Wait (polling the host, yielding to I/O) until the command has printed.
    const deadline = Date.now() + 15_000;
    for (let seen = ""; !seen.includes("begun"); await new Promise((resolve) => setTimeout(resolve, 20))) {
      if (Date.now() > deadline) throw new Error("the command did not print");
      seen = (await terminal.output({ sessionId: "s1", terminalId }, { sessionId: "s1", cwd: ws.cwd, additionalDirectories: [] })).output;
    }
    controller.abort();
    const result = await running; // settles although terminal/kill is never answered
    expect(result.output).toContain("begun");
    expect(result.exitCode).toBeNull();
    await eventually(() => audit.kinds().includes("terminal_release") && terminal.count() === 0, "the release to end the command");
  });

  it("an already aborted request creates no terminal", async () => {
    const { ws, audit, client } = await connect(all);
    const controller = new AbortController();
    controller.abort();
    const result = await new ClientTerminalCommandRunner(client, "s1").run(request(ws, "echo no", { signal: controller.signal }));
    expect(result).toMatchObject({ output: "", exitCode: null, timedOut: false });
    expect(audit.events).toEqual([]);
  });
});
