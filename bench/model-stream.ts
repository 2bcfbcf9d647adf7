/**
 * The model adapter alone, in one process: CPU per streamed delta of `createModelAdapter`
 * (lean path on and off) against plain fetch + SSE parsing (bench/bare-openai.mjs's code),
 * all reading the same loopback chat-completions SSE reply. Less sensitive to machine load than
 * the process benchmarks: it reads this process's own CPU time.
 *
 * Run: npx tsx bench/model-stream.ts [N=20000] [rounds=5]
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createModelAdapter } from "../src/model/index.js";
import type { ModelRequest } from "../src/model/index.js";
import { openAIChunks } from "../src/testing/mock-provider-formats.js";

const count = Number(process.argv[2] ?? "20000");
const rounds = Number(process.argv[3] ?? "5");
const text = "word, ".repeat(count);
const body = Buffer.from(openAIChunks({ text, chunkSize: 6 }, "mock", true).join(""));
const server = createServer((request, response) => {
  request.resume();
  request.on("end", () => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.end(body);
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

async function* textDeltas(): AsyncGenerator<string> {
  const response = await fetch(`${baseUrl}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  for await (const data of sseData(response.body!)) {
    if (data === "[DONE]") return;
    const event = JSON.parse(data) as { choices?: Array<{ delta?: { content?: string } }> };
    const text = event.choices?.[0]?.delta?.content;
    if (text) yield text;
  }
}

async function bare(): Promise<number> {
  let deltas = 0;
  for await (const _ of textDeltas()) deltas += 1;
  return deltas;
}

function adapterRun(leanStream: boolean): () => Promise<number> {
  const adapter = createModelAdapter({ spec: "openai-compatible:mock", baseUrl, env: {}, leanStream });
  return async () => {
    let deltas = 0;
    for await (const event of adapter.stream(request, new AbortController().signal)) if (event.type === "text_delta") deltas += 1;
    return deltas;
  };
}

const all: Record<string, () => Promise<number>> = { "fetch + SSE (bare)": bare, "adapter, lean": adapterRun(true), "adapter, provider stream": adapterRun(false) };
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
const floor = median(cpu["fetch + SSE (bare)"]!);
process.stdout.write(`${count} deltas, median of ${rounds} rounds (Node ${process.version}): CPU µs per delta\n`);
for (const [name, values] of Object.entries(cpu)) process.stdout.write(`  ${name.padEnd(26)} ${median(values).toFixed(2).padStart(7)} µs  ${(median(values) / floor).toFixed(2)}×\n`);
