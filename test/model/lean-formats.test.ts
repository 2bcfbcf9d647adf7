import { describe, expect, it } from "vitest";
import { anthropicFormat, openAIChatFormat } from "../../src/model/lean-formats.js";
import { expectSameEvents, expectSameParts, leanHarness } from "./lean-support.js";

// The lean path for the Anthropic Messages stream and the official OpenAI provider (Chat
// Completions, what `openai:` models use), against each provider's own stream: SSE written in
// the shape the providers document (event names, ping, thinking with signatures, tool input as
// partial JSON, usage with cache tokens, every stop reason, errors mid-stream), read whole and
// in 7- and 1-byte slices, must give the same parts and the same adapter events or error.

// ---- Anthropic Messages ----
const ev = (data: { type: string } & Record<string, unknown>): string => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
const messageStart = (usage: object = { input_tokens: 25, output_tokens: 1 }): string =>
  ev({
    type: "message_start",
    message: { id: "msg_01XFDUDYJgAACzvnptvVoYEL", type: "message", role: "assistant", content: [], model: "claude-sonnet-4-5-20250929", stop_reason: null, stop_sequence: null, usage },
  });
const blockStart = (index: number, block: object): string => ev({ type: "content_block_start", index, content_block: block });
const delta = (index: number, d: object): string => ev({ type: "content_block_delta", index, delta: d });
const text = (index: number, t: string): string => delta(index, { type: "text_delta", text: t });
const blockStop = (index: number): string => ev({ type: "content_block_stop", index });
const messageDelta = (stop: string | null, usage: object = { output_tokens: 15 }): string => ev({ type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage });
const ping = ev({ type: "ping" });
const messageStop = ev({ type: "message_stop" });
const textBlock = (index: number, ...pieces: string[]): string => [blockStart(index, { type: "text", text: "" }), ...pieces.map((p) => text(index, p)), blockStop(index)].join("");

