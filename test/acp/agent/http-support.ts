import { spawn, type ChildProcess } from "node:child_process";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { WebSocket } from "ws";
import { bin, cleanEnv } from "./serve-support.js";
import { RecordingClient } from "./support.js";
import { exitOrKill, killGroup, startTimeOf } from "../../support/processes.js";

export const TOKEN = "test-token-1234567890";

/** A spawned `agentkit-acp serve --listen …` in its own process group; stderr kept. */
export class ListeningServe {
  readonly child: ChildProcess;
  stderr = "";
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with `http://host:port/acp` once serve logs it; rejects if serve exits first. */
  readonly url: Promise<string>;
  readonly #lineWaiters = new Set<() => void>();

  /** When the process started: a later cleanup kills its group only if the pid is still its. */
  readonly #startedAt: string | undefined;

  /** `prefix`: a command that execs node, e.g. `["prlimit", "--nofile=256:256"]`. */
  constructor(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; listen?: string; prefix?: string[] } = {}) {
    const [command, ...before] = [...(options.prefix ?? []), process.execPath];
    this.child = spawn(command!, [...before, bin, "serve", "--listen", options.listen ?? "127.0.0.1:0", ...args], {
      cwd: options.cwd,
      env: options.env ?? cleanEnv({ AGENTKIT_ACP_TOKEN: TOKEN }),
      stdio: ["ignore", "ignore", "pipe"],
      detached: true,
    });
    this.#startedAt = startTimeOf(this.child.pid);
    this.child.stderr!.setEncoding("utf8");
    this.child.stderr!.on("data", (chunk: string) => {
      this.stderr += chunk;
      for (const waiter of [...this.#lineWaiters]) waiter();
    });
    this.exited = new Promise((resolve) => this.child.once("exit", (code, signal) => resolve({ code, signal })));
    this.url = new Promise((resolve, reject) => {
      const check = (): void => {
        const match = /listening on (http:\/\/\S+\/acp)/.exec(this.stderr);
        if (match?.[1]) {
          this.#lineWaiters.delete(check);
          resolve(match[1]);
        }
      };
      this.#lineWaiters.add(check);
      void this.exited.then(() => reject(new Error(`serve exited before listening:\n${this.stderr}`)));
    });
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

/** The official SDK client over Streamable HTTP or WebSocket to a listening serve. */
export function connectOver(transport: "http" | "ws", url: string, token: string = TOKEN) {
  const client = new RecordingClient();
  const headers = { Authorization: `Bearer ${token}` };
  const stream = transport === "http" ? createHttpStream(url, { headers }) : createWebSocketStream(url.replace(/^http/, "ws"), { WebSocket, headers });
  const connection = client.connect(stream);
  return { client, connection, agent: connection.agent };
}

/** Waits for `exited`, SIGKILLing the group if it has not gone in `timeoutMs`. */
export async function exitWithin(proc: ListeningServe, timeoutMs = 15_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return exitOrKill(proc.exited, proc.child.pid, timeoutMs);
}
