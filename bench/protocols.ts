/**
 * `serve` under one ACP protocol version with an official SDK client speaking that version, over
 * stdio or Streamable HTTP (`--listen`): bench/stream.ts's v1/v2 comparison (`protocols` mode). A turn is timed
 * from the prompt request to its end: v1's prompt answer, v2's idle `state_update` (v2 only
 * acknowledges the prompt), with the agent's CPU over the same span; each turn's text is checked.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import * as V2 from "@agentclientprotocol/sdk/experimental/v2/unstable";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { cpuMs, median, spread, startMockModel } from "./support.js";

export type Protocol = "v1" | "v2";
export type Transport = "stdio" | "http";

export interface TurnSample {
  ms: number;
  /** serve's CPU (all threads). */
  cpuMs: number;
  /** This process's CPU over the turn: the SDK client's side (the wall time includes it). */
  clientCpuMs: number;
}

export interface ProtocolAgent {
  /** A new session's first turn, then a second (warm) turn in it. */
  run(): Promise<{ first: TurnSample; warm: TurnSample }>;
  stop(): Promise<void>;
}
type Phase = "first" | "warm";

const TOKEN = "bench-token";

/** The client side of one protocol: initialize, open a session, run a turn to its end (any message stream). */
interface ProtocolClient {
  init(): Promise<unknown>;
  newSession(cwd: string): Promise<string>;
  /** Resolves with the turn's text once it ended (end_turn), else rejects. */
  turn(sessionId: string): Promise<string>;
  closeSession(sessionId: string): Promise<unknown>;
  close(): void;
}

function v1Client(stream: acp.Stream): ProtocolClient {
  let text = "";
  const connection = acp
    .client({ name: "bench" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      const update = params.update;
      if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") text += update.content.text;
    })
    .connect(stream);
  const { agent } = connection;
  return {
    init: () => agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} }),
    newSession: async (cwd) => (await agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] })).sessionId,
    async turn(sessionId) {
      text = "";
      const response = await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "stream" }] });
      if (response.stopReason !== "end_turn") throw new Error(`v1 turn ended ${response.stopReason}`);
      return text;
    },
    closeSession: (sessionId) => agent.request(acp.methods.agent.session.close, { sessionId }),
    close: () => connection.close(),
  };
}

function v2Client(stream: V2.Stream): ProtocolClient {
  let text = "";
  let ended: ((stopReason: unknown) => void) | undefined;
  const connection = V2.client({ name: "bench" })
    .onNotification(V2.methods.client.session.update, ({ params }) => {
      const update = params.update;
      if (update.sessionUpdate === "agent_message_chunk") {
        const content = (update as V2.ContentChunk).content as { type: string; text?: string };
        if (content.type === "text") text += content.text ?? "";
      } else if (update.sessionUpdate === "state_update" && (update as { state?: unknown }).state === "idle") {
        ended?.((update as { stopReason?: unknown }).stopReason);
      }
    })
    .connect(stream);
  const { agent } = connection;
  return {
    init: () => agent.request(V2.methods.agent.initialize, { protocolVersion: 2, info: { name: "bench", version: "1" }, capabilities: {} }),
    newSession: async (cwd) => (await agent.request(V2.methods.agent.session.new, { cwd })).sessionId,
    async turn(sessionId) {
      text = "";
      const idle = new Promise<unknown>((resolve) => (ended = resolve));
      await agent.request(V2.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "stream" }] });
      const stopReason = await idle;
      if (stopReason !== "end_turn") throw new Error(`v2 turn ended ${String(stopReason)}`);
      return text;
    },
    closeSession: (sessionId) => agent.request(V2.methods.agent.session.close, { sessionId }),
    close: () => connection.close(),
  };
}

type RawMessage = {
  id?: number;
  method?: string;
  result?: unknown;
  error?: { message: string };
  params?: { update?: { sessionUpdate?: string; state?: string; stopReason?: unknown; content?: { type?: string; text?: string } } };
};

/**
 * `BENCH_CLIENT=raw` (stdio): the same requests, as lines, from a client that costs the same per
 * line under both versions (no SDK: each line is parsed once), so serve's v2/v1 ratio does not
 * also carry the pace of the v2 SDK client, which spends about twice the v1 client's CPU per turn.
 */
