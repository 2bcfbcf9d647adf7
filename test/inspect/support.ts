import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { AcpClient, ClientPermissionPolicy, type AcpAgentConfig } from "../../src/acp/client/index.js";
import type { ServerEvent } from "../../src/inspect/types.js";
import { exitOrKill, killGroup, startTimeOf } from "../support/processes.js";

export const bin = new URL("../../bin/agentkit-acp.js", import.meta.url).pathname;
export const fixtureAgent = agentFixture("fixture-agent.mjs");
export const wireRecorder = agentFixture("wire-recorder.mjs");
export const chromiumPath = "/usr/bin/chromium";
export const haveChromium = existsSync(chromiumPath);
export const chromiumArgs = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"];

import { tempDir } from "../support/temp.js";
import { agentFixture } from "../support/fixture-agents.js";
export { tempDir };

/** An edit the scripted model makes (the serve tests' way to get a tool call with a diff and a permission question). */
export const editScript = {
  steps: [
    { toolCall: { name: "edit_file", input: { path: "a.txt", old_text: "hello", new_text: "hello world" } }, text: "I'll edit the file." },
    { text: "Done: the file now says hello world.", chunks: 4 },
  ],
};

type Hello = Extract<ServerEvent, { type: "hello" }>;

/** Waits for the page URL that inspect prints on stderr. */
function urlFrom(stream: NodeJS.ReadableStream, onText: (t: string) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    stream.on("data", (c: Buffer) => {
      text += c.toString("utf8");
      onText(text);
      const m = /page (http:\/\/\S+)/.exec(text);
      if (m?.[1]) resolve(m[1]);
    });
    stream.on("end", () => reject(new Error(`inspect ended without printing its URL:\n${text}`)));
  });
}

/** `agentkit-acp inspect …` as a child process (own group, so a test can end everything). */
export class InspectProcess {
  readonly child: ChildProcess;
  stderr = "";
  stdout = "";
  readonly url: Promise<string>;
  readonly exited: Promise<number | null>;

  /** When the process started: a later cleanup kills its group only if the pid is still its. */
  readonly #startedAt: string | undefined;

  constructor(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
    // Its own TMPDIR: without --trace, inspect keeps the trace in the temp dir for a later --replay.
    const env = { ...(options.env ?? process.env), TMPDIR: options.env?.TMPDIR ?? tempDir() };
    this.child = spawn(process.execPath, [bin, "inspect", ...args], { cwd: options.cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
    this.#startedAt = startTimeOf(this.child.pid);
    this.child.stdout!.on("data", (c: Buffer) => (this.stdout += c.toString("utf8")));
    this.child.stdin!.on("error", () => undefined);
    this.url = urlFrom(this.child.stderr!, (t) => (this.stderr = t));
    this.url.catch(() => undefined);
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
  }

  async state(): Promise<Hello> {
    const url = new URL(await this.url);
    const res = await fetch(new URL(`/api/state?t=${url.searchParams.get("t") ?? ""}`, url));
    return (await res.json()) as Hello;
  }

  /** Polls the page state (bounded) until `ok` holds. */
  async waitState(ok: (s: Hello) => boolean, timeoutMs = 20_000): Promise<Hello> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const s = await this.state();
      if (ok(s)) return s;
      if (Date.now() > deadline) throw new Error(`page state not reached: ${JSON.stringify(s.status)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** SIGINT (what a human does), bounded; SIGKILL to the group after. */
  async stop(signal: NodeJS.Signals = "SIGINT", timeoutMs = 10_000): Promise<number | null> {
    try {
      this.child.kill(signal);
    } catch {
      // gone
    }
    return exitOrKill(this.exited, this.child.pid, timeoutMs);
  }

  kill(): void {
    killGroup(this.child.pid, this.#startedAt);
  }
}

/** Lines seen by the client on each side of the wire, as parsed JSON. */
export interface WireLog {
  client: unknown[];
  agent: unknown[];
  clientBytes: Buffer[];
  agentBytes: Buffer[];
}

/** Our client (the editor) launching `command` (maybe the tap), recording its wire; the page URL (if the tap printed one) is captured. */
export async function startEditor(config: Omit<AcpAgentConfig, "wireObserver" | "stderr">): Promise<{ client: AcpClient; wire: WireLog; url: Promise<string> }> {
  const wire: WireLog = { client: [], agent: [], clientBytes: [], agentBytes: [] };
  let found: (url: string) => void = () => undefined;
  const url = new Promise<string>((resolve) => (found = resolve));
  const client = await AcpClient.start(
    {
      ...config,
      stderr: (line) => {
        const m = /page (http:\/\/\S+)/.exec(line);
        if (m?.[1]) found(m[1]);
      },
      wireObserver: (from, chunk) => (from === "client" ? wire.clientBytes : wire.agentBytes).push(Buffer.from(chunk)),
    },
    ClientPermissionPolicy.allowAll(),
  );
  return { client, wire, url };
}

export function lines(bytes: Buffer[]): unknown[] {
  return Buffer.concat(bytes)
    .toString("utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as unknown);
}
