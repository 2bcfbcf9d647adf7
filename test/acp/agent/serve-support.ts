import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import type { ClientConnection } from "@agentclientprotocol/sdk";
import type { ScriptFileStep } from "../../../src/testing/scripted-script.js";
import { RecordingClient } from "./support.js";
import { exitOrKill, killGroup, startTimeOf } from "../../support/processes.js";
import { afterEachTest } from "../../support/after-each.js";
import { startCli, type LiveCli } from "../../support/cli.js";
import { tempDir } from "../../support/temp.js";

export const bin = new URL("../../../bin/agentkit-acp.js", import.meta.url).pathname;

/** Env without provider keys, so nothing can reach a real provider. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "AGENTKIT_API_KEY", "AGENTKIT_MODEL", "AGENTKIT_BASE_URL", "AGENTKIT_STORE_URL"]) delete env[key];
  return { ...env, ...extra };
}

export function writeScript(dir: string, steps: ScriptFileStep[], name = "script.json"): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ steps }));
  return path;
}

/** A spawned `agentkit-acp serve` (`openServe` with `process: true`): raw stdout kept (to check it stays pure JSON-RPC), stderr kept. */
class ServeProcess {
  readonly child: ChildProcess;
  stdout = "";
  stderr = "";
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  /** When the process started: a later cleanup kills its group only if the pid is still its. */
  readonly #startedAt: string | undefined;

