import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import {
  ClientPermissionPolicy,
  createFileSystemHost,
  createTerminalHost,
  type FileSystemHostService,
  type HostSessionInfo,
  type TerminalHostService,
} from "../../../src/acp/client/index.js";
import { startClient, tempDir } from "./helpers.js";

/** Records what the client forwards; implements just enough to answer. */
function fakeFs(canRead: boolean, canWrite: boolean) {
  const calls: { method: string; params: unknown; session: HostSessionInfo }[] = [];
  const service: FileSystemHostService = {
    canRead,
    canWrite,
    readTextFile: async (params, session) => (calls.push({ method: "read", params, session }), { content: `content of ${params.path}` }),
    writeTextFile: async (params, session) => (calls.push({ method: "write", params, session }), {}),
  };
  return { service, calls };
}

function fakeTerminal() {
  const log: string[] = [];
  const service: TerminalHostService = {
    create: async (p: acp.CreateTerminalRequest, s) => (log.push(`create ${p.command} in ${s.cwd}`), { terminalId: "t1" }),
    output: async () => (log.push("output"), { output: "hi\n", truncated: false, exitStatus: { exitCode: 0 } }),
    waitForExit: async () => (log.push("wait"), { exitCode: 0 }),
    kill: async () => (log.push("kill"), {}),
    release: async () => (log.push("release"), {}),
    releaseSession: async (id) => void log.push(`releaseSession ${id}`),
    dispose: async () => void log.push("dispose"),
  };
  return { service, log };
}

async function agentCaps(session: { prompt(t: string): Promise<{ text: string }> }): Promise<acp.ClientCapabilities> {
  return (JSON.parse((await session.prompt("stats")).text) as { clientCapabilities: acp.ClientCapabilities }).clientCapabilities;
}

describe("host services behind the client", () => {
  it("advertises nothing when no host services are given", async () => {
    const client = await startClient();
    const caps = await agentCaps(await client.newSession());
    expect(caps.fs).toEqual({ readTextFile: false, writeTextFile: false });
    expect(caps.terminal).toBe(false);
  });

  it("advertises exactly canRead/canWrite and forwards fs requests with the session's roots", async () => {
    const dir = tempDir();
    const fs = fakeFs(true, false);
    const client = await startClient([], undefined, { hostServices: { fileSystem: fs.service }, additionalDirectories: [dir] });
    const session = await client.newSession();
    expect((await agentCaps(session)).fs).toEqual({ readTextFile: true, writeTextFile: false });
    expect((await session.prompt("readfile /tmp/a.txt")).text).toBe("read: content of /tmp/a.txt");
    expect(fs.calls[0]).toMatchObject({
      method: "read",
      params: { sessionId: session.sessionId, path: "/tmp/a.txt" },
      session: { sessionId: session.sessionId, cwd: client.config.cwd, additionalDirectories: [dir] },
    });
    // Not offered → refused, never forwarded (the agent's request fails, the turn errors out).
    await expect(session.prompt("writefile /tmp/a.txt data")).rejects.toMatchObject({ code: -32601 });
    expect(fs.calls.filter((c) => c.method === "write")).toEqual([]);
  });

  it("refuses host requests for a session id the client does not know (-32002)", async () => {
    const fs = fakeFs(true, true);
    const client = await startClient([], undefined, { hostServices: { fileSystem: fs.service } });
    const session = await client.newSession();
    expect((await session.prompt("foreign")).text).toBe("foreign: error -32002");
    expect(fs.calls).toEqual([]);
  });

  it("forwards terminal requests; releases the session's terminals on close and disposes on client close", async () => {
    const terminal = fakeTerminal();
    const client = await startClient([], undefined, { hostServices: { terminal: terminal.service } });
    const session = await client.newSession();
    expect((await agentCaps(session)).terminal).toBe(true);
    expect((await session.prompt("term echo hi")).text).toBe("terminal t1 exit 0: hi\n");
    expect(terminal.log).toEqual([`create echo hi in ${client.config.cwd}`, "wait", "output", "release"]);
    await session.close();
    expect(terminal.log.at(-1)).toBe(`releaseSession ${session.sessionId}`);
    await client.close();
    expect(terminal.log.at(-1)).toBe("dispose");
  });

  it("works with the real confined fs and terminal hosts, gated by the same permission policy", async () => {
    const root = tempDir();
    writeFileSync(join(root, "in.txt"), "inside");
    const policy = new ClientPermissionPolicy({ rules: [{ kind: ["read", "edit"], insideRoots: true, action: "allow" }, { kind: "execute", command: "echo", action: "allow" }] });
    const hostServices = {
      fileSystem: createFileSystemHost({ access: "read-write", authorize: policy.hostAuthorizer() }),
      terminal: createTerminalHost({ authorize: policy.hostAuthorizer() }),
    };
    const client = await startClient([], policy, { cwd: root, hostServices });
    const session = await client.newSession();
    expect((await session.prompt(`readfile ${join(root, "in.txt")}`)).text).toBe("read: inside");
    expect((await session.prompt(`writefile ${join(root, "out.txt")} hello there`)).text).toBe("written");
    expect(readFileSync(join(root, "out.txt"), "utf8")).toBe("hello there");
    await expect(session.prompt("readfile /etc/hostname")).rejects.toMatchObject({ code: -32602 });
    expect((await session.prompt("term echo from-terminal")).text).toMatch(/exit 0: from-terminal/);
    await expect(session.prompt("term rm -rf /nonexistent-dir")).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/denied/) });
  });
});
