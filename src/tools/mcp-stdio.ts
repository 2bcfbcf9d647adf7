import type { ChildProcess } from "node:child_process";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../core/index.js";
import { spawnProcessGroup, terminateProcessGroup } from "../core/process/group.js";
import { refusals, type SandboxedCommand, type SandboxPlacement } from "../core/sandbox.js";

export interface ProcessGroupStdioOptions {
  command: string;
  args?: string[];
  /** Merged over `baseEnv`. */
  env?: Record<string, string>;
  /** The environment the server starts from. Default: this process's. */
  baseEnv?: Readonly<Record<string, string | undefined>>;
  /** Run the server in this OS sandbox, able to write only `writable`. */
  sandbox?: SandboxPlacement;
  cwd?: string;
  /** Used to label stderr lines (logged at debug level). */
  name: string;
  logger: Logger;
  /** Wait after stdin EOF before signalling the group. Default 1000 ms. */
  closeGraceMs?: number;
}

const stderrTailBytes = 4096;

/**
 * MCP stdio client transport whose server runs in its own process group, so `close()` ends
 * the server *and* everything it started (the SDK's StdioClientTransport signals only the
 * direct child). Close: stdin EOF, then SIGTERM to the group, then SIGKILL.
 */
export class ProcessGroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #options: ProcessGroupStdioOptions;
  readonly #readBuffer = new ReadBuffer();
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  #stderrTail = "";
  #closing = false;

  constructor(options: ProcessGroupStdioOptions) {
    this.#options = options;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** The last few KiB the server wrote to stderr (for failure reports). */
  get stderrTail(): string {
    return this.#stderrTail;
  }

  start(): Promise<void> {
    if (this.#child !== undefined) throw new Error("transport already started");
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(this.#options.baseEnv ?? process.env)) if (value !== undefined) env[key] = value;
    Object.assign(env, this.#options.env);
    const { sandbox } = this.#options;
    const cwd = this.#options.cwd ?? process.cwd();
    const sandboxed: SandboxedCommand | undefined = sandbox?.sandbox.wrap(this.#options.command, this.#options.args ?? [], { cwd, writable: sandbox.writable, ...refusals(sandbox) });
    return new Promise((resolve, reject) => {
      const child = spawnProcessGroup(sandboxed?.file ?? this.#options.command, sandboxed?.args ?? this.#options.args ?? [], {
        cwd: this.#options.cwd,
        env,
        stdio: ["pipe", "pipe", "pipe"],
      });
      this.#child = child;
      this.#exited = new Promise((done) => child.once("close", () => done()));
      child.once("spawn", () => resolve());
      child.on("error", (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.once("close", () => {
        this.#child = undefined;
        sandboxed?.finish("", { code: null, signal: null });
        // Exited on its own (or was closed): whatever it started goes with it.
        if (child.pid !== undefined && !this.#closing) void terminateProcessGroup(child.pid, this.#options.closeGraceMs ?? 1000);
        this.onclose?.();
      });
      child.stdin?.on("error", (error) => {
        if (!this.#closing) this.onerror?.(error);
      });
      child.stdout?.on("data", (chunk: Buffer) => this.#receive(chunk));
      child.stderr?.setEncoding("utf8");
      child.stderr?.on("data", (text: string) => this.#stderr(text));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (!stdin || this.#closing) return Promise.reject(new Error(`MCP server ${this.#options.name} is not running`));
    return new Promise((resolve, reject) => {
      stdin.write(serializeMessage(message), (error) => (error ? reject(error) : resolve()));
    });
  }

  async close(): Promise<void> {
    if (this.#closing) return this.#exited;
    this.#closing = true;
    const child = this.#child;
    const pid = child?.pid;
    if (child === undefined || pid === undefined) return;
    child.stdin?.end();
    const grace = this.#options.closeGraceMs ?? 1000;
    await raceTimeout(this.#exited, grace);
    // Whether or not the server left on EOF, end its group: children it started must not outlive
    // it, and close() answers once they are gone (bounded: grace, then SIGKILL and 2 s at most).
    await terminateProcessGroup(pid, grace);
    await raceTimeout(this.#exited, grace * 2);
    this.#readBuffer.clear();
  }

  #receive(chunk: Buffer): void {
    try {
      this.#readBuffer.append(chunk);
    } catch (error) {
      this.onerror?.(asError(error));
      return;
    }
    // A line that is not JSON-RPC is consumed and reported; the lines after it still count.
    for (;;) {
      try {
        const message = this.#readBuffer.readMessage();
        if (message === null) return;
        this.onmessage?.(message);
      } catch (error) {
        this.onerror?.(asError(error));
      }
    }
  }

  #stderr(text: string): void {
    this.#stderrTail = (this.#stderrTail + text).slice(-stderrTailBytes);
    for (const line of text.split("\n")) {
      if (line.trim().length > 0) this.#options.logger.debug(`mcp server ${this.#options.name} stderr`, { line });
    }
  }
}

function raceTimeout(promise: Promise<void>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void promise.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
