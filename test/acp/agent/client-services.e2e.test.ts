import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createFileSystemHost, createTerminalHost, type AcpClient, type AcpSession, type AcpSessionEvent, type HostServices } from "../../../src/acp/client/index.js";
import type { ScriptFileStep } from "../../../src/testing/scripted-script.js";
import { Audit, Workspace, eventually, pidAlive, startServeClient } from "./services-support.js";

// Our AcpClient (with real fs + terminal hosts) drives `agentkit-acp serve`: the agent's
// read/edit/shell tools go through the client's services when it offers them, locally otherwise.

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function workspace(): Workspace {
  const ws = new Workspace();
  cleanups.push(() => ws.cleanup());
  return ws;
}

async function serve(ws: Workspace, steps: ScriptFileStep[], hostServices: HostServices | undefined, extraArgs: string[] = []): Promise<AcpClient> {
  const client = await startServeClient(ws, ["--model", `scripted:${ws.script(steps)}`, "--approve", "auto-all", ...extraArgs], hostServices ? { hostServices } : {});
  cleanups.push(() => client.close());
  return client;
}

/** read notes.txt → echo it; then edit edit.txt, run a shell command, done. */
function toolScript(shell: string): ScriptFileStep[] {
  return [
    { toolCall: { name: "read_file", input: { path: "notes.txt" } } },
    { echo: "last_tool_result" },
    { toolCall: { name: "edit_file", input: { path: "edit.txt", old_text: "hello", new_text: "goodbye" } } },
    { toolCall: { name: "shell", input: { command: shell } } },
    { echo: "last_tool_result" },
  ];
}

function hosts(audit: Audit, buffers?: Record<string, string>): HostServices {
  return {
    fileSystem: createFileSystemHost({
      access: "read-write",
      onRequest: audit.hook,
      ...(buffers ? { buffers: { read: (path: string) => buffers[path] } } : {}),
    }),
    terminal: createTerminalHost({ onRequest: audit.hook }),
  };
}

async function collect(session: AcpSession, text: string): Promise<AcpSessionEvent[]> {
  const events: AcpSessionEvent[] = [];
  const stream = session.stream(text);
  for await (const event of stream) events.push(event);
  await stream.result;
  return events;
}

const updatesFor = (events: AcpSessionEvent[], title: RegExp) =>
  events.flatMap((e) => (e.type === "tool_call_update" && title.test(e.toolCall.title) ? [e] : []));