function rawClient(protocol: Protocol, input: Writable, output: Readable): ProtocolClient {
  let partial = "";
  let text = "";
  let id = 0;
  let waiting: { id: number; resolve: (result: unknown) => void; reject: (error: Error) => void } | undefined;
  let ended: ((stopReason: unknown) => void) | undefined;
  output.setEncoding("utf8");
  output.on("data", (data: string) => {
    partial += data;
    for (let i = partial.indexOf("\n"); i >= 0; i = partial.indexOf("\n")) {
      const message = JSON.parse(partial.slice(0, i)) as RawMessage;
      partial = partial.slice(i + 1);
      const update = message.params?.update;
      if (update?.sessionUpdate === "agent_message_chunk" && update.content?.type === "text") text += update.content.text ?? "";
      else if (update?.sessionUpdate === "state_update" && update.state === "idle") ended?.(update.stopReason);
      else if (message.method === undefined && message.id !== undefined && message.id === waiting?.id) {
        const { resolve, reject } = waiting;
        waiting = undefined;
        if (message.error) reject(new Error(message.error.message));
        else resolve(message.result);
      }
    }
  });
  const request = <T>(method: string, params: unknown): Promise<T> =>
    new Promise((resolve, reject) => {
      id += 1;
      waiting = { id, resolve: resolve as (result: unknown) => void, reject };
      input.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  return {
    init: () => request("initialize", protocol === "v1" ? { protocolVersion: 1, clientCapabilities: {} } : { protocolVersion: 2, info: { name: "bench", version: "1" }, capabilities: {} }),
    newSession: async (cwd) => (await request<{ sessionId: string }>("session/new", protocol === "v1" ? { cwd, mcpServers: [] } : { cwd })).sessionId,
    async turn(sessionId) {
      text = "";
      const idle = new Promise<unknown>((resolve) => (ended = resolve));
      const answer = await request<{ stopReason?: unknown }>("session/prompt", { sessionId, prompt: [{ type: "text", text: "stream" }] });
      const stopReason = protocol === "v1" ? answer.stopReason : await idle;
      if (stopReason !== "end_turn") throw new Error(`${protocol} turn ended ${String(stopReason)}`);
      return text;
    },
    closeSession: (sessionId) => request("session/close", { sessionId }),
    close: () => input.end(),
  };
}

/**
 * Spawns `node bin/agentkit-acp.js serve --protocol P ...serveArgs` (from `binDir`) and connects an
 * SDK client of that protocol over the transport; every `run()` opens a session, runs two turns
 * that must each stream `expected` (the first one also carries the session's set-up updates: its
 * commands, its title), and closes the session.
 */
export async function startProtocolAgent(options: { binDir: string; protocol: Protocol; transport: Transport; serveArgs: string[]; cwd: string; expected: string; nodeArgs?: string[]; rawClient?: boolean }): Promise<ProtocolAgent> {
  const { protocol, transport, cwd, expected } = options;
  const args = [...(options.nodeArgs ?? []), `${options.binDir}/bin/agentkit-acp.js`, "serve", "--protocol", protocol, ...options.serveArgs, ...(transport === "http" ? ["--listen", "127.0.0.1:0"] : [])];
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, AGENTKIT_ACP_TOKEN: TOKEN }, stdio: ["pipe", "pipe", "pipe"] });
  child.stdin.on("error", () => undefined);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let stderr = "";
  const listening = new Promise<string>((resolve, reject) => {
    child.stderr.on("data", (data: Buffer) => {
      stderr = (stderr + data.toString()).slice(-65_536);
      const url = /listening on (http:\/\/\S+\/acp)/.exec(stderr)?.[1];
      if (url) resolve(url);
    });
    void exited.then(() => reject(new Error(`serve --protocol ${protocol} exited:\n${stderr}`)));
    setTimeout(() => reject(new Error(`serve --protocol ${protocol} did not say where it listens within 60 s:\n${stderr}`)), 60_000).unref();
  });
  listening.catch(() => undefined); // over stdio nobody waits for it
  const sdkClient = async (): Promise<ProtocolClient> => {
    const stream =
      transport === "stdio"
        ? acp.ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>)
        : createHttpStream(await listening, { headers: { Authorization: `Bearer ${TOKEN}` } });
    return protocol === "v1" ? v1Client(stream) : v2Client(stream as V2.Stream);
  };
  const client = options.rawClient && transport === "stdio" ? rawClient(protocol, child.stdin, child.stdout) : await sdkClient();
  await client.init();
  const pid = child.pid!;
  const turn = async (sessionId: string): Promise<TurnSample> => {
    const cpuBefore = cpuMs(pid);
    const clientBefore = process.cpuUsage();
    const started = performance.now();
    const text = await client.turn(sessionId);
    const ms = performance.now() - started;
    const clientCpu = process.cpuUsage(clientBefore);
    if (text !== expected) throw new Error(`${protocol} ${transport}: ${text.length} of ${expected.length} characters`);
    return { ms, cpuMs: cpuMs(pid) - cpuBefore, clientCpuMs: (clientCpu.user + clientCpu.system) / 1000 };
  };
  return {
    async run() {
      const sessionId = await client.newSession(cwd);
      const first = await turn(sessionId);
      const warm = await turn(sessionId);
      await client.closeSession(sessionId);
      return { first, warm };
    },
    async stop() {
      client.close();
      child.stdin.end();
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/**
 * bench/stream.ts `protocols`: serve v1 and serve v2 (and, with BENCH_BASELINE=DIR, another built
 * checkout's serve v2) per transport, long-lived processes, one warm-up run each, then `runs`
 * runs each (a new session's first turn and a warm turn), interleaved. BENCH_CPU_PROF=DIR writes a V8 CPU profile of every serve into DIR;
 * BENCH_CLIENT=raw: over stdio, a line client of the same cost for both versions instead of the SDK's (`rawClient`).
 */
export async function compareProtocols(count: number, runs: number, transports: Transport[]): Promise<void> {
  delete process.env.NODE_EXTRA_CA_CERTS; // loopback only; it costs each Node start ~50 ms of CPU
  const root = fileURLToPath(new URL("..", import.meta.url));
  const baseline = process.env.BENCH_BASELINE;
  const nodeArgs = process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const model = await startMockModel(count);
  const work = mkdtempSync(join(tmpdir(), "agentkit-bench-protocols-"));
  const rows: Array<{ transport: Transport; name: string; phase: Phase; samples: TurnSample[] }> = [];
  try {
    for (const transport of transports) {
      const specs: Array<{ name: string; binDir: string; protocol: Protocol }> = [
        { name: "v1", binDir: root, protocol: "v1" },
        { name: "v2", binDir: root, protocol: "v2" },
        ...(baseline ? [{ name: "v2 (baseline)", binDir: baseline, protocol: "v2" as const }] : []),
      ];
      const agents: ProtocolAgent[] = [];
      try {
        for (const spec of specs) {
          const serveArgs = ["--model", "openai-compatible:mock", "--base-url", model.baseUrl, "--state-dir", mkdtempSync(join(work, "state-")), "--log-level", transport === "http" ? "info" : "warn"];
          agents.push(await startProtocolAgent({ ...spec, transport, serveArgs, cwd: work, expected: model.text, nodeArgs, rawClient: process.env.BENCH_CLIENT === "raw" }));
        }
        for (const agent of agents) await agent.run(); // warm-up
        const samples = specs.map(() => ({ first: [] as TurnSample[], warm: [] as TurnSample[] }));
        for (let i = 0; i < runs; i++) {
          for (const [k, agent] of agents.entries()) {
            const { first, warm } = await agent.run();
            samples[k]!.first.push(first);
            samples[k]!.warm.push(warm);
          }
        }
        for (const phase of ["warm", "first"] as const) for (const [k, spec] of specs.entries()) rows.push({ transport, name: spec.name, phase, samples: samples[k]![phase] });
      } finally {
        for (const agent of agents) await agent.stop();
      }
    }
  } finally {
    await model.close();
    rmSync(work, { recursive: true, force: true });
  }
  const lines = [
    `${count} deltas of ${model.deltaText.length} characters per turn, ${runs} interleaved runs per row after a warm-up (Node ${process.version})${process.env.BENCH_CLIENT === "raw" ? ", raw line clients over stdio" : ""};`,
    "a run: a new session's first turn (with its commands and title updates), then a warm turn in it",
    "",
    "| transport | turn | serve | wall / turn (median) | serve CPU / turn (median) | client CPU / turn | wall vs v1 | serve CPU vs v1 (per-run range) |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const row of rows) {
    const v1 = rows.find((r) => r.transport === row.transport && r.phase === row.phase && r.name === "v1")!;
    const wall = median(row.samples.map((s) => s.ms));
    const cpu = median(row.samples.map((s) => s.cpuMs));
    const perTurn = spread(row.samples.map((s, i) => s.cpuMs / v1.samples[i]!.cpuMs));
    const vs = `${(cpu / median(v1.samples.map((s) => s.cpuMs))).toFixed(2)}× (${perTurn.low.toFixed(2)}–${perTurn.high.toFixed(2)})`;
    const client = median(row.samples.map((s) => s.clientCpuMs));
    lines.push(`| ${row.transport} | ${row.phase} | ${row.name} | ${wall.toFixed(0)} ms | ${cpu.toFixed(0)} ms | ${client.toFixed(0)} ms | ${(wall / median(v1.samples.map((s) => s.ms))).toFixed(2)}× | ${vs} |`);
  }
  process.stdout.write([...lines, ""].join("\n"));
}