  constructor(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; nodeArgs?: string[] } = {}) {
    this.child = spawn(process.execPath, [...(options.nodeArgs ?? []), bin, "serve", ...args], {
      cwd: options.cwd,
      env: options.env ?? cleanEnv(),
      stdio: ["pipe", "pipe", "pipe"],
      detached: true, // own process group, so the test can end it with everything it started
    });
    this.#startedAt = startTimeOf(this.child.pid);
    // No setEncoding: the SDK stream reads the same bytes and needs Uint8Array chunks.
    const decoder = new StringDecoder("utf8");
    this.child.stdout!.on("data", (chunk: Buffer) => (this.stdout += decoder.write(chunk)));
    this.child.stderr!.setEncoding("utf8");
    this.child.stderr!.on("data", (chunk: string) => (this.stderr += chunk));
    this.child.stdin!.on("error", () => undefined); // EPIPE after exit is expected in some tests
    this.exited = new Promise((resolve) => this.child.once("exit", (code, signal) => resolve({ code, signal })));
  }

  /** An SDK stream over the child's stdio (stdout is also recorded raw). */
  stream(): acp.Stream {
    return acp.ndJsonStream(Writable.toWeb(this.child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(this.child.stdout!) as ReadableStream<Uint8Array>);
  }

  /** Every complete stdout line, parsed: each must be one JSON-RPC 2.0 message (text after the last newline is one still arriving). */
  stdoutLines(): unknown[] {
    return parsedLines(this.stdout);
  }

  /** The child's stdin and stdout, for a client other than `stream()`'s (the v2 SDK). */
  pipes(): { stdin: NodeJS.WritableStream & Writable; stdout: NodeJS.ReadableStream & Readable } {
    return { stdin: this.child.stdin!, stdout: this.child.stdout! };
  }

  send(line: string): void {
    this.child.stdin!.write(`${line}\n`);
  }

  onceStdout(listener: () => void): void {
    this.child.stdout!.once("data", listener);
  }

  /** Ends stdin (what a client does), waits for exit; kills the group if it does not go. */
  async end(timeoutMs = 10_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.child.stdin!.end();
    return exitOrKill(this.exited, this.child.pid, timeoutMs);
  }

  kill(): void {
    killGroup(this.child.pid, this.#startedAt);
  }
}

/**
 * `agentkit-acp serve ARGS` run inside the test process (`openServe`'s default: the CLI's own
 * serve code, its flags, store, models and runtime) on in-memory stdio. The commands and MCP
 * servers it starts are real processes.
 */
class InProcessServe {
  readonly #cli: LiveCli;
  stdout = "";
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
    this.#cli = startCli(["serve", ...args], { cwd: options.cwd ?? process.cwd(), env: options.env ?? cleanEnv() });
    const decoder = new StringDecoder("utf8");
    this.#cli.stdout.on("data", (chunk: Buffer) => (this.stdout += decoder.write(chunk)));
    this.exited = this.#cli.exited.then((code) => ({ code, signal: null }));
  }

  get stderr(): string {
    return this.#cli.stderr();
  }

  stream(): acp.Stream {
    return acp.ndJsonStream(Writable.toWeb(this.#cli.stdin) as WritableStream<Uint8Array>, Readable.toWeb(this.#cli.stdout) as ReadableStream<Uint8Array>);
  }

  stdoutLines(): unknown[] {
    return parsedLines(this.stdout);
  }

  pipes(): { stdin: NodeJS.WritableStream & Writable; stdout: NodeJS.ReadableStream & Readable } {
    return { stdin: this.#cli.stdin, stdout: this.#cli.stdout };
  }

  send(line: string): void {
    this.#cli.stdin.write(`${line}\n`);
  }

  onceStdout(listener: () => void): void {
    this.#cli.stdout.once("data", listener);
  }

  /** Ends stdin (the client went away) and waits for serve to return (bounded: it cannot be killed). */
  async end(timeoutMs = 10_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (!this.#cli.stdin.writableEnded) this.#cli.stdin.end();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`in-process serve did not return within ${timeoutMs} ms of stdin's end; stderr:\n${this.stderr}`)), timeoutMs);
    });
    try {
      return await Promise.race([this.exited, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

export type { InProcessServe, ServeProcess };

/** Either serve; what the tests read and drive is the same on both. */
export type Serve = ServeProcess | InProcessServe;

/**
 * Where serve runs. By default in this test process: a test of what serve says over ACP (the
 * framing is the same code on in-memory pipes) costs no node start-up, ~0.3 s of CPU each.
 * `process: true`: a process of its own in its own group, for a test about the process (exit
 * codes of the bin, signals, kill -9, the orphan watchdog, stdout purity of the real process, the
 * code cache); `nodeArgs` (node's own flags) only then. `env` defaults to `cleanEnv()`.
 */
export interface ServeOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  process?: boolean;
  nodeArgs?: string[];
}

/** The serve `openServe` gives for options `O`: a process for `process: true`, in-process when absent or false. */
export type ServeOf<O extends ServeOptions> = O extends { process: true } ? ServeProcess : O extends ServeOptions & { process?: false } ? InProcessServe : Serve;

/** `agentkit-acp serve ARGS` with its stdio open to the test (see `ServeOptions` for where it runs). */
export function openServe<O extends ServeOptions = Record<never, never>>(args: string[], options: O = {} as O): ServeOf<O> {
  if (options.process === true) return new ServeProcess(args, options) as ServeOf<O>;
  if (options.nodeArgs !== undefined) throw new Error("nodeArgs need serve in a process of its own (process: true)");
  return new InProcessServe(args, options) as ServeOf<O>;
}

/** `openServe` with the official SDK client connected to it. */
export function connectServe<O extends ServeOptions = Record<never, never>>(args: string[], options: O = {} as O) {
  const proc = openServe(args, options);
  const client = new RecordingClient();
  const connection: ClientConnection = client.connect(proc.stream());
  return { proc, client, connection, agent: connection.agent };
}

const bridgeScript = new URL("../../fixtures/socket-bridge.mjs", import.meta.url).pathname;

/** An in-process serve reached through a bridge process (`serveBehindBridge`). */
export interface BridgedServe {
  /** The agent's command and arguments (the bridge), e.g. for `AcpAgentConfig`. */
  command: string;
  args: string[];
  /** The same as one shell-quoted line (`prompt --agent`, `shellLine`). */
  line: string;
  /** How many serves the bridge's connections started (one per agent process). */
  starts(): number;
  /** stderr of every serve started so far. */
  stderr(): string;
}

const bridges = new Set<{ server: Server; sockets: Set<Socket>; serves: Set<InProcessServe> }>();

// After each test (its own afterEach hooks have closed its clients): no listener, connection or
// serve is left; a serve that does not return fails the test (`end()` is bounded).
afterEachTest(async () => {
  const ends: Array<Promise<unknown>> = [];
  for (const bridge of [...bridges]) {
    bridges.delete(bridge);
    bridge.server.close();
    for (const socket of bridge.sockets) socket.destroy(); // nothing more reaches serve's stdin
    for (const serve of bridge.serves) ends.push(serve.end());
  }
  const failed = (await Promise.allSettled(ends)).find((r) => r.status === "rejected");
  if (failed) throw failed.reason;
});

/**
 * `agentkit-acp serve ARGS` in this test process (`openServe`) for a client that starts its
 * agent as a process (AcpClient, `prompt --agent`): the agent command is a small node bridge
 * between its stdio and a unix socket, and each connection, that is each agent process the
 * client starts, gets a fresh in-process serve, as it would get a fresh serve process. A bridge
 * costs ~0.04 s of CPU, a serve process ~0.3 s. `env` is serve's environment (default: this
 * process's); the bridge's own does not reach it. A test about serve's process (signals, exit
 * codes, a crash) gives the client the bin itself (`[bin, "serve", ...ARGS]`).
 */
export async function serveBehindBridge(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<BridgedServe> {
  const socketPath = join(tempDir("agentkit-bridge-"), "serve.sock");
  const bridge = { server: createServer({ allowHalfOpen: true }), sockets: new Set<Socket>(), serves: new Set<InProcessServe>() };
  let starts = 0;
  let stderr = "";
  bridge.server.on("connection", (socket) => {
    starts++;
    const serve = openServe(args, { cwd: options.cwd, env: options.env ?? process.env });
    bridge.sockets.add(socket);
    bridge.serves.add(serve);
    const { stdin, stdout } = serve.pipes();
    socket.pipe(stdin); // the client's EOF ends serve's stdin
    stdout.pipe(socket); // serve's return ends the socket, and so the bridge
    socket.on("error", () => stdin.end()); // the bridge was killed
    socket.on("close", () => bridge.sockets.delete(socket));
    void serve.exited.finally(() => {
      stderr += serve.stderr;
      bridge.serves.delete(serve);
    });
  });
  bridges.add(bridge);
  await new Promise<void>((resolve, reject) => bridge.server.once("error", reject).listen(socketPath, resolve));
  const bridgeArgs = [bridgeScript, socketPath];
  return {
    command: process.execPath,
    args: bridgeArgs,
    line: [process.execPath, ...bridgeArgs].map((a) => `"${a}"`).join(" "),
    starts: () => starts,
    stderr: () => stderr + [...bridge.serves].map((s) => s.stderr).join(""),
  };
}

/** Every complete line of `stdout`, parsed: each must be one JSON-RPC 2.0 message (text after the last newline is one still arriving). */
function parsedLines(stdout: string): unknown[] {
  return stdout
    .slice(0, stdout.lastIndexOf("\n") + 1)
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as unknown);
}

/** Raw line-level JSON-RPC against serve, for malformed input the SDK client cannot send. */
export class RawRpc {
  readonly #proc: Serve;
  #seen = 0;

  constructor(proc: Serve) {
    this.#proc = proc;
  }

  send(line: string): void {
    this.#proc.send(line);
  }

  /** Waits for the next response with this id (null: protocol errors). */
  async response(id: number | null, timeoutMs = 15_000): Promise<{ id: number | null; result?: unknown; error?: { code: number; message: string; data?: unknown } }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const lines = this.#proc.stdoutLines() as Array<{ id?: number | null; method?: string }>;
      const index = lines.findIndex((l, i) => i >= this.#seen && "id" in l && l.id === id && l.method === undefined);
      if (index >= 0) {
        this.#seen = index + 1;
        return lines[index] as { id: number | null };
      }
      if (Date.now() > deadline) throw new Error(`no response with id ${id}; stdout so far:\n${this.#proc.stdout}\nstderr:\n${this.#proc.stderr}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()) + 1);
        this.#proc.onceStdout(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}

const hangServer = new URL("../../fixtures/mcp-hang.mjs", import.meta.url).pathname;

/** Waits (bounded) until the hanging MCP server has written its pid: start-up is under way. */
export async function startedPid(file: string, ms = 20_000): Promise<number> {
  const deadline = Date.now() + ms;
  while (!existsSync(file) || readFileSync(file, "utf8") === "") {
    if (Date.now() > deadline) throw new Error("the MCP server was never started");
    await new Promise((r) => setTimeout(r, 20));
  }
  return Number(readFileSync(file, "utf8"));
}

export async function gone(pid: number, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

export function hanging(dir: string, name: string): { server: acp.McpServerStdio; pidFile: string } {
  const pidFile = join(dir, `${name}.pid`);
  return { pidFile, server: { name, command: process.execPath, args: [hangServer, pidFile], env: [] } };
}
