/**
 * The ACP v2 bridge alone, in process (no model, no loop, no client process): a tiny v1 agent
 * that streams N text chunks per prompt (in batches of 50, as the runtime's update queue hands
 * them over) is served over serve's guarded ndjson stream as v1 directly and through the v2
 * bridge (`serveV2`), and this process's CPU per turn is compared, interleaved. Much less noisy
 * than bench/stream.ts `protocols` on a shared machine; it measures only what the bridge adds.
 * `extra` also sends a commands and a title update each turn (what a session's first turn has).
 *
 * Run: npm run build && npx tsx bench/v2-bridge.ts [turns=80] [extra]
 * Both rows run the built code (dist/: tsx's transpile of src/ runs a few per cent slower here,
 * which moved the ratio by up to 0.08); BENCH_BASELINE=DIR adds another built checkout's bridge
 * (DIR/dist) as one more row.
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import * as V1 from "@agentclientprotocol/sdk/unstable";
import type * as V2 from "@agentclientprotocol/sdk/experimental/v2/unstable";
import type { serveV2 } from "../src/acp/agent/v2-bridge.js";
import type { guardedNdJsonStream } from "../src/acp/agent/line-guard.js";
import type { ByteSink } from "../src/acp/agent/batched-output.js";
import type { SessionUpdateSink } from "../src/acp/agent/client-handle.js";
import type { AcpServedConnection } from "../src/acp/agent/protocol.js";
import { silentLogger } from "../src/core/index.js";
import { median } from "./support.js";

const CHUNKS = 2000;
const turns = Number(process.argv[2] ?? "80");
const extra = process.argv[3] === "extra";
type Bridge = { serveV2: typeof serveV2; guardedNdJsonStream: typeof guardedNdJsonStream };

/** A built checkout's bridge and line guard. */
async function built(dir: string): Promise<Bridge> {
  const [bridge, guard] = (await Promise.all([import(`${dir}/dist/acp/agent/v2-bridge.js`), import(`${dir}/dist/acp/agent/line-guard.js`)])) as [Bridge, Bridge];
  return { serveV2: bridge.serveV2, guardedNdJsonStream: guard.guardedNdJsonStream };
}
const own = await built(new URL("..", import.meta.url).pathname);

function tinyAgent(updates?: SessionUpdateSink): V1.AgentApp {
  let sessions = 0;
  return V1.agent({ name: "tiny" })
    .onRequest(V1.methods.agent.initialize, () => ({ protocolVersion: 1, agentCapabilities: {} }))
    .onRequest(V1.methods.agent.session.new, () => ({ sessionId: `s${++sessions}` }))
    .onRequest(V1.methods.agent.session.prompt, async ({ params, client }) => {
      const send = (update: SessionUpdate): Promise<void> => (updates ? updates({ sessionId: params.sessionId, update }) : client.notify(V1.methods.client.session.update, { sessionId: params.sessionId, update }));
      if (extra) {
        await send({ sessionUpdate: "available_commands_update", availableCommands: [{ name: "help", description: "List the commands" }, { name: "mode", description: "Switch the mode", input: { hint: "ask | auto-edit" } }] });
        await send({ sessionUpdate: "session_info_update", title: "stream", updatedAt: new Date().toISOString() });
      }
      for (let i = 0; i < CHUNKS; i += 50) {
        const batch: Array<Promise<void>> = [];
        for (let k = 0; k < 50; k++) batch.push(send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "tok " }, messageId: "msg_1" }));
        await Promise.all(batch);
        await new Promise((resolve) => setImmediate(resolve));
      }
      return { stopReason: "end_turn" };
    });
}

/** One served connection; resolves with a function that runs one turn to its end. */
async function serve(bridge: Bridge | undefined): Promise<() => Promise<unknown>> {
  let onLine: (line: string) => void = () => undefined;
  let partial = "";
  const decoder = new TextDecoder();
  const sink: ByteSink = {
    write(chunk) {
      partial += decoder.decode(chunk);
      for (let i = partial.indexOf("\n"); i >= 0; i = partial.indexOf("\n")) {
        const line = partial.slice(0, i);
        partial = partial.slice(i + 1);
        if (!line.includes("agent_message_chunk")) onLine(line);
      }
    },
    close: async () => undefined,
    abort: () => undefined,
  };
  let push!: (line: string) => void;
  const input = new ReadableStream<Uint8Array>({ start: (c) => void (push = (line) => c.enqueue(new TextEncoder().encode(`${line}\n`))) });
  if (!bridge) tinyAgent().connect(own.guardedNdJsonStream(sink, input));
  else {
    const serveV1 = (runtime: V1.Stream, updates: SessionUpdateSink): AcpServedConnection => {
      const c = tinyAgent(updates).connect(runtime);
      return { closed: c.closed.then(() => undefined), close: async () => c.close() };
    };
    // As serveStdio: the stream's end-of-input wait hears the turns' states.
    const stream = bridge.guardedNdJsonStream(sink, input);
    bridge.serveV2(stream as unknown as V2.Stream, serveV1, silentLogger, stream.turnState);
  }
  let id = 0;
  const request = (method: string, params: unknown, done: (m: { id?: number; params?: { update?: { state?: string } } }) => boolean) =>
    new Promise<{ result?: { sessionId?: string } }>((resolve) => {
      id += 1;
      onLine = (line) => {
        const m = JSON.parse(line) as { id?: number; result?: { sessionId?: string } };
        if (done(m)) resolve(m);
      };
      push(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  const answered = () => { const mine = id + 1; return (m: { id?: number }) => m.id === mine; };
  await request("initialize", bridge ? { protocolVersion: 2, info: { name: "bench", version: "1" }, capabilities: {} } : { protocolVersion: 1, clientCapabilities: {} }, answered());
  const { result } = await request("session/new", bridge ? { cwd: "/tmp" } : { cwd: "/tmp", mcpServers: [] }, answered());
  const prompt = { sessionId: result?.sessionId, prompt: [{ type: "text", text: "x" }] };
  return () => request("session/prompt", prompt, bridge ? (m) => m.params?.update?.state === "idle" : answered());
}

const rows: Array<{ name: string; bridge: Bridge | undefined }> = [
  { name: "v1", bridge: undefined },
  { name: "v2", bridge: own },
];
if (process.env.BENCH_BASELINE) rows.push({ name: "v2 (baseline)", bridge: await built(process.env.BENCH_BASELINE) });
const runs = await Promise.all(rows.map((row) => serve(row.bridge)));
for (let i = 0; i < 10; i++) for (const run of runs) await run(); // warm-up
const samples = rows.map(() => [] as number[]);
for (let i = 0; i < turns; i++) {
  for (const [k, run] of runs.entries()) {
    const before = process.cpuUsage();
    await run();
    const used = process.cpuUsage(before);
    samples[k]!.push((used.user + used.system) / 1000);
  }
}
const v1 = median(samples[0]!);
const lines = [`${CHUNKS} chunks per turn${extra ? " (plus a commands and a title update)" : ""}, ${turns} interleaved turns per row after 10 (Node ${process.version}); CPU per turn (median)`];
for (const [k, row] of rows.entries()) lines.push(`${row.name.padEnd(14)} ${median(samples[k]!).toFixed(2)} ms  ${(median(samples[k]!) / v1).toFixed(2)}× v1 (median of per-turn ratios ${median(samples[k]!.map((s, i) => s / samples[0]![i]!)).toFixed(2)}×)`);
process.stdout.write(`${lines.join("\n")}\n`);
process.exit(0);
