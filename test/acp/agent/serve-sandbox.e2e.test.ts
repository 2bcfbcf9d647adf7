import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seccompSyscallNumber } from "../../../src/core/index.js";
import type { ScriptFileStep } from "../../../src/testing/scripted-script.js";
import { cleanEnv, connectServe, writeScript } from "./serve-support.js";
import { tempDir, textOf } from "./support.js";
import { sandboxOrSkip } from "../../support/sandbox-engine.js";

const engine = await sandboxOrSkip("serve --sandbox's escape matrix");

/**
 * The escape matrix of docs/sandbox.md, through the real CLI: one `serve` per mode, one session
 * whose scripted model makes one `shell` call per case (allowed by the client), all in one turn.
 * The same table runs with `--sandbox` (every case refused or bounded) and `--sandbox off`
 * (every case escapes), so the test proves the sandbox and not the scenario.
 */

const marker = `agentkit-sandbox-${process.pid}-${Date.now()}`;

interface World {
  home: string;
  workspace: string;
  other: string;
  outside: string;
  secret: string;
  secretPath: string;
  port: number;
  /** Holds the server's pid (known once it runs; inside the workspace, so a sandboxed command reads it too). */
  pidFile: string;
  connections: () => number;
  fillFile: string;
}

interface Case {
  name: string;
  command: (w: World) => string;
  /** Did the attempt get out (judged from outside the sandbox, plus the tool's output)? */
  escaped: (w: World, output: string) => boolean | Promise<boolean>;
  /** With the sandbox: what the turn says happened. */
  refused: RegExp;
}

const bgPattern = `sleep 9${process.pid % 1000}77`;

/** Pids of processes whose command line is the background sleep of the "background" case. */
function backgroundPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ").trim() === bgPattern) pids.push(Number(entry));
    } catch {
      // gone
    }
  }
  return pids;
}

