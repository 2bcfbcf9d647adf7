import { spawn, type ChildProcess } from "node:child_process";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { WebSocket } from "ws";
import { bin, cleanEnv } from "./serve-support.js";
import { RecordingClient } from "./support.js";
import { startCli, type LiveCli } from "../../support/cli.js";
import { exitOrKill, killGroup, startTimeOf } from "../../support/processes.js";

export const TOKEN = "test-token-1234567890";

type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** `agentkit-acp serve --listen …` (`startListening`): its stderr, its URL once it listens, its end. */
abstract class ListeningServe {
  stderr = "";
  abstract readonly exited: Promise<Exit>;
  /** Resolves with `http://host:port/acp` once serve logs it; rejects if serve exits first. */
  readonly url: Promise<string>;
  readonly #lineWaiters = new Set<() => void>();
  #urlWaiter!: { resolve: (url: string) => void; reject: (error: Error) => void };

  constructor() {
    this.url = new Promise((resolve, reject) => (this.#urlWaiter = { resolve, reject }));
    this.url.catch(() => undefined); // a test that never asks for it is not failed by it
    const check = (): void => {
      const match = /listening on (http:\/\/\S+\/acp)/.exec(this.stderr);
      if (match?.[1]) {
        this.#lineWaiters.delete(check);
        this.#urlWaiter.resolve(match[1]);
      }
    };
    this.#lineWaiters.add(check);
  }

  /** For the subclass: stderr grew. */
  protected heard(stderr: string): void {
    this.stderr = stderr;
    for (const waiter of [...this.#lineWaiters]) waiter();
  }

  /** For the subclass, once `exited` is known: the URL never comes if it was not logged by then. */
  protected watchExit(): void {
    void this.exited.then(() => this.#urlWaiter.reject(new Error(`serve exited before listening:\n${this.stderr}`)));
  }

  /** Resolves once stderr contains `text` (bounded). */
  waitForLog(text: string | RegExp, timeoutMs = 20_000): Promise<void> {
    const has = (): boolean => (typeof text === "string" ? this.stderr.includes(text) : text.test(this.stderr));
    if (has()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for "${String(text)}" in serve's stderr:\n${this.stderr}`)), timeoutMs);
      const check = (): void => {
        if (!has()) return;
        clearTimeout(timer);
        this.#lineWaiters.delete(check);
        resolve();
      };
      this.#lineWaiters.add(check);
    });
  }

  async base(): Promise<string> {
    return (await this.url).replace(/\/acp$/, "");
  }

  /** Stops it at once (running turns cancelled); resolves when it is gone. */
  abstract kill(): Promise<void>;
}

/** A listening serve in a process of its own, in its own process group. */
class ListeningProcess extends ListeningServe {
  readonly child: ChildProcess;
  readonly exited: Promise<Exit>;
  /** When the process started: a later cleanup kills its group only if the pid is still its. */
  readonly #startedAt: string | undefined;

  constructor(args: string[], options: ListenOptions) {
    super();
    const [command, ...before] = [...(options.prefix ?? []), process.execPath];
    this.child = spawn(command!, [...before, bin, "serve", "--listen", options.listen ?? "127.0.0.1:0", ...args], {
      cwd: options.cwd,
      env: options.env ?? cleanEnv({ AGENTKIT_ACP_TOKEN: TOKEN }),
      stdio: ["ignore", "ignore", "pipe"],
      detached: true,
    });
    this.#startedAt = startTimeOf(this.child.pid);
    let stderr = "";
    this.child.stderr!.setEncoding("utf8");
    this.child.stderr!.on("data", (chunk: string) => this.heard((stderr += chunk)));
    this.exited = new Promise((resolve) => this.child.once("exit", (code, signal) => resolve({ code, signal })));
    this.watchExit();
  }

  signal(signal: NodeJS.Signals): void {
    try {
      process.kill(this.child.pid!, signal);
    } catch {
      // already gone
    }
  }

  /** SIGKILL of the whole group; resolves when it is gone. */
  async kill(): Promise<void> {
    killGroup(this.child.pid, this.#startedAt);
    await this.exited;
  }
}

/** A listening serve in this test process (`startCli`): it stops, cancelling running turns, when its stdin ends (`kill()`, which its starter calls in its cleanup, as for a process). */
class InProcessListening extends ListeningServe {
  readonly exited: Promise<Exit>;
  readonly #cli: LiveCli;

  constructor(args: string[], options: ListenOptions) {
    super();
    this.#cli = startCli(["serve", "--listen", options.listen ?? "127.0.0.1:0", ...args], { cwd: options.cwd ?? process.cwd(), env: options.env ?? cleanEnv({ AGENTKIT_ACP_TOKEN: TOKEN }) });
    this.#cli.onStderr((stderr) => this.heard(stderr));
    this.exited = this.#cli.exited.then((code) => ({ code, signal: null }));
    this.watchExit();
  }

  /** Ends its stdin and waits (bounded: it cannot be killed) for serve to return. */
  async kill(timeoutMs = 10_000): Promise<void> {
    this.#cli.stdin.end();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`in-process serve --listen did not return within ${timeoutMs} ms of stdin's end; stderr:\n${this.stderr}`)), timeoutMs);
    });
    try {
      await Promise.race([this.exited, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

export type { InProcessListening, ListeningProcess, ListeningServe };

/**
 * Where and how `serve --listen` runs. By default in this test process, for a test of what the
 * service says over HTTP/WebSocket: no node start-up. `process: true`: a process of its own, for
 * a test about the process (SIGTERM's drain, SIGHUP's reload, SIGSTOP, kill -9, its exit code,
 * `prefix`: a command that execs node, e.g. `["prlimit", "--nofile=256:256"]`). `env` defaults
 * to `cleanEnv` with AGENTKIT_ACP_TOKEN=TOKEN; `listen` to 127.0.0.1:0.
 */
export interface ListenOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  listen?: string;
  process?: boolean;
  prefix?: string[];
}

/** `agentkit-acp serve --listen ADDRESS ARGS` (see `ListenOptions`). */
export function startListening<O extends ListenOptions = Record<never, never>>(args: string[], options: O = {} as O): O extends { process: true } ? ListeningProcess : InProcessListening {
  type Result = O extends { process: true } ? ListeningProcess : InProcessListening;
  if (options.process === true) return new ListeningProcess(args, options) as Result;
  if (options.prefix !== undefined) throw new Error("prefix needs serve in a process of its own (process: true)");
  return new InProcessListening(args, options) as Result;
}

/** The official SDK client over Streamable HTTP or WebSocket to a listening serve. */
export function connectOver(transport: "http" | "ws", url: string, token: string = TOKEN) {
  const client = new RecordingClient();
  const headers = { Authorization: `Bearer ${token}` };
  const stream = transport === "http" ? createHttpStream(url, { headers }) : createWebSocketStream(url.replace(/^http/, "ws"), { WebSocket, headers });
  const connection = client.connect(stream);
  return { client, connection, agent: connection.agent };
}

/** Waits for `exited`, SIGKILLing the group if it has not gone in `timeoutMs`. */
export async function exitWithin(proc: ListeningProcess, timeoutMs = 15_000): Promise<Exit> {
  return exitOrKill(proc.exited, proc.child.pid, timeoutMs);
}
