import { describe, expect, it } from "vitest";
import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { isPlainDeltaChunk, openAICompatibleFormat } from "../../src/model/lean-formats.js";
import { LeanStreams, SseData } from "../../src/model/lean-stream.js";
import { expectSameEvents, expectSameParts, leanHarness } from "./lean-support.js";

// Chat-completions SSE as real servers send it (OpenAI, vLLM/llama.cpp `reasoning_content`,
// Ollama `reasoning`, OpenRouter, Mistral content arrays), read by the lean path and by the
// provider's own stream: the events (or the error) must be the same.
const head = { id: "chatcmpl-9x", object: "chat.completion.chunk", created: 1767225600, model: "m", system_fingerprint: "fp_1" };
const chunk = (delta: object | null, finish: string | null = null, extra: object = {}): string =>
  `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra })}\n\n`;
const usage = (prompt: number, completion: number, details: object = {}): string =>
  `data: ${JSON.stringify({ ...head, choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, ...details } })}\n\n`;
const done = "data: [DONE]\n\n";
const toolDelta = (index: number, fields: object): string => chunk({ tool_calls: [{ index, ...fields }] });

const bodies: Record<string, string> = {
  "plain text, usage chunk, [DONE]": [chunk({ role: "assistant", content: "" }), chunk({ content: "Hello" }), chunk({ content: ", wörld 👋" }), chunk({}, "stop"), usage(12, 3), done].join(""),
  "CRLF line ends, comments, other fields, data: without a space, a BOM": [
    "\uFEFF: keep-alive\r\n\r\n",
    "event: message\r\nid: 1\r\n",
    chunk({ role: "assistant", content: "A" }).replace(/\n/g, "\r\n"),
    `data:${JSON.stringify({ ...head, choices: [{ index: 0, delta: { content: "B" }, finish_reason: null }] })}\r\r`,
    chunk({ content: "C" }, "stop").replace(/\n/g, "\r\n"),
    done,
  ].join(""),
  "an event split over several data: lines": [`data: {"choices":[{"index":0,\ndata: "delta":{"content":"multi"}}]}\n\n`, chunk({}, "stop"), done].join(""),
  "reasoning_content then text, usage with reasoning and cached tokens": [
    chunk({ role: "assistant", content: null, reasoning_content: "Let me think" }),
    chunk({ reasoning_content: " hard." }),
    chunk({ content: "42" }),
    chunk({}, "stop"),
    usage(100, 20, { prompt_tokens_details: { cached_tokens: 64 }, completion_tokens_details: { reasoning_tokens: 12 } }),
    done,
  ].join(""),
  "Ollama's `reasoning` field": [chunk({ role: "assistant", content: "", reasoning: "hmm" }), chunk({ content: "ok" }), chunk({ content: "" }, "stop"), done].join(""),
  "content and finish reason in one chunk; usage in the same chunk (OpenRouter)": [
    chunk({ role: "assistant", content: "Hi" }),
    chunk({ content: " there" }, "stop", { usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }),
    done,
  ].join(""),
  "two tool calls streamed in pieces": [
    chunk({ role: "assistant", content: "Reading both." }),
    toolDelta(0, { id: "call_a", type: "function", function: { name: "read_file", arguments: "" } }),
    toolDelta(0, { function: { arguments: '{"pa' } }),
    toolDelta(0, { function: { arguments: 'th":"a.txt"}' } }),
    toolDelta(1, { id: "call_b", type: "function", function: { name: "read_file", arguments: '{"path"' } }),
    toolDelta(1, { function: { arguments: ':"b.txt"}' } }),
    chunk({}, "tool_calls"),
    usage(40, 30),
    done,
  ].join(""),
  "a tool call whose name comes after its first argument piece, input never valid JSON": [
    toolDelta(0, { id: "call_c", function: { arguments: "{not json" } }),
    toolDelta(0, { function: { name: "read_file", arguments: "" } }),
    chunk({}, "tool_calls"),
    done,
  ].join(""),
  "a refusal": [chunk({ role: "assistant", content: null, refusal: "I can't help with that." }), chunk({}, "stop"), done].join(""),
  "content as an array of parts (Mistral)": [chunk({ role: "assistant", content: [{ type: "text", text: "part one" }] }), chunk({ content: "two" }), chunk({}, "stop"), done].join(""),
  "length and content_filter finish reasons": [chunk({ content: "cut" }), chunk({}, "length"), done].join(""),
  "an error object mid-stream": [chunk({ role: "assistant", content: "Par" }), chunk({ content: "tial" }), `data: ${JSON.stringify({ error: { message: "The server is overloaded", type: "server_error", code: 503 } })}\n\n`, done].join(""),
  "malformed JSON mid-stream": [chunk({ content: "ok" }), "data: {not json\n\n", chunk({}, "stop"), done].join(""),
  "a chunk of the wrong shape mid-stream": [chunk({ content: "ok" }), `data: ${JSON.stringify({ ...head, choices: [{ delta: { content: 7 } }] })}\n\n`, chunk({}, "stop"), done].join(""),
  "no finish reason before [DONE]": [chunk({ role: "assistant", content: "never finished" }), done].join(""),
  "a last event without its blank line": [chunk({ content: "x" }), chunk({}, "stop"), `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta: { content: "dropped" } }] })}\n`].join(""),
};

