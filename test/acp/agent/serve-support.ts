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
    return this.stdout
      .slice(0, this.stdout.lastIndexOf("\n") + 1)
      .split("\n")
      .filter((l) => l.length > 0)
      .map((l) => JSON.parse(l) as unknown);
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

/** Raw line-level JSON-RPC against serve, for malformed input the SDK client cannot send. */
export class RawRpc {
  readonly #proc: ServeProcess;
  #seen = 0;

  constructor(proc: ServeProcess) {
    this.#proc = proc;
  }

  send(line: string): void {
    this.#proc.child.stdin!.write(`${line}\n`);
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
        this.#proc.child.stdout!.once("data", () => {
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
