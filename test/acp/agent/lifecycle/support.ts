import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { ScriptFile } from "../../../../src/testing/scripted-script.js";
import type { ClientConnection } from "@agentclientprotocol/sdk";
import { connectServe } from "../serve-support.js";
import { tempDir } from "../support.js";

export { select, textOf } from "../support.js";

const cleanups: Array<() => Promise<unknown> | void> = [];

/** Runs (in reverse order) everything the helpers below registered; call from afterEach. */
export async function cleanUp(): Promise<void> {
  for (const c of cleanups.splice(0).reverse()) await c();
}

export function onCleanup(fn: () => Promise<unknown> | void): void {
  cleanups.push(fn);
}

/** A workspace and a state directory, removed after the test. */
export function workspace(): { root: string; ws: string; state: string } {
  const dir = tempDir("agentkit-life-");
  cleanups.push(() => dir.remove());
  const ws = join(dir.path, "ws");
  const state = join(dir.path, "state");
  mkdirSync(ws);
  return { root: dir.path, ws, state };
}

export function writeScriptFile(dir: string, name: string, file: ScriptFile): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(file));
  return path;
}

/**
 * `agentkit-acp serve ARGS` (`connectServe`: in-process, what serve says over ACP and on stderr,
 * its store; `process: true` for a test about the process, kill -9, SIGSTOP) with the official
 * SDK client, initialized; ended after the test.
 */
export function startServe<O extends { env?: NodeJS.ProcessEnv; process?: true } = Record<never, never>>(args: string[], cwd: string, options?: O) {
  return initialized(connectServe(["--log-level", "debug", ...args], { cwd, ...options } as { cwd: string } & O));
}

type Exit = { code: number | null; signal: NodeJS.Signals | null };

async function initialized<T extends { proc: { exited: Promise<Exit>; end(): Promise<Exit> }; connection: { close(): void }; agent: ClientConnection["agent"] }>(env: T) {
  let ended = false;
  const end = async (): Promise<Exit> => {
    if (ended) return env.proc.exited;
    ended = true;
    env.connection.close();
    return env.proc.end();
  };
  cleanups.push(end);
  const init = await env.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "lifecycle-test", version: "1" } });
  return { ...env, init, end };
}

/** A short label per update: kind, plus status / text, for order assertions. */
export function label(update: SessionUpdate): string {
  switch (update.sessionUpdate) {
    case "user_message_chunk":
    case "agent_message_chunk":
    case "agent_thought_chunk":
      return `${update.sessionUpdate}:${update.content.type === "text" ? update.content.text : update.content.type}`;
    case "tool_call":
    case "tool_call_update":
      return `${update.sessionUpdate}:${update.toolCallId}:${update.status ?? ""}`;
    default:
      return update.sessionUpdate;
  }
}

/** The JSONL records of a session file (every line must parse). */
export function sessionRecords(state: string, sessionId: string): Array<{ type: string; item?: { id: string; role: string; parts: Array<{ type: string }> } }> {
  return readFileSync(join(state, "sessions", `${sessionId}.jsonl`), "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as { type: string });
}

/** The serve process's stdout messages from index `from` on (every line is one JSON-RPC message). */
export function wireMessages(stdout: string, from = 0): Array<{ id?: number; method?: string; result?: unknown; error?: unknown; params?: { sessionId?: string; update?: SessionUpdate } }> {
  return stdout
    .split("\n")
    .filter((l) => l.length > 0)
    .slice(from)
    .map((l) => JSON.parse(l) as { id?: number });
}
