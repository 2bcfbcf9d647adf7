/** What the benchmarks read off a process, how they summarise runs (Linux: /proc), and the mock model they share. */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { anthropicChunks, openAIChunks } from "../src/testing/mock-provider-formats.js";

/** CPU time of every thread of a process so far, in ms (schedstat: ns resolution, unlike getrusage's ticks). */
export function cpuMs(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // the thread ended meanwhile
    }
  }
  return ns / 1e6;
}

function statusKb(pid: number, field: "VmHWM" | "VmRSS"): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) : NaN;
}

/** Peak resident set so far, in MB. */
export function peakRssMb(pid: number): number {
  return statusKb(pid, "VmHWM") / 1024;
}

/** Resident set now, in KiB. */
export function currentRssKb(pid: number): number {
  return statusKb(pid, "VmRSS");
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

/** The value below which `p` percent of the values lie (nearest rank). */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/** The median, and the lowest and highest value. */
export function spread(values: number[]): { median: number; low: number; high: number } {
  return { median: median(values), low: Math.min(...values), high: Math.max(...values) };
}

/**
 * The loopback mock model every side of a benchmark reads: `count` six-character text deltas as a
 * pre-built SSE body in the request's wire format (`/messages`: Anthropic Messages; otherwise
 * OpenAI chat completions), written in 64 KiB slices with backpressure.
 */
export async function startMockModel(count: number): Promise<MockModel> {
  const deltaText = "word, ";
  const text = deltaText.repeat(count);
  const bodies = {
    openai: Buffer.from(openAIChunks({ text, chunkSize: deltaText.length }, "mock", true).join("")),
    anthropic: Buffer.from(anthropicChunks({ text, chunkSize: deltaText.length }, "mock").join("")),
  };
  const model: MockModel = { baseUrl: "", text, deltaText, onRequest: () => undefined, close: () => new Promise((resolve) => server.close(() => resolve())) };
  async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    model.onRequest(performance.now());
    for await (const _ of request); // drain the request body
    const body = request.url?.endsWith("/messages") ? bodies.anthropic : bodies.openai;
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    for (let offset = 0; offset < body.length; offset += 65_536) {
      if (!response.write(body.subarray(offset, offset + 65_536))) await new Promise((resolve) => response.once("drain", resolve));
    }
    response.end();
  }
  const server = createServer((request, response) => void answer(request, response).catch(() => response.destroy()));
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  model.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return model;
}

export interface MockModel {
  /** `http://127.0.0.1:PORT/v1` */
  baseUrl: string;
  /** The whole reply's text. */
  text: string;
  deltaText: string;
  /** Called (with performance.now()) when a request arrives. */
  onRequest: (at: number) => void;
  close(): Promise<void>;
}

/**
 * An agent spawned over stdio (`node ...command`) with an official SDK client that counts the
 * message chunks of a prompt; `run()` times one prompt turn (wall and the agent's CPU) and checks
 * that all `count` chunks arrived before the response.
 */
export async function startStdioAgent(options: { label: string; command: string[]; cwd: string; spawnCwd?: string; env?: NodeJS.ProcessEnv; count: number }) {
  const { label, cwd, count } = options;
  const spawned = performance.now();
  const child = spawn(process.execPath, options.command, { cwd: options.spawnCwd ?? cwd, env: options.env ?? process.env, stdio: ["pipe", "pipe", "inherit"] });
  child.stdin.on("error", () => undefined);
  child.stdout.on("error", () => undefined);
  let chunks = 0;
  const client = acp
    .client({ name: "bench" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      if (params.update.sessionUpdate === "agent_message_chunk") chunks += 1;
    })
    .connect(acp.ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await client.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  return {
    label,
    /** Spawn → initialize answered: wall ms and the agent's CPU ms. */
    startup: { ms: performance.now() - spawned, cpuMs: cpuMs(child.pid!) },
    async run(): Promise<{ seconds: number; cpuMs: number }> {
      const { sessionId } = await client.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
      chunks = 0;
      const cpuBefore = cpuMs(child.pid!);
      const started = performance.now();
      const response = await client.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "stream" }] });
      const seconds = (performance.now() - started) / 1000;
      const cpu = cpuMs(child.pid!) - cpuBefore;
      if (response.stopReason !== "end_turn" || chunks !== count) throw new Error(`${label}: got ${chunks} chunks and ${response.stopReason}`);
      await client.agent.request(acp.methods.agent.session.close, { sessionId }).catch(() => undefined);
      return { seconds, cpuMs: cpu };
    },
    async stop(): Promise<void> {
      client.close();
      child.stdin.end();
      await exited;
    },
  };
}

/**
 * `serve` for one provider of the loopback mock and its floor (bench/bare-openai.mjs speaking the
 * same wire format), plus BENCH_BASELINE's serve when set: node arguments by row name.
 */
export function providerAgents(root: string, baseUrl: string, provider: string): Record<string, string[]> {
  const spec = provider === "anthropic" ? "anthropic:claude-mock" : `${provider}:mock`;
  const serveArgs = ["serve", "--model", spec, "--base-url", baseUrl, "--log-level", "warn"];
  const agents: Record<string, string[]> = {
    floor: [join(root, "bench/bare-openai.mjs"), baseUrl, provider === "anthropic" ? "anthropic" : "openai"],
    serve: [join(root, "bin/agentkit-acp.js"), ...serveArgs],
  };
  if (process.env.BENCH_BASELINE) agents["serve (baseline)"] = [join(process.env.BENCH_BASELINE, "bin/agentkit-acp.js"), ...serveArgs];
  return agents;
}

/** An official SDK client on a spawned agent's stdin and `output` (its stdout unless said), ignoring updates; `exited` settles when it ends. */
export function clientOn(child: ChildProcess, output: Readable = child.stdout!) {
  child.stdin!.on("error", () => undefined);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const client = acp
    .client({ name: "bench" })
    .onNotification(acp.methods.client.session.update, () => undefined)
    .connect(acp.ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(output) as ReadableStream<Uint8Array>));
  return { client, exited };
}
