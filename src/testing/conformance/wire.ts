import type { ChildProcess } from "node:child_process";
import * as acp from "@agentclientprotocol/sdk";
import { McpOverAcpProvider, type McpMessageRequestContext } from "@agentclientprotocol/sdk/unstable";
import { processGroupAlive, resolveLaunch, settledWithin, spawnProcessGroup, terminateProcessGroup, proc } from "../../core/process/index.js";
import { pullStream } from "../../acp/client/pull-stream.js";
import type { ExitInfo } from "../../acp/client/endpoint.js";
import type { RecordedPermissionAnswer } from "../memory-pair.js";

/** One line seen on the wire, in either direction, numbered in arrival order across all processes. */
export interface WireEntry {
  seq: number;
  at: number;
  dir: "in" | "out";
  /** Which launch of the agent (0 = the first). */
  launch: number;
  raw: string;
  /** The parsed JSON-RPC message, when the line is one. */
  message?: JsonRpcMessage;
  /** Why the line is not a JSON-RPC 2.0 message. */
  problem?: string;
}

export interface JsonRpcMessage {
  jsonrpc?: unknown;
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: { code?: unknown; message?: unknown; data?: unknown };
}

/** Everything seen on the wire during a run; listeners see lines as they arrive. */
export class WireLog {
  readonly entries: WireEntry[] = [];
  readonly #listeners = new Set<(entry: WireEntry) => void>();

  add(dir: "in" | "out", launch: number, raw: string): WireEntry {
    const entry: WireEntry = { seq: this.entries.length, at: Date.now(), dir, launch, raw };
    try {
      const parsed: unknown = JSON.parse(raw);
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) entry.problem = "JSON, but not a JSON-RPC message object";
      else if ((parsed as JsonRpcMessage).jsonrpc !== "2.0") entry.problem = 'a JSON object without "jsonrpc": "2.0"';
      else entry.message = parsed as JsonRpcMessage;
    } catch {
      entry.problem = "not JSON";
    }
    this.entries.push(entry);
    for (const listener of this.#listeners) listener(entry);
    return entry;
  }

  get nextSeq(): number {
    return this.entries.length;
  }

  listen(listener: (entry: WireEntry) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** session/update notifications from the agent for `sessionId` with seq in [from, to). */
  updates(sessionId: string, from: number, to = Infinity): WireEntry[] {
    return this.entries.filter((e) => e.seq >= from && e.seq < to && isUpdateFor(e, sessionId));
  }

  /** The agent's response to our request `method` sent at or after `from` (matched by id). */
  responseTo(method: string, from: number, match: (params: Record<string, unknown>) => boolean = () => true): WireEntry | undefined {
    const request = this.entries.find((e) => e.seq >= from && e.dir === "out" && e.message?.method === method && e.message.id !== undefined && match(e.message.params ?? {}));
    if (!request) return undefined;
    const id = request.message?.id;
    return this.entries.find((e) => e.seq > request.seq && e.dir === "in" && e.launch === request.launch && e.message !== undefined && e.message.method === undefined && e.message.id === id);
  }
}

export function isUpdateFor(entry: WireEntry, sessionId: string): boolean {
  return entry.dir === "in" && entry.message?.method === "session/update" && entry.message.params?.sessionId === sessionId;
}

export function updateKind(entry: WireEntry): string {
  const update = entry.message?.params?.update as { sessionUpdate?: unknown } | undefined;
  return typeof update?.sessionUpdate === "string" ? update.sessionUpdate : "(no sessionUpdate)";
}

/** The outcome of one request: never throws, never hangs past its bound. */
export type CallOutcome =
  | { kind: "result"; value: unknown }
  | { kind: "error"; code: number | undefined; message: string; data?: unknown }
  | { kind: "timeout"; afterMs: number }
  | { kind: "closed"; detail: string };

export function describeOutcome(outcome: CallOutcome): string {
  switch (outcome.kind) {
    case "result":
      return `result ${truncate(JSON.stringify(outcome.value) ?? "undefined", 160)}`;
    case "error":
      return `error ${outcome.code ?? "(no code)"} "${truncate(outcome.message, 120)}"`;
    case "timeout":
      return `no answer within ${outcome.afterMs} ms`;
    case "closed":
      return `the connection closed (${outcome.detail})`;
  }
}

export interface LaunchSpec {
  shellLine?: string;
  command?: string;
  args?: string[];
  cwd: string;
  env: Record<string, string>;
  onStderr?: (line: string) => void;
}

/** How a launch ended: the client's `ExitInfo`, plus why the command could not be started at all. */
export interface WireExit extends ExitInfo {
  startError?: string;
}

/**
 * One launch of the agent under test: its own process group, a raw tap on both directions
 * of stdio (so non-JSON output and message order are seen exactly as sent), and an SDK
 * client connection whose handlers record what the SDK accepted.
 */
export class WireAgent {
  readonly connection: acp.ClientConnection;
  readonly launch: number;
  /** Kinds of session/update that passed the SDK's v1 schema, per kind. */
  readonly acceptedUpdates = new Map<string, number>();
  /** Client methods the agent called that this client does not offer. */
  readonly unexpectedCalls: string[] = [];
  readonly exited: Promise<WireExit>;
  readonly leaderExited: Promise<WireExit>;
  /** How permission requests are answered; checks swap it for the duration of a turn. */
  permission: RecordedPermissionAnswer = rejectOrCancel;
  /**
   * Permission requests the kit answered with its own default (a rejection, not a check's
   * deliberate answer), in order: a turn that saw one may have ended as it did because of it.
   */
  readonly defaultAnswers: { sessionId: string; tool: string }[] = [];
  /** MCP servers a check serves over this connection (MCP over ACP); unknown server ids get -33001. */
  readonly mcp = new McpOverAcpProvider();
  readonly #child: ChildProcess;
  readonly #log: WireLog;
  readonly #stderrTail: string[];
  #exit: WireExit | undefined;

