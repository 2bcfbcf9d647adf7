import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import type { ClientConnection } from "@agentclientprotocol/sdk";
import type { ScriptFileStep } from "../../../src/testing/scripted-script.js";
import { RecordingClient } from "./support.js";
import { exitOrKill, killGroup, startTimeOf } from "../../support/processes.js";
import { startCli, type LiveCli } from "../../support/cli.js";

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

/** A spawned `agentkit-acp serve`: raw stdout kept (to check it stays pure JSON-RPC), stderr kept. */
export class ServeProcess {
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

/** Spawns serve and connects the official SDK client to it. */
export function connectServe(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; nodeArgs?: string[] } = {}) {
  const proc = new ServeProcess(args, options);
  const client = new RecordingClient();
  const connection: ClientConnection = client.connect(proc.stream());
  return { proc, client, connection, agent: connection.agent };
}

/**
 * `agentkit-acp serve ARGS` run inside the test process (the CLI's own serve code: its flags,
 * store, models and runtime) on in-memory stdio, for tests of what serve says over ACP: no node
 * start-up (~0.3 s of CPU each). The commands and MCP servers it starts are real processes.
 * Process behaviour (exit codes of the bin, signals, the orphan watchdog, stdout purity of the
 * real process) is tested with `ServeProcess`.
 */
export class InProcessServe {
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

/** `connectServe`, with serve in-process (`InProcessServe`). */
export function connectServeInProcess(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const proc = new InProcessServe(args, options);
  const client = new RecordingClient();
  const connection: ClientConnection = client.connect(proc.stream());
  return { proc, client, connection, agent: connection.agent };
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
  readonly #proc: ServeProcess | InProcessServe;
  #seen = 0;

  constructor(proc: ServeProcess | InProcessServe) {
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