const anthropicBodies: Record<string, string> = {
  "plain text with pings": [messageStart(), blockStart(0, { type: "text", text: "" }), ping, text(0, "Hello"), text(0, ", wörld 👋"), ping, text(0, "!"), blockStop(0), messageDelta("end_turn"), messageStop].join(""),
  "thinking with a signature, then text; usage with cache tokens": [
    messageStart({ input_tokens: 50, cache_creation_input_tokens: 10, cache_read_input_tokens: 2048, output_tokens: 1 }),
    blockStart(0, { type: "thinking", thinking: "", signature: "" }),
    delta(0, { type: "thinking_delta", thinking: "Let me work through " }),
    delta(0, { type: "thinking_delta", thinking: "this step by step." }),
    delta(0, { type: "signature_delta", signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds" }),
    blockStop(0),
    textBlock(1, "The answer ", "is 42."),
    messageDelta("end_turn", { output_tokens: 120 }),
    messageStop,
  ].join(""),
  "redacted thinking": [
    messageStart(),
    blockStart(0, { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP" }),
    blockStop(0),
    textBlock(1, "Done."),
    messageDelta("end_turn"),
    messageStop,
  ].join(""),
  "text, then two tool calls with partial JSON input": [
    messageStart(),
    textBlock(0, "Reading both."),
    blockStart(1, { type: "tool_use", id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", name: "read_file", input: {} }),
    delta(1, { type: "input_json_delta", partial_json: "" }),
    delta(1, { type: "input_json_delta", partial_json: '{"pa' }),
    delta(1, { type: "input_json_delta", partial_json: 'th": "a.txt"}' }),
    blockStop(1),
    blockStart(2, { type: "tool_use", id: "toolu_02", name: "read_file", input: {} }),
    delta(2, { type: "input_json_delta", partial_json: '{"path":"b.txt"}' }),
    blockStop(2),
    messageDelta("tool_use", { output_tokens: 89 }),
    messageStop,
  ].join(""),
  "a tool call whose input never becomes valid JSON": [
    messageStart(),
    blockStart(0, { type: "tool_use", id: "toolu_03", name: "read_file", input: {} }),
    delta(0, { type: "input_json_delta", partial_json: "{not json" }),
    blockStop(0),
    messageDelta("tool_use"),
    messageStop,
  ].join(""),
  "max_tokens, stop_sequence and refusal stop reasons": [messageStart(), textBlock(0, "cut"), messageDelta("max_tokens"), messageStop].join(""),
  "a stop sequence": [messageStart(), textBlock(0, "one, two"), ev({ type: "message_delta", delta: { stop_reason: "stop_sequence", stop_sequence: "three" }, usage: { output_tokens: 4 } }), messageStop].join(""),
  "a refusal": [messageStart(), textBlock(0, "I can't"), messageDelta("refusal"), messageStop].join(""),
  "an overloaded error mid-stream": [
    messageStart(),
    blockStart(0, { type: "text", text: "" }),
    text(0, "Par"),
    text(0, "tial"),
    ev({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
  ].join(""),
  "an error as the first event": [ev({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })].join(""),
  "an api error after message_start": [messageStart(), ping, ev({ type: "error", error: { type: "api_error", message: "Internal server error" } })].join(""),
  "malformed JSON mid-stream": [messageStart(), textBlock(0, "ok"), "event: content_block_delta\ndata: {not json\n\n", messageDelta("end_turn"), messageStop].join(""),
  "a delta of the wrong shape mid-stream": [messageStart(), blockStart(0, { type: "text", text: "" }), text(0, "ok"), delta(0, { type: "text_delta", text: 7 }), blockStop(0), messageDelta("end_turn"), messageStop].join(""),
  "an unknown event type": [messageStart(), textBlock(0, "ok"), ev({ type: "surprise", x: 1 }), messageDelta("end_turn"), messageStop].join(""),
  "a second message_start while the first is open": [messageStart(), textBlock(0, "a"), ev({ type: "message_start", message: { id: "msg_other", usage: { input_tokens: 1 } } }), textBlock(1, "b"), messageDelta("end_turn"), messageStop].join(""),
  "a __proto__ key in a text delta": [messageStart(), blockStart(0, { type: "text", text: "" }), `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x","__proto__":{"a":1}}}\n\n`, blockStop(0), messageDelta("end_turn"), messageStop].join(""),
  "CRLF line ends, no event lines, a BOM": ["\uFEFF", messageStart().replace(/\n/g, "\r\n"), `data: ${JSON.stringify({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })}\r\n\r\n`, text(0, "A").replace(/\n/g, "\r\n"), blockStop(0), messageDelta("end_turn"), messageStop].join(""),
  "the stream ends before message_stop": [messageStart(), textBlock(0, "never finished")].join(""),
};

describe("lean Anthropic Messages stream", () => {
  const harness = leanHarness("anthropic:claude-sonnet-4-5");
  for (const [name, body] of Object.entries(anthropicBodies)) {
    it(`reads ${name} exactly as the provider's stream does`, async () => {
      await expectSameEvents(harness, body);
      await expectSameParts(harness, body);
    });
  }

  it("reads text and thinking deltas itself and hands the rest to the provider", async () => {
    const [lean] = await expectSameEvents(harness, anthropicBodies["plain text with pings"]!);
    // message_start and block start forwarded one by one (a marker each), then 3 text deltas and
    // 2 pings by hand; stop, delta, stop forwarded in one run that the body's end closes.
    expect(lean!.stats).toEqual({ plain: 5, forwarded: 5, markers: 2 });
    expect(lean!.events.map((e) => (e.type === "text_delta" ? e.text : e.type))).toEqual(["Hello", ", wörld 👋", "!", "finish"]);
    const [thinking] = await expectSameEvents(harness, anthropicBodies["thinking with a signature, then text; usage with cache tokens"]!);
    // As above, and the signature, its block's stop and the next block's start in one marked run.
    expect(thinking!.stats).toEqual({ plain: 4, forwarded: 8, markers: 3 });
  });

  it("recognises only text and thinking deltas and pings", () => {
    const plain = (chunk: unknown) => anthropicFormat.plain(chunk, []);
    expect(plain({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "x" } })).toBe(true);
    expect(plain({ type: "content_block_delta", index: 3, delta: { type: "thinking_delta", thinking: "x" } })).toBe(true);
    expect(plain({ type: "ping" })).toBe(true);
    expect(plain({ type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "s" } })).toBe(false);
    expect(plain({ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: "{" } })).toBe(false);
    expect(plain({ type: "content_block_delta", index: "0", delta: { type: "text_delta", text: "x" } })).toBe(false);
    expect(plain({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: null } })).toBe(false);
    expect(plain({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 1 } })).toBe(false);
  });
});

// ---- OpenAI Chat Completions (the official provider) ----
const head = { id: "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT", object: "chat.completion.chunk", created: 1741569952, model: "gpt-4.1-2025-04-14", service_tier: "default", system_fingerprint: "fp_44709d6fcb" };
const chunk = (d: object | null, finish: string | null = null, extra: object = {}): string =>
  `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta: d, logprobs: null, finish_reason: finish }], ...extra })}\n\n`;
const usage = (prompt: number, completion: number, details: object = {}): string =>
  `data: ${JSON.stringify({ ...head, choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, ...details } })}\n\n`;
const done = "data: [DONE]\n\n";
const toolDelta = (index: number, fields: object): string => chunk({ tool_calls: [{ index, ...fields }] });

const openAIBodies: Record<string, string> = {
  "plain text, usage chunk, [DONE]": [chunk({ role: "assistant", content: "", refusal: null }), chunk({ content: "Hello" }), chunk({ content: ", wörld 👋" }), chunk({}, "stop"), usage(12, 3), done].join(""),
  "usage with reasoning, cached and prediction tokens": [
    chunk({ role: "assistant", content: "" }),
    chunk({ content: "42" }),
    chunk({}, "stop"),
    usage(100, 20, { prompt_tokens_details: { cached_tokens: 64, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 12, accepted_prediction_tokens: 2, rejected_prediction_tokens: 1 } }),
    done,
  ].join(""),
  "two tool calls streamed in pieces after text": [
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
  "a tool call first, text after": [
    chunk({ role: "assistant", content: null, tool_calls: [{ index: 0, id: "call_x", type: "function", function: { name: "read_file", arguments: "" } }] }),
    toolDelta(0, { function: { arguments: '{"path":"x"}' } }),
    chunk({ content: "and some text" }),
    chunk({ content: " after it" }),
    chunk({}, "tool_calls"),
    done,
  ].join(""),
  "a refusal": [chunk({ role: "assistant", content: null, refusal: "" }), chunk({ refusal: "I can't help with that." }), chunk({}, "stop"), done].join(""),
  "logprobs and annotations": [
    chunk({ role: "assistant", content: "" }),
    `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta: { content: "Hi" }, logprobs: { content: [{ token: "Hi", logprob: -0.1, top_logprobs: [] }], refusal: null }, finish_reason: null }] })}\n\n`,
    chunk({ content: " see", annotations: [{ type: "url_citation", url_citation: { start_index: 0, end_index: 3, url: "https://example.com", title: "Example" } }] }),
    chunk({}, "stop"),
    done,
  ].join(""),
  "length and content_filter finish reasons": [chunk({ role: "assistant", content: "cut" }), chunk({ content: " here" }), chunk({}, "length"), done].join(""),
  "an error object before any output": [chunk({ role: "assistant", content: "" }), `data: ${JSON.stringify({ error: { message: "The server had an error", type: "server_error", param: null, code: null } })}\n\n`, done].join(""),
  "an error object mid-stream": [chunk({ role: "assistant", content: "Par" }), chunk({ content: "tial" }), `data: ${JSON.stringify({ error: { message: "The server is overloaded", type: "server_error", code: "server_error" } })}\n\n`, done].join(""),
  "malformed JSON mid-stream": [chunk({ role: "assistant", content: "ok" }), chunk({ content: "!" }), "data: {not json\n\n", chunk({}, "stop"), done].join(""),
  "a choice without its index mid-stream": [chunk({ role: "assistant", content: "ok" }), `data: ${JSON.stringify({ ...head, choices: [{ delta: { content: "x" } }] })}\n\n`, chunk({}, "stop"), done].join(""),
  "reasoning_content (which this provider does not read)": [chunk({ role: "assistant", content: "", reasoning_content: "hmm" }), chunk({ content: "ok", reasoning_content: "more" }), chunk({}, "stop"), done].join(""),
  "no metadata in the chunks": [`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "a" } }] })}\n\n`, `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "b" } }] })}\n\n`, chunk({}, "stop"), done].join(""),
  "no finish reason before [DONE]": [chunk({ role: "assistant", content: "never finished" }), chunk({ content: "!" }), done].join(""),
  "empty body": "",
};

describe("lean OpenAI Chat Completions stream", () => {
  const harness = leanHarness("openai:gpt-4.1");
  for (const [name, body] of Object.entries(openAIBodies)) {
    it(`reads ${name} exactly as the provider's stream does`, async () => {
      await expectSameEvents(harness, body);
      // The provider's parts too, but the text start/end bookkeeping of skipped deltas.
      await expectSameParts(harness, body, ["text-start", "text-end"]);
    });
  }

  it("reads text deltas itself once the provider has returned its stream", async () => {
    const [lean] = await expectSameEvents(harness, openAIBodies["plain text, usage chunk, [DONE]"]!);
    // The provider reads up to its first output ("Hello"), a marker each; ", wörld 👋" by hand;
    // finish and usage forwarded in one run that the body's end closes.
    expect(lean!.stats).toEqual({ plain: 1, forwarded: 4, markers: 2 });
  });

  it("recognises only text deltas the provider's schema takes", () => {
    const plain = (value: unknown) => openAIChatFormat.plain(value, []);
    expect(plain({ choices: [{ index: 0, delta: { content: "x" } }] })).toBe(true);
    expect(plain({ choices: [{ delta: { content: "x" } }] })).toBe(false);
    expect(plain({ choices: [{ index: 0, delta: { role: "assistant", content: "x" }, logprobs: { content: [] } }] })).toBe(false);
    expect(plain({ choices: [{ index: 0, delta: { content: "x", annotations: [] } }] })).toBe(false);
    expect(plain({ choices: [{ index: 0, delta: { content: "x", refusal: "" } }] })).toBe(false);
    expect(plain({ choices: [{ index: 0, delta: { content: null } }] })).toBe(false);
    expect(plain({ choices: [{ index: 0, delta: { content: "x" }, finish_reason: "stop" }] })).toBe(false);
  });
});
