import { randomUUID } from "node:crypto";
import { AcpClient, ClientPermissionPolicy, type AcpAgentConfig, type AcpSession, type PermissionAnswer, type PermissionQuestion } from "../acp/client/index.js";
import { LineSplitter, parseLine } from "./lines.js";
import type { Direction, PendingAsk } from "./types.js";

interface Ask extends PendingAsk {
  resolve: (answer: PermissionAnswer) => void;
}

export interface DriveOptions {
  config: AcpAgentConfig;
  onMessage: (ts: number, from: Direction, message: unknown) => void;
  onAsks: (asks: PendingAsk[]) => void;
}

/**
 * Drive mode: the page is the client. This package's AcpClient does the work (spawn,
 * initialize, sessions, prompts, cancel, permissions); the wire it speaks is recorded through
 * its `wireObserver`, and permission questions wait for a click in the page.
 */
export class DriveController {
  #client: AcpClient | undefined;
  readonly #sessions = new Map<string, AcpSession>();
  readonly #asks = new Map<string, Ask>();
  readonly #options: DriveOptions;

  constructor(options: DriveOptions) {
    this.#options = options;
  }

  async start(): Promise<AcpClient> {
    const split = (from: Direction) => new LineSplitter((line) => this.#options.onMessage(Date.now(), from, parseLine(line)));
    const sides = { client: split("client"), agent: split("agent") };
    const policy = ClientPermissionPolicy.custom((question, signal) => this.#ask(question, signal));
    this.#client = await AcpClient.start(
      { ...this.#options.config, wireObserver: (from, chunk) => sides[from].push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)) },
      policy,
    );
    return this.#client;
  }

  get canLoad(): boolean {
    return this.#client?.agentCapabilities.loadSession === true;
  }

  get asks(): PendingAsk[] {
    return [...this.#asks.values()].map(({ resolve: _r, ...ask }) => ask);
  }

  async newSession(cwd: string | undefined): Promise<string> {
    const session = await this.#need().newSession(cwd ? { cwd } : {});
    this.#sessions.set(session.sessionId, session);
    return session.sessionId;
  }

  async loadSession(sessionId: string, cwd: string | undefined): Promise<string> {
    const session = await this.#need().loadSession(sessionId, cwd ? { cwd } : {});
    this.#sessions.set(session.sessionId, session);
    return session.sessionId;
  }

  /** Starts a turn; the page follows it through the recorded messages. */
  prompt(sessionId: string, text: string): void {
    const session = this.#session(sessionId);
    if (session.busy) throw new Error("a prompt is already running in this session");
    void session.prompt(text).catch(() => undefined); // errors are on the wire, where the page shows them
  }

  async cancel(sessionId: string): Promise<void> {
    await this.#session(sessionId).cancel();
  }

  async setMode(sessionId: string, modeId: string): Promise<void> {
    await this.#session(sessionId).setMode(modeId);
  }

  async setConfigOption(sessionId: string, configId: string, value: string | boolean): Promise<void> {
    await this.#session(sessionId).setConfigOption(configId, value);
  }

  /** Answers a pending permission question with one of the options the agent offered. */
  answer(key: string, optionId: string): void {
    const ask = this.#asks.get(key);
    if (!ask) throw new Error(`no permission question ${key} is waiting`);
    if (!ask.options.some((o) => o.optionId === optionId)) throw new Error(`"${optionId}" is not one of the options offered`);
    ask.resolve({ optionId });
  }

  async close(): Promise<void> {
    for (const ask of this.#asks.values()) ask.resolve("cancel");
    await this.#client?.close();
  }

  #need(): AcpClient {
    if (!this.#client) throw new Error("the agent is not running");
    return this.#client;
  }

  #session(sessionId: string): AcpSession {
    const session = this.#sessions.get(sessionId);
    if (!session) throw new Error(`unknown session ${sessionId}`);
    return session;
  }

  #ask(question: PermissionQuestion, signal: AbortSignal): Promise<PermissionAnswer> {
    return new Promise((resolve) => {
      const key = randomUUID();
      const done = (answer: PermissionAnswer): void => {
        signal.removeEventListener("abort", onAbort);
        this.#asks.delete(key);
        this.#options.onAsks(this.asks);
        resolve(answer);
      };
      const onAbort = (): void => done("cancel");
      this.#asks.set(key, {
        key,
        sessionId: question.sessionId,
        toolCallId: question.toolCallId,
        title: question.title,
        options: question.options.map((o) => ({ optionId: o.optionId, name: o.name, kind: o.kind })),
        resolve: done,
      });
      signal.addEventListener("abort", onAbort, { once: true });
      this.#options.onAsks(this.asks);
    });
  }
}

