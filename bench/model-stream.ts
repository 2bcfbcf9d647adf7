/**
 * The model adapter alone, in one process: CPU per streamed delta of `createModelAdapter` for
 * each provider (lean path on and off) against plain fetch + SSE parsing (bench/bare-openai.mjs's
 * code) of the same wire format, all reading the same loopback reply (chat-completions SSE, or
 * Anthropic Messages SSE for `anthropic:`). Less sensitive to machine load than the process
 * benchmarks: it reads this process's own CPU time.
 *
 * Run: npx tsx bench/model-stream.ts [N=20000] [rounds=5]
 * BENCH_BASELINE=DIR adds the lean adapters of another checkout's src (e.g. main, node_modules linked) as rows
 * (before/after in one process); a short reply with many rounds (e.g. `5 2000`) measures the fixed cost per call.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createModelAdapter } from "../src/model/index.js";
import type { ModelRequest } from "../src/model/index.js";
import { anthropicChunks, openAIChunks } from "../src/testing/mock-provider-formats.js";

const count = Number(process.argv[2] ?? "20000");
const rounds = Number(process.argv[3] ?? "5");
const text = "word, ".repeat(count);
const bodies = {
  openai: Buffer.from(openAIChunks({ text, chunkSize: 6 }, "mock", true).join("")),
  anthropic: Buffer.from(anthropicChunks({ text, chunkSize: 6 }, "mock").join("")),
};
const server = createServer((request, response) => {
  request.resume();
  request.on("end", () => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.end(request.url?.endsWith("/messages") ? bodies.anthropic : bodies.openai);
  });
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
const request: ModelRequest = { items: [{ id: "u", role: "user", parts: [{ type: "text", text: "go" }], createdAt: new Date(0).toISOString() }], tools: [] };

/** Exactly bench/bare-openai.mjs's model read: fetch, an SSE generator, a text-delta generator. */
async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) !== -1) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      for (const line of event.split("\n")) if (line.startsWith("data: ")) yield line.slice(6);
    }
  }
}

async function* textDeltas(anthropic: boolean): AsyncGenerator<string> {
  const response = await fetch(`${baseUrl}/${anthropic ? "messages" : "chat/completions"}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  for await (const data of sseData(response.body!)) {
    if (data === "[DONE]") return;
    if (anthropic) {
      const event = JSON.parse(data) as { type: string; delta?: { type?: string; text?: string } };
      if (event.type === "content_block_delta" && event.delta?.type === "text_delta" && event.delta.text) yield event.delta.text;
      continue;
    }
    const event = JSON.parse(data) as { choices?: Array<{ delta?: { content?: string } }> };
    const text = event.choices?.[0]?.delta?.content;
    if (text) yield text;
  }
}

function bare(anthropic: boolean): () => Promise<number> {
  return async () => {
    let deltas = 0;
    for await (const _ of textDeltas(anthropic)) deltas += 1;
    return deltas;
  };
}

function adapterRun(spec: string, leanStream: boolean): () => Promise<number> {
  const adapter = createModelAdapter({ spec, baseUrl, env: { OPENAI_API_KEY: "test", ANTHROPIC_API_KEY: "test" }, leanStream });
  return async () => {
    let deltas = 0;
    for await (const event of adapter.stream(request, new AbortController().signal)) if (event.type === "text_delta") deltas += 1;
    return deltas;
  };
}

/** BENCH_BASELINE=DIR: that checkout's createModelAdapter (its own src/model), for before/after rows. */
const baseline = process.env.BENCH_BASELINE;
const baselineAdapter = baseline ? ((await import(`${baseline}/src/model/index.ts`)) as { createModelAdapter: typeof createModelAdapter }).createModelAdapter : undefined;
function baselineRun(spec: string): () => Promise<number> {
  const adapter = baselineAdapter!({ spec, baseUrl, env: { OPENAI_API_KEY: "test", ANTHROPIC_API_KEY: "test" } });
  return async () => {
    let deltas = 0;
    for await (const event of adapter.stream(request, new AbortController().signal)) if (event.type === "text_delta") deltas += 1;
    return deltas;
  };
}
const baselineRows: Record<string, () => Promise<number>> = baselineAdapter
  ? { "openai-compatible, lean (baseline)": baselineRun("openai-compatible:mock"), "openai, lean (baseline)": baselineRun("openai:mock"), "anthropic, lean (baseline)": baselineRun("anthropic:claude-mock") }
  : {};
const all: Record<string, () => Promise<number>> = {
  ...baselineRows,
  "fetch + SSE (bare)": bare(false),
  "openai-compatible, lean": adapterRun("openai-compatible:mock", true),
  "openai-compatible, provider": adapterRun("openai-compatible:mock", false),
  "openai, lean": adapterRun("openai:mock", true),
  "openai, provider": adapterRun("openai:mock", false),
  "fetch + SSE (bare, anthropic)": bare(true),
  "anthropic, lean": adapterRun("anthropic:claude-mock", true),
  "anthropic, provider": adapterRun("anthropic:claude-mock", false),
};
// BENCH_ONLY=WORD keeps the bare run and the runs whose name contains WORD (e.g. for --cpu-prof).
const runs = Object.fromEntries(Object.entries(all).filter(([name]) => name.includes("bare") || !process.env.BENCH_ONLY || name.includes(process.env.BENCH_ONLY)));
const cpu: Record<string, number[]> = Object.fromEntries(Object.keys(runs).map((name) => [name, []]));
for (const run of Object.values(runs)) await run(); // warm-up: modules, JIT
for (let round = 0; round < rounds; round++) {
  for (const [name, run] of Object.entries(runs)) {
    const before = process.cpuUsage();
    const deltas = await run();
    const used = process.cpuUsage(before);
    if (deltas !== count) throw new Error(`${name}: ${deltas} of ${count} deltas`);
    cpu[name]!.push((used.user + used.system) / count);
  }
}
server.close();
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
// Each adapter against the bare read of its own wire format.
const floorOf = (name: string): number => median(cpu[name.startsWith("anthropic") || name.includes("anthropic)") ? "fetch + SSE (bare, anthropic)" : "fetch + SSE (bare)"]!);
process.stdout.write(`${count} deltas, median of ${rounds} rounds (Node ${process.version}): CPU µs per delta\n`);
for (const [name, values] of Object.entries(cpu)) process.stdout.write(`  ${name.padEnd(30)} ${median(values).toFixed(2).padStart(7)} µs  ${(median(values) / floorOf(name)).toFixed(2)}×\n`);