async function goneWithin(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

const cases: Case[] = [
  {
    name: "write outside the workspace",
    command: (w) => `echo pwned > ${w.outside}/written.txt`,
    escaped: (w) => existsSync(join(w.outside, "written.txt")),
    refused: /No such file|nonexistent|Read-only|Permission denied/,
  },
  {
    name: "read a secret in $HOME",
    command: (w) => `cat ${w.secretPath}`,
    escaped: (w, output) => output.includes(w.secret),
    refused: /No such file/,
  },
  {
    name: "follow a symlink out of the workspace",
    command: () => "cat ./link-to-secret",
    escaped: (w, output) => output.includes(w.secret),
    refused: /No such file/,
  },
  {
    name: "reach a loopback listener",
    command: (w) =>
      `node -e "require('net').connect(${w.port},'127.0.0.1').on('connect',()=>{console.log('connected');process.exit(0)}).on('error',(e)=>{console.log('refused',e.code);process.exit(1)})"`,
    escaped: (w, output) => w.connections() > 0 || output.includes("connected"),
    refused: /refused E[A-Z]+/,
  },
  {
    name: "reach another session's workspace",
    command: (w) => `echo intruder > ${w.other}/intruder.txt; cat ${w.other}/private.txt`,
    escaped: (w, output) => existsSync(join(w.other, "intruder.txt")) || output.includes("other-private"),
    refused: /No such file/,
  },
  {
    name: "leave a background process behind",
    // Waits until the child has left the process group (its pid file is written after setsid).
    command: () => `setsid sh -c 'echo $$ > bg.pid; exec ${bgPattern}' > /dev/null 2>&1 & while [ ! -s bg.pid ]; do sleep 0.05; done; echo started`,
    // Still there after the call (checked for 3 s, the sandbox's teardown being asynchronous).
    escaped: async () => !(await goneWithin(() => backgroundPids().length === 0, 3_000)),
    refused: /started/,
  },
  {
    name: "fork bomb (200 processes at once)",
    command: () => 'i=0; while [ $i -lt 200 ]; do sleep 30 & i=$((i+1)); done; echo "started $i"',
    escaped: (_w, output) => output.includes("started 200"),
    refused: /process limit \(64 at once\)/,
  },
  {
    name: "fill /tmp",
    command: (w) => `dd if=/dev/zero of=${w.fillFile} bs=1M count=32 2>&1; ls -l ${w.fillFile}`,
    escaped: (w) => existsSync(w.fillFile) && statSync(w.fillFile).size >= 32 * 1024 * 1024,
    refused: /\/tmp is full|No space left/,
  },
  {
    name: "signal the server",
    command: (w) => `kill -CONT $(cat ${w.pidFile}) && echo signalled`,
    escaped: (_w, output) => output.includes("signalled"),
    refused: /No such process/,
  },
  {
    // Syscalls the seccomp filter refuses (docs/sandbox.md, "seccomp") that the namespaces alone let
    // through: unshare(CLONE_FS) and keyctl(GET_KEYRING_ID, session keyring), called by number.
    name: "kernel attack surface: unshare and keyctl (seccomp)",
    command: () => {
      const [unshare, keyctl] = [seccompSyscallNumber("unshare"), seccompSyscallNumber("keyctl")];
      return `perl -e 'print syscall(${unshare}, 0x200) == 0 ? "unshare ok\n" : "unshare: $!\n"; print syscall(${keyctl}, 0, -3, 0) >= 0 ? "keyctl ok\n" : "keyctl: $!\n"'`;
    },
    escaped: (_w, output) => output.includes("unshare ok") || output.includes("keyctl ok"),
    refused: /unshare: Operation not permitted\nkeyctl: Operation not permitted/,
  },
];

/** Ordinary work that must go on inside the sandbox. */
const ordinary: Array<{ name: string; command: string; expect: RegExp }> = [
  { name: "node -e", command: 'node -e "console.log(6 * 7)"', expect: /^42$/m },
  {
    name: "git init && git commit",
    command: "git init -q repo && cd repo && echo hi > a.txt && git add a.txt && git -c user.name=t -c user.email=t@example.com commit -q -m first && git log --oneline | wc -l",
    expect: /^1$/m,
  },
];

/** A stdio "MCP server" that records what it can reach (a secret, a signal to the server, the token), then idles. */
function probeScript(secretPath: string, serverPid: number): string {
  return `const fs = require("node:fs");
const out = [];
try { fs.readFileSync(${JSON.stringify(secretPath)}); out.push("read:ok"); } catch (e) { out.push("read:" + e.code); }
try { process.kill(${serverPid}, 0); out.push("signal:ok"); } catch (e) { out.push("signal:" + e.code); }
out.push("env:" + (process.env.AGENTKIT_ACP_TOKEN ? "token" : "clean"));
fs.writeFileSync("mcp-evidence.txt", out.join(" "));
const answers = { initialize: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "probe", version: "1" } }, "tools/list": { tools: [] } };
require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const message = JSON.parse(line);
  if (message.id !== undefined) process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: answers[message.method] ?? {} }) + "\\n");
});
`;
}

function sandboxMeta(meta: unknown): Record<string, unknown> | undefined {
  return (meta as { agentkit?: { sandbox?: Record<string, unknown> } } | undefined)?.agentkit?.sandbox;
}

/** Each tool call's final text, by call id. */
function toolOutputs(updates: SessionUpdate[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const u of updates) {
    if (u.sessionUpdate !== "tool_call_update" || (u.status !== "completed" && u.status !== "failed")) continue;
    const text = (u.content ?? []).map((c) => (c.type === "content" && c.content.type === "text" ? c.content.text : "")).join("\n");
    out.set(u.toolCallId, text);
  }
  return out;
}

describe.skipIf(!engine.available).each([
  { mode: "workspace", args: ["--sandbox", "--sandbox-limit", "processes=64,tmp=8"] },
  { mode: "off", args: ["--sandbox=off"] },
])("serve --sandbox $mode: the escape matrix through the real CLI", ({ mode, args }) => {
  const sandboxed = mode === "workspace";
  const dirs: Array<{ remove(): void }> = [];
  let world: World;
  let outputs: Map<string, string>;
  let finalText = "";
  let stopReason = "";
  let initMeta: unknown;
  let envOutput = "";
  let listener: Server;
  let close: () => Promise<unknown>;

  beforeAll(async () => {
    const made = (prefix: string) => {
      const d = tempDir(prefix);
      dirs.push(d);
      return d.path;
    };
    const home = made("agentkit-home-");
    const workspace = made("agentkit-ws-");
    const other = made("agentkit-other-");
    const outside = join(home, "outside");
    mkdirSync(outside);
    const secret = `secret-${marker}`;
    const secretPath = join(home, ".secret");
    writeFileSync(secretPath, secret);
    writeFileSync(join(other, "private.txt"), "other-private");
    symlinkSync(secretPath, join(workspace, "link-to-secret"));
    let connections = 0;
    listener = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    const port = (listener.address() as { port: number }).port;

    const steps: ScriptFileStep[] = [];
    const pidFile = join(workspace, "server.pid");
    world = { home, workspace, other, outside, secret, secretPath, port, pidFile, connections: () => connections, fillFile: `/tmp/${marker}-${mode}-fill` };
    const env = cleanEnv({ HOME: home, AGENTKIT_ACP_TOKEN: `acp-token-${marker}`, OPENAI_API_KEY: `sk-${marker}`, AGENTKIT_STORE_URL: "postgres://u:p@127.0.0.1:1/db" });
    const scriptDir = made("agentkit-script-");
    cases.forEach((c, i) => steps.push({ toolCall: { name: "shell", input: { command: c.command(world) }, callId: `case_${i}` } }));
    ordinary.forEach((o, i) => steps.push({ toolCall: { name: "shell", input: { command: o.command }, callId: `ordinary_${i}` } }));
    steps.push({ toolCall: { name: "shell", input: { command: "env" }, callId: "env" } });
    steps.push({ text: "matrix done" });
    const scriptPath = writeScript(scriptDir, steps);

    const served = connectServe(["--model", `scripted:${scriptPath}`, "--no-persist", "--log-level", "warn", ...args], { cwd: workspace, env, process: true });
    close = async () => {
      served.connection.close();
      await served.proc.end();
    };
    writeFileSync(pidFile, String(served.proc.child.pid));
    const init = await served.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "sandbox-test", version: "1" } });
    initMeta = init._meta;
    // The other session: a workspace of its own on the same server.
    await served.agent.request(acp.methods.agent.session.new, { cwd: other, mcpServers: [] });
    // A stdio MCP server the agent starts: a probe that records what it could reach.
    const probe = join(workspace, "probe.cjs");
    writeFileSync(probe, probeScript(secretPath, served.proc.child.pid ?? 0));
    const mcpServers: acp.McpServer[] = [{ name: "probe", command: process.execPath, args: [probe], env: [] }];
    const { sessionId } = await served.agent.request(acp.methods.agent.session.new, { cwd: workspace, mcpServers });
    const response = await served.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "try to get out" }] });
    stopReason = response.stopReason;
    const updates = served.client.updates(sessionId);
    outputs = toolOutputs(updates);
    finalText = textOf(updates, "agent_message_chunk");
    envOutput = outputs.get("env") ?? "";
  }, 120_000);

  afterAll(async () => {
    for (const pid of backgroundPids()) process.kill(pid, "SIGKILL");
    await close?.();
    listener?.close();
    rmSync(world?.fillFile ?? "/nonexistent", { force: true });
    for (const d of dirs) d.remove();
  });

  it("the turn goes on to its end", () => {
    expect(stopReason).toBe("end_turn");
    expect(finalText).toContain("matrix done");
    expect(outputs.size).toBe(cases.length + ordinary.length + 1);
  });

  it.for(cases.map((c, i) => ({ ...c, index: i })))("$name", async (c, ctx) => {
    const output = outputs.get(`case_${c.index}`) ?? "";
    // Root without a writable pids cgroup: no process bound exists, and initialize says so (docs/sandbox.md).
    if (sandboxed && c.name.startsWith("fork bomb") && sandboxMeta(initMeta)?.processBound === "none") return ctx.skip("processBound none: root without a writable pids cgroup");
    const escaped = await c.escaped(world, output);
    expect({ case: c.name, escaped, output }).toMatchObject({ escaped: !sandboxed });
    if (sandboxed) expect(output).toMatch(c.refused);
  });

  it.each(ordinary.map((o, i) => ({ ...o, index: i })))("ordinary work still works: $name", (o) => {
    expect(outputs.get(`ordinary_${o.index}`)).toMatch(o.expect);
  });

  it("children never get the server's token, store URL or provider keys", () => {
    expect(envOutput).toMatch(/^PATH=/m);
    expect(envOutput).not.toContain(marker);
    expect(envOutput).not.toContain("AGENTKIT_STORE_URL");
  });

  it("a stdio MCP server the agent starts is sandboxed the same way", () => {
    const evidence = readFileSync(join(world.workspace, "mcp-evidence.txt"), "utf8");
    if (sandboxed) expect(evidence).toBe("read:ENOENT signal:ESRCH env:clean");
    else expect(evidence).toBe("read:ok signal:ok env:clean");
  });

  it("initialize says whether the sandbox is on and what it allows", () => {
    const sandbox = sandboxMeta(initMeta);
    if (sandboxed) expect(sandbox).toMatchObject({ mode: "workspace", engine: "bubblewrap", network: "off", limits: { processes: 64, tmpBytes: 8 * 1024 * 1024 } });
    else expect(sandbox).toEqual({ mode: "off" });
  });
});