  constructor(spec: LaunchSpec, log: WireLog, launch: number, stderrTail: string[]) {
    this.#log = log;
    this.launch = launch;
    this.#stderrTail = stderrTail;
    const { file, args, windowsVerbatimArguments } = resolveLaunch(spec.shellLine !== undefined ? { shellLine: spec.shellLine } : { command: spec.command ?? "", args: spec.args ?? [] });
    // Should this process exit early (Ctrl-C), the exit hook SIGKILLs the group.
    this.#child = spawnProcessGroup(file, args, { cwd: spec.cwd, env: { ...process.env, ...spec.env }, stdio: ["pipe", "pipe", "pipe"], windowsVerbatimArguments });
    const child = this.#child;
    for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.on("error", () => undefined);
    this.leaderExited = new Promise((resolve) => {
      child.once("exit", (code, signal) => resolve({ code, signal }));
      // A command that cannot be spawned (ENOENT …) never emits "exit".
      child.on("error", (error) => {
        if (child.pid === undefined) resolve({ code: null, signal: null, startError: error.message });
      });
    });
    this.exited = new Promise((resolve) => {
      child.once("close", (code: number | null, signal: NodeJS.Signals | null) => {
        this.#exit ??= { code, signal };
        resolve(this.#exit);
      });
      void this.leaderExited.then((exit) => {
        if (exit.startError === undefined) return;
        this.#exit = exit;
        resolve(exit);
      });
    });
    this.#tapStderr(spec.onStderr);
    const app = acp
      .client({ name: "agentkit-acp check" })
      .onRequest(acp.methods.client.session.requestPermission, ({ params, signal }) => {
        if (this.permission === rejectOrCancel) this.defaultAnswers.push({ sessionId: params.sessionId, tool: params.toolCall.title ?? params.toolCall.toolCallId });
        return this.permission(params, signal);
      })
      .onRequest("*", (context) => {
        const { method } = context;
        // MCP over ACP (unstable, so not in the stable SDK's method table): served by `mcp`.
        if (method === "mcp/message") return this.mcp.handleRequest(context as unknown as McpMessageRequestContext);
        // Extension methods (`_vendor/…`) may be probed freely; ACP methods need a capability.
        if (!method.startsWith("_")) this.unexpectedCalls.push(method);
        throw acp.RequestError.methodNotFound(method);
      })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        const kind = params.update.sessionUpdate;
        this.acceptedUpdates.set(kind, (this.acceptedUpdates.get(kind) ?? 0) + 1);
      });
    this.connection = app.connect(acp.ndJsonStream(this.#writable(), this.#readable()));
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  get exitInfo(): WireExit | undefined {
    return this.#exit;
  }

  /** Sends a request and waits for its answer, at most `timeoutMs` (or until `stop` aborts). */
  async call(method: string, params: unknown, timeoutMs: number, stop?: AbortSignal): Promise<CallOutcome> {
    let timer: NodeJS.Timeout | undefined;
    let onStop: (() => void) | undefined;
    const request = this.connection.agent.request<unknown>(method, params).then(
      (value): CallOutcome => ({ kind: "result", value }),
      (error: unknown): CallOutcome => toOutcome(error, this.#exit),
    );
    const started = Date.now();
    const timeout = new Promise<CallOutcome>((resolve) => {
      timer = setTimeout(() => resolve({ kind: "timeout", afterMs: timeoutMs }), timeoutMs);
      onStop = () => resolve({ kind: "timeout", afterMs: Date.now() - started });
      stop?.addEventListener("abort", onStop, { once: true });
    });
    const exited = this.exited.then((exit): CallOutcome => ({ kind: "closed", detail: describeExit(exit) }));
    try {
      // An exit races a response that is already on its way: give the response a moment.
      return await Promise.race([request, timeout, exited.then((closed) => Promise.race([request, delay(200).then(() => closed)]))]);
    } finally {
      clearTimeout(timer);
      if (onStop) stop?.removeEventListener("abort", onStop);
    }
  }

  notify(method: string, params: unknown): Promise<void> {
    return this.connection.agent.notify(method, params).catch(() => undefined);
  }

  /** Writes bytes to the agent's stdin as they are (to test its framing). */
  writeRaw(text: string): void {
    this.#log.add("out", this.launch, text.replace(/\n$/, ""));
    const stdin = this.#child.stdin;
    if (stdin && !stdin.destroyed && !stdin.writableEnded) stdin.write(text);
  }

  endStdin(): void {
    this.#child.stdin?.end();
  }

  /** Pids of live processes still in the agent's group (Linux; elsewhere [-1] while the group exists). */
  groupMembers(): number[] {
    const pid = this.#child.pid;
    if (pid === undefined) return [];
    return proc.groupMembers(pid) ?? (processGroupAlive(pid) ? [-1] : []);
  }

  /** Ends the whole group: stdin EOF, SIGTERM, then SIGKILL after `graceMs`; lets the SDK drain what was read. Idempotent. */
  async kill(graceMs = 2_000): Promise<void> {
    this.#child.stdin?.end();
    const pid = this.#child.pid;
    if (pid !== undefined) {
      // Stops tracking the group once it is gone.
      await terminateProcessGroup(pid, { graceMs, leader: this.#child });
      if (!(await within(this.exited, graceMs))) {
        this.#child.stdout?.destroy();
        this.#child.stderr?.destroy();
      }
    }
    await within(this.connection.closed, 1_000);
    this.connection.close();
  }

  /**
   * The agent's stdout for the SDK, line by line after the tap. Error responses with
   * `id: null` (the agent's -32700 for our malformed line) answer no request of ours; they
   * are logged here and not passed on, where the SDK would only print a warning.
   */
  #readable(): ReadableStream<Uint8Array> {
    const stream = pullStream();
    const encoder = new TextEncoder();
    const lines = new LineSplitter((line) => {
      const entry = this.#log.add("in", this.launch, line);
      if (entry.message && entry.message.method === undefined && entry.message.id === null) return;
      stream.push(encoder.encode(`${line}\n`));
    });
    this.#child.stdout?.on("data", (chunk: Buffer) => lines.push(chunk));
    void this.exited.then(() => {
      lines.end();
      stream.end();
    });
    return stream.readable;
  }

  #writable(): WritableStream<Uint8Array> {
    const stdin = this.#child.stdin;
    const lines = new LineSplitter((line) => this.#log.add("out", this.launch, line));
    return new WritableStream<Uint8Array>({
      write: (chunk) =>
        new Promise<void>((resolve) => {
          lines.push(Buffer.from(chunk));
          if (!stdin || stdin.destroyed || stdin.writableEnded || this.#exit) return resolve();
          stdin.write(chunk, () => resolve());
        }),
    });
  }

  #tapStderr(onStderr: ((line: string) => void) | undefined): void {
    const lines = new LineSplitter((line) => {
      this.#stderrTail.push(line);
      if (this.#stderrTail.length > 40) this.#stderrTail.shift();
      onStderr?.(line);
    });
    this.#child.stderr?.on("data", (chunk: Buffer) => lines.push(chunk));
    this.#child.stderr?.on("end", () => lines.end());
  }
}

/** Splits a byte stream into lines (UTF-8, `\n`-separated; a trailing `\r` is kept out). */
class LineSplitter {
  readonly #decoder = new TextDecoder();
  #partial = "";
  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: Uint8Array): void {
    const text = this.#partial + this.#decoder.decode(chunk, { stream: true });
    const parts = text.split("\n");
    this.#partial = parts.pop() ?? "";
    for (const part of parts) this.#emit(part);
  }

  end(): void {
    const rest = this.#partial + this.#decoder.decode();
    this.#partial = "";
    this.#emit(rest);
  }

  #emit(line: string): void {
    const clean = line.replace(/\r$/, "");
    if (clean.trim() !== "") this.onLine(clean);
  }
}

/** The default permission answer: the first reject option offered, else `cancelled`. Never allows. */
export function rejectOrCancel(params: acp.RequestPermissionRequest): acp.RequestPermissionResponse {
  const reject = params.options.find((o) => o.kind === "reject_once") ?? params.options.find((o) => o.kind === "reject_always");
  return reject ? { outcome: { outcome: "selected", optionId: reject.optionId } } : { outcome: { outcome: "cancelled" } };
}

function toOutcome(error: unknown, exit: WireExit | undefined): CallOutcome {
  if (error instanceof acp.RequestError) return { kind: "error", code: error.code, message: error.message, data: error.data };
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "number") return { kind: "error", code, message: String((error as Error).message) };
  return { kind: "closed", detail: exit ? describeExit(exit) : String(error instanceof Error ? error.message : error) };
}

export function describeExit(exit: WireExit): string {
  if (exit.startError !== undefined) return `the agent could not be started: ${exit.startError}`;
  if (exit.signal) return `the agent was ended by ${exit.signal}`;
  return `the agent exited with code ${exit.code}${exit.code === 127 ? " (command not found)" : ""}`;
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export const within = settledWithin;

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