const harness = leanHarness("openai-compatible:m");
const run = harness.run;

describe("lean chat-completions stream", () => {
  for (const [name, body] of Object.entries(bodies)) {
    it(`reads ${name} exactly as the provider's stream does`, async () => {
      await expectSameEvents(harness, body);
      // The provider's parts too, but the text/reasoning start/end bookkeeping of skipped deltas.
      await expectSameParts(harness, body, ["text-start", "text-end", "reasoning-start", "reasoning-end"]);
    });
  }

  it("takes plain deltas itself and hands only the others to the provider", async () => {
    const lean = await run(true, bodies["two tool calls streamed in pieces"]!, 1 << 16);
    expect(lean.error).toBeUndefined();
    // Text first: the provider takes the first event (one marker); the rest go to it in one run
    // that the body's end closes (no marker).
    expect(lean.stats).toEqual({ plain: 0, forwarded: 8, markers: 1 });
    const text = await run(true, bodies["plain text, usage chunk, [DONE]"]!, 1 << 16);
    expect(text.stats).toEqual({ plain: 2, forwarded: 3, markers: 1 });
    expect(text.events).toEqual([
      { type: "text_delta", text: "Hello" },
      { type: "text_delta", text: ", wörld 👋" },
      { type: "finish", reason: "stop", usage: { inputTokens: 12, outputTokens: 3, totalTokens: 15 } },
    ]);
  });

  it("leaves failed and non-SSE answers to the provider", async () => {
    const answers = [
      { status: 503, contentType: "application/json", body: JSON.stringify({ error: { message: "overloaded", type: "server_error" } }) },
      { status: 400, contentType: "application/json", body: JSON.stringify({ error: { message: "bad model", type: "invalid_request_error" } }) },
      { status: 200, contentType: "application/json", body: JSON.stringify({ ...head, object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }] }) },
    ];
    for (const answer of answers) {
      const provider = await run(false, answer.body, 1 << 16, answer);
      const lean = await run(true, answer.body, 1 << 16, answer);
      expect(provider.error).toBeDefined();
      expect({ events: lean.events, error: lean.error }).toEqual({ events: provider.events, error: provider.error });
      expect(lean.stats).toEqual({ plain: 0, forwarded: 0, markers: 0 });
    }
  });

  it("ends the events after the last plain one with the body's end, or with a marker at once when the body goes on", async () => {
    // The answer's body written by the test: what has arrived when is known exactly.
    const answer = () => {
      let body!: ReadableStreamDefaultController<Uint8Array>;
      const stream = new ReadableStream<Uint8Array>({ start: (controller) => void (body = controller) });
      const fetch = (async () => new Response(stream, { headers: { "content-type": "text/event-stream" } })) as typeof globalThis.fetch;
      return { fetch, write: (text: string) => body.enqueue(new TextEncoder().encode(text)), end: () => body.close() };
    };
    const modelOf = (fetch: typeof globalThis.fetch) => createOpenAICompatible({ name: "m", baseURL: "http://127.0.0.1:9/v1", includeUsage: true, fetch }).chatModel("m");
    const options = { prompt: [{ role: "user" as const, content: [{ type: "text" as const, text: "hi" }] }] };
    const kept = (parts: LanguageModelV3StreamPart[]) => parts.filter((part) => !["raw", "text-start", "text-end"].includes(part.type));
    const leanRead = async (fetch: typeof globalThis.fetch) => {
      const lean = new LeanStreams(openAICompatibleFormat, fetch);
      const model = modelOf(lean.fetch);
      const batches = await lean.open((headers) => model.doStream({ ...options, headers, includeRawChunks: true }));
      return { stats: lean.stats, batches: batches[Symbol.asyncIterator]() };
    };
    const first = [chunk({ role: "assistant", content: "" }), chunk({ content: "Hello" }), toolDelta(0, { id: "call_a", type: "function", function: { name: "read_file", arguments: "" } })].join("");
    const rest = [toolDelta(0, { function: { arguments: '{"path":"a.txt"}' } }), chunk({}, "tool_calls"), usage(9, 4), done].join("");

    const byProvider = answer();
    byProvider.write(first + rest);
    byProvider.end();
    const expected: LanguageModelV3StreamPart[] = [];
    for await (const part of (await modelOf(byProvider.fetch).doStream(options)).stream) expected.push(part);
    expect(expected.map((part) => part.type)).toContain("tool-input-start");

    // The whole body there at once: one marker (after the first event, for the provider's metadata).
    const whole = answer();
    whole.write(first + rest);
    whole.end();
    const wholeRead = await leanRead(whole.fetch);
    const wholeParts: LanguageModelV3StreamPart[] = [];
    for (let next = await wholeRead.batches.next(); !next.done; next = await wholeRead.batches.next()) wholeParts.push(...next.value);
    expect(kept(wholeParts)).toEqual(kept(expected));
    expect(wholeRead.stats).toEqual({ plain: 1, forwarded: 5, markers: 1 });

    // The body goes on after a tool call's start: its part comes before any more data, with a marker.
    const slow = answer();
    slow.write(first);
    const slowRead = await leanRead(slow.fetch);
    const slowParts: LanguageModelV3StreamPart[] = [];
    while (!slowParts.some((part) => part.type === "tool-input-start")) {
      const next = await slowRead.batches.next();
      if (next.done) throw new Error("the stream ended early");
      slowParts.push(...next.value);
    }
    slow.write(rest);
    slow.end();
    for (let next = await slowRead.batches.next(); !next.done; next = await slowRead.batches.next()) slowParts.push(...next.value);
    expect(kept(slowParts)).toEqual(kept(expected));
    expect(slowRead.stats).toEqual({ plain: 1, forwarded: 5, markers: 2 });
  });

  it("recognises only chunks the provider's schema takes and its transform turns into deltas", () => {
    expect(isPlainDeltaChunk({ choices: [{ delta: { content: "x" } }] })).toBe(true);
    expect(isPlainDeltaChunk({ id: "a", model: "m", created: 1, choices: [{ index: 0, delta: { role: "assistant", reasoning_content: "r" }, finish_reason: null }] })).toBe(true);
    expect(isPlainDeltaChunk({ choices: [{ delta: { content: "x" }, finish_reason: "stop" }] })).toBe(false);
    expect(isPlainDeltaChunk({ choices: [{ delta: { content: "x" } }], usage: { prompt_tokens: 1 } })).toBe(false);
    expect(isPlainDeltaChunk({ choices: [{ delta: { tool_calls: [] } }] })).toBe(false);
    expect(isPlainDeltaChunk({ choices: [{ delta: { refusal: "no" } }] })).toBe(false);
    expect(isPlainDeltaChunk({ choices: [{ delta: { content: [{ type: "text", text: "x" }] } }] })).toBe(false);
    expect(isPlainDeltaChunk({ choices: [{ delta: { content: 7 } }] })).toBe(false);
    expect(isPlainDeltaChunk({ choices: [{ delta: { role: "tool", content: "x" } }] })).toBe(false);
    expect(isPlainDeltaChunk({ choices: [] })).toBe(false);
    expect(isPlainDeltaChunk({ error: { message: "x" }, choices: [{ delta: { content: "x" } }] })).toBe(false);
    expect(isPlainDeltaChunk({ id: 5, choices: [{ delta: { content: "x" } }] })).toBe(false);
  });

  it("splits SSE like eventsource-parser, whatever the slices", () => {
    const text = "\uFEFFdata: a\r\n\r\n: comment\ndata:b\ndata\nid: 3\n\ndata: c\r\rdata: tail-without-blank-line\n";
    for (const size of [1, 2, 3, text.length]) {
      const sse = new SseData();
      const events: string[] = [];
      for (let i = 0; i < text.length; i += size) events.push(...sse.push(text.slice(i, i + size)));
      expect(events).toEqual(["a", "b\n", "c"]);
    }
  });

  it("hands SSE events out one at a time, an event split across reads once it is complete", () => {
    const sse = new SseData();
    sse.append("data: a\n\ndata: b\r");
    expect(sse.next()).toBe("a");
    expect(sse.next()).toBeUndefined(); // "b" is not complete; the CR may be half of a CRLF
    sse.append("\n\r\ndata: c\n");
    expect(sse.next()).toBe("b");
    expect(sse.next()).toBeUndefined();
    sse.append("data: d\n\n");
    expect([sse.next(), sse.next()]).toEqual(["c\nd", undefined]);
  });
});