describe("serve uses the client's fs and terminal when offered", () => {
  it("read sees the unsaved buffer, the edit goes through fs/write_text_file (diff shown), the shell runs in a client terminal (terminal content)", async () => {
    const ws = workspace();
    const notes = ws.file("notes.txt", "disk content\n");
    const edit = ws.file("edit.txt", "hello world\n");
    const audit = new Audit();
    const client = await serve(ws, toolScript("echo out-$((1+1)); echo err >&2; exit 3"), hosts(audit, { [notes]: "BUFFER content (unsaved)\n" }));
    const session = await client.newSession();

    const first = await session.prompt("read the notes");
    expect(first.stopReason).toBe("end_turn");
    expect(first.text).toContain("BUFFER content (unsaved)"); // what the model got back
    expect(first.text).not.toContain("disk content");
    expect(audit.events.find((e) => e.kind === "fs_read" && e.path === notes)).toMatchObject({ verdict: "allowed", source: "buffer" });

    const events = await collect(session, "edit and run");
    // The edit: read and written through the client's fs; the file on disk changed by the host.
    expect(audit.events.filter((e) => e.path === edit).map((e) => `${e.kind}:${e.verdict}`)).toEqual(["fs_read:allowed", "fs_write:allowed"]);
    expect(ws.read("edit.txt")).toBe("goodbye world\n");
    const editDone = updatesFor(events, /^Edit /).at(-1)!;
    expect(editDone.toolCall.status).toBe("completed");
    expect(editDone.diffs).toEqual([{ type: "diff", path: edit, oldText: "hello world\n", newText: "goodbye world\n" }]);

    // The shell: terminal/create with the command line (the client runs it through a shell), then
    // wait, output, release — and terminal content while it runs and at the end.
    const create = audit.events.find((e) => e.kind === "terminal_create")!;
    expect(create).toMatchObject({ verdict: "allowed", command: "echo out-$((1+1)); echo err >&2; exit 3", args: [], path: ws.cwd });
    const terminalId = create.terminalId!;
    const lifecycle = audit.events.filter((e) => e.terminalId === terminalId).map((e) => e.kind);
    expect(lifecycle).toEqual(["terminal_create", "terminal_exit", "terminal_wait", "terminal_output", "terminal_release"]);
    const shellUpdates = updatesFor(events, /^Run /);
    const running = shellUpdates.find((u) => u.update.status === "in_progress" && u.terminalIds.length > 0);
    expect(running?.terminalIds).toEqual([terminalId]);
    const shellDone = shellUpdates.at(-1)!;
    expect(shellDone.toolCall.status).toBe("failed"); // exit 3
    expect(shellDone.terminalIds).toEqual([terminalId]);
    expect(shellDone.toolCall.rawOutput).toMatchObject({ exitCode: 3, timedOut: false, cancelled: false });
    // The model read the terminal's output (both streams) and the exit code.
    const reply = events.flatMap((e) => (e.type === "message_chunk" ? [e.text] : [])).join("");
    expect(reply).toContain("out-2");
    expect(reply).toContain("err");
    expect(reply).toContain("[exit code: 3]");
  });

  it("with services off (a client without hosts) the same prompts run locally: the disk is read and changed, the shell output is text", async () => {
    const ws = workspace();
    ws.file("notes.txt", "disk content\n");
    ws.file("edit.txt", "hello world\n");
    const client = await serve(ws, toolScript("echo out-$((1+1))"), undefined);
    const session = await client.newSession();
    expect((await session.prompt("read the notes")).text).toContain("disk content");
    const events = await collect(session, "edit and run");
    expect(ws.read("edit.txt")).toBe("goodbye world\n");
    expect(updatesFor(events, /^Edit /).at(-1)!.diffs).toHaveLength(1);
    const shellDone = updatesFor(events, /^Run /).at(-1)!;
    expect(shellDone.toolCall.status).toBe("completed");
    expect(shellDone.terminalIds).toEqual([]);
    expect(JSON.stringify(shellDone.toolCall.content)).toContain("out-2");
  });

  it("serve --local-tools ignores the hosts the client offers", async () => {
    const ws = workspace();
    const notes = ws.file("notes.txt", "disk content\n");
    ws.file("edit.txt", "hello world\n");
    const audit = new Audit();
    const client = await serve(ws, toolScript("echo local"), hosts(audit, { [notes]: "BUFFER\n" }), ["--local-tools"]);
    const session = await client.newSession();
    expect((await session.prompt("read")).text).toContain("disk content");
    const events = await collect(session, "edit and run");
    expect(ws.read("edit.txt")).toBe("goodbye world\n");
    expect(updatesFor(events, /^Run /).at(-1)!.terminalIds).toEqual([]);
    expect(audit.events).toEqual([]);
  });

  it("a client offering read only: reads go through fs/read_text_file, writes stay local", async () => {
    const ws = workspace();
    const notes = ws.file("notes.txt", "disk content\n");
    const edit = ws.file("edit.txt", "hello world\n");
    const audit = new Audit();
    const client = await serve(ws, toolScript("true"), {
      fileSystem: createFileSystemHost({ access: "read", onRequest: audit.hook, buffers: { read: (p) => (p === notes ? "BUFFER\n" : undefined) } }),
    });
    const session = await client.newSession();
    expect((await session.prompt("read")).text).toContain("BUFFER");
    await collect(session, "edit and run");
    expect(ws.read("edit.txt")).toBe("goodbye world\n");
    expect(audit.events.filter((e) => e.path === edit).map((e) => e.kind)).toEqual(["fs_read"]);
    expect(audit.events.some((e) => e.kind === "fs_write")).toBe(false);
  });

  it("paths outside the workspace are refused by the agent before the client is asked", async () => {
    const ws = workspace();
    const outside = join(ws.root, "outside.txt");
    const audit = new Audit();
    const client = await serve(
      ws,
      [
        { toolCall: { name: "read_file", input: { path: outside } } },
        { toolCall: { name: "write_file", input: { path: "../outside2.txt", content: "x" } } },
        { toolCall: { name: "shell", input: { command: "pwd", cwd: ws.root } } },
        { text: "done" },
      ],
      hosts(audit),
    );
    const session = await client.newSession();
    const result = await session.prompt("escape");
    expect(result.toolCalls.map((c) => c.status)).toEqual(["failed", "failed", "failed"]);
    expect(audit.events).toEqual([]);
  });

  it("cancel kills and releases the client terminal; the command's processes are gone", async () => {
    const ws = workspace();
    const audit = new Audit();
    const pidFile = join(ws.cwd, "pid");
    const client = await serve(ws, [{ toolCall: { name: "shell", input: { command: `sleep 600 & echo $! > ${pidFile}; wait` } } }, { text: "after" }], hosts(audit));
    const session = await client.newSession();
    const stream = session.stream("run forever");
    let terminalId: string | undefined;
    const handle = session.cancellationHandle();
    for await (const event of stream) {
      if (event.type === "tool_call_update" && event.terminalIds.length > 0 && terminalId === undefined) {
        terminalId = event.terminalIds[0];
        await eventually(() => (readPid(pidFile) ?? 0) > 0, "the command to start");
        await handle.cancel();
      }
    }
    expect((await stream.result).stopReason).toBe("cancelled");
    const sleeper = readPid(pidFile)!;
    const kinds = audit.events.filter((e) => e.terminalId === terminalId).map((e) => e.kind);
    expect(kinds).toContain("terminal_kill");
    expect(kinds.at(-1)).toBe("terminal_release");
    await eventually(() => !pidAlive(sleeper), "the background sleep to end");
  });

  it("the shell timeout kills the client terminal and says so", async () => {
    const ws = workspace();
    const audit = new Audit();
    const client = await serve(ws, [{ toolCall: { name: "shell", input: { command: "echo started; sleep 600", timeout_ms: 300 } } }, { echo: "last_tool_result" }], hosts(audit));
    const session = await client.newSession();
    const result = await session.prompt("run");
    expect(result.text).toContain("started");
    expect(result.text).toMatch(/timed out after 300 ms/);
    expect(result.toolCalls[0]?.rawOutput).toMatchObject({ timedOut: true });
    expect(audit.kinds().filter((k) => k.startsWith("terminal_"))).toEqual(expect.arrayContaining(["terminal_create", "terminal_kill", "terminal_output", "terminal_release"]));
  });
});

function readPid(file: string): number | undefined {
  try {
    const text = readFileSync(file, "utf8").trim();
    return text ? Number(text) : undefined;
  } catch {
    return undefined;
  }
}
