import { afterEach, describe, expect, it } from "vitest";
import { createModelAdapter, type ModelEvent } from "../../src/model/index.js";
import { startMockAnthropic, startMockOpenAI, type MockProviderServer, type MockProviderOptions } from "../../src/testing/index.js";
import { collect, item, readFileTool, textOf, user } from "./helpers.js";

interface Case {
  name: string;
  format: "openai" | "anthropic";
  spec: string;
  env: Record<string, string>;
  /** Whether reasoning deltas reach us (OpenAI Chat Completions has no reasoning field). */
  reasoning: boolean;
  contextWindow: number | undefined;
  auth: (headers: Record<string, string>) => void;
}

const cases: Case[] = [
  {
    name: "openai-compatible",
    format: "openai",
    spec: "openai-compatible:mock-model",
    env: {},
    reasoning: true,
    contextWindow: undefined,
    auth: (h) => expect(h.authorization).toBeUndefined(),
  },
  {
    name: "openai",
    format: "openai",
    spec: "openai:gpt-4.1",
    env: { OPENAI_API_KEY: "sk-openai-test" },
    reasoning: false,
    contextWindow: 1_047_576,
    auth: (h) => expect(h.authorization).toBe("Bearer sk-openai-test"),
  },
  {
    name: "openrouter",
    format: "openai",
    spec: "openrouter:anthropic/claude-sonnet-4.5",
    env: { OPENROUTER_API_KEY: "sk-or-test" },
    reasoning: true,
    contextWindow: 200_000,
    auth: (h) => expect(h.authorization).toBe("Bearer sk-or-test"),
  },
  {
    name: "ollama",
    format: "openai",
    spec: "ollama:qwen3",
    env: {},
    reasoning: true,
    contextWindow: undefined,
    auth: (h) => expect(h.authorization).toBeUndefined(),
  },
  {
    name: "anthropic",
    format: "anthropic",
    spec: "anthropic:claude-sonnet-4-5",
    env: { ANTHROPIC_API_KEY: "sk-ant-test" },
    reasoning: true,
    contextWindow: 200_000,
    auth: (h) => {
      expect(h["x-api-key"]).toBe("sk-ant-test");
      expect(h["anthropic-version"]).toBe("2023-06-01");
    },
  },
];

let servers: MockProviderServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function setup(c: Case, options: MockProviderOptions, extra: { thinking?: boolean; contextWindow?: number } = {}) {
  const mock = await (c.format === "openai" ? startMockOpenAI(options) : startMockAnthropic(options));
  servers.push(mock);
  const adapter = createModelAdapter({ spec: c.spec, baseUrl: mock.baseUrl, env: c.env, retry: { maxRetries: 0 }, ...extra });
  return { mock, adapter };
}

const signal = (): AbortSignal => new AbortController().signal;

describe.each(cases)("$name adapter against the $format mock", (c) => {
  it("streams reasoning and text in several deltas, then finish with usage", async () => {
    const reply = { reasoning: "The user greets me; I should greet back.", text: "Hello there, nice to meet you!" };
    const { mock, adapter } = await setup(c, { responses: [reply] });
    const events = await collect(adapter, { system: "Be brief.", items: [user("hi")], tools: [] }, signal());

    expect(textOf(events)).toBe(reply.text);
    expect(events.filter((e) => e.type === "text_delta").length).toBeGreaterThan(2);
    if (c.reasoning) {
      expect(textOf(events, "reasoning_delta")).toBe(reply.reasoning);
      expect(events.findIndex((e) => e.type === "reasoning_delta")).toBeLessThan(events.findIndex((e) => e.type === "text_delta"));
    } else {
      expect(events.some((e) => e.type === "reasoning_delta")).toBe(false);
    }
    expect(events.at(-1)).toEqual({ type: "finish", reason: "stop", usage: { inputTokens: 42, outputTokens: 17, totalTokens: 59 } });
    expect(events.filter((e) => e.type === "finish")).toHaveLength(1);

    const [request] = mock.requests;
    c.auth(request?.headers ?? {});
    expect(request?.body.model).toBe(c.spec.slice(c.spec.indexOf(":") + 1));
    expect(request?.body.stream).toBe(true);
    expect(request?.body.max_tokens ?? request?.body.max_completion_tokens).toBe(8192);
    if (c.format === "anthropic") expect(request?.body.system).toEqual([{ type: "text", text: "Be brief." }]);
    else expect(request?.messages[0]).toEqual({ role: "system", content: "Be brief." });
    expect(adapter.capabilities.contextWindow).toBe(c.contextWindow);
  });

  it("streams a tool call's input, then sends the call and its result back correctly", async () => {
    const { mock, adapter } = await setup(c, {
      responses: [
        { reasoning: "I need to read the file.", text: "Let me read it.", toolCalls: [{ name: "read_file", input: { path: "notes/a.txt" } }] },
        { text: "The file says hello." },
      ],
    });
    const first = await collect(adapter, { items: [user("what is in notes/a.txt?")], tools: [readFileTool] }, signal());
    const start = first.find((e) => e.type === "tool_input_start");
    const call = first.find((e): e is Extract<ModelEvent, { type: "tool_call" }> => e.type === "tool_call");
    expect(start).toMatchObject({ toolName: "read_file" });
    const deltas = first.filter((e) => e.type === "tool_input_delta");
    expect(deltas.length).toBeGreaterThan(1);
    expect(JSON.parse(deltas.map((d) => (d.type === "tool_input_delta" ? d.text : "")).join(""))).toEqual({ path: "notes/a.txt" });
    expect(call).toMatchObject({ toolName: "read_file", input: { path: "notes/a.txt" } });
    expect(call?.callId).toBe(start?.type === "tool_input_start" ? start.callId : "missing");
    expect(first.at(-1)).toMatchObject({ type: "finish", reason: "tool_calls" });

    // The tool is offered with its JSON schema, and nothing was executed by the library.
    const tools = mock.requests[0]?.body.tools as Array<Record<string, unknown>>;
    if (c.format === "openai") {
      expect(tools[0]).toMatchObject({ type: "function", function: { name: "read_file", parameters: readFileTool.inputSchema } });
    } else {
      expect(tools[0]).toMatchObject({ name: "read_file", input_schema: readFileTool.inputSchema });
    }

    const callId = call?.callId ?? "";
    const items = [
      user("what is in notes/a.txt?"),
      item(
        "assistant",
        ...(c.reasoning ? [{ type: "reasoning" as const, text: textOf(first, "reasoning_delta") }] : []),
        { type: "text", text: textOf(first) },
        { type: "tool_call", callId, toolName: "read_file", input: { path: "notes/a.txt" } },
      ),
      item("tool", { type: "tool_result", callId, toolName: "read_file", result: { text: "hello", isError: false } }),
    ];
    const second = await collect(adapter, { items, tools: [readFileTool] }, signal());
    expect(textOf(second)).toBe("The file says hello.");

    const messages = mock.requests[1]?.messages ?? [];
    if (c.format === "openai") {
      const assistant = messages.find((m) => m.role === "assistant");
      expect(assistant).toMatchObject({
        content: "Let me read it.",
        tool_calls: [{ id: callId, type: "function", function: { name: "read_file", arguments: '{"path":"notes/a.txt"}' } }],
      });
      if (c.spec.startsWith("openai:")) expect(assistant?.reasoning_content).toBeUndefined();
      else expect(assistant?.reasoning_content).toBe("I need to read the file.");
      expect(messages.indexOf(assistant ?? {})).toBe(messages.length - 2);
      expect(messages.at(-1)).toEqual({ role: "tool", tool_call_id: callId, content: "hello" });
    } else {
      expect(messages).toHaveLength(3);
      expect(messages[1]).toEqual({
        role: "assistant",
        content: [
          // The thinking block goes back with its signature, as Anthropic requires during tool use.
          { type: "thinking", thinking: "I need to read the file.", signature: "mock-signature" },
          { type: "text", text: "Let me read it." },
          { type: "tool_use", id: callId, name: "read_file", input: { path: "notes/a.txt" } },
        ],
      });
      expect(messages[2]).toMatchObject({ role: "user", content: [{ type: "tool_result", tool_use_id: callId, content: "hello" }] });
    }
  });

  it("sends an error tool result as readable error text", async () => {
    const { mock, adapter } = await setup(c, { responses: [{ text: "Sorry, the file is missing." }] });
    const items = [
      user("read it"),
      item("assistant", { type: "tool_call", callId: "call_9", toolName: "read_file", input: { path: "gone.txt" } }),
      item("tool", { type: "tool_result", callId: "call_9", toolName: "read_file", result: { text: "ENOENT: gone.txt does not exist", isError: true } }),
    ];
    await collect(adapter, { items, tools: [readFileTool] }, signal());
    const last = mock.requests[0]?.messages.at(-1);
    if (c.format === "openai") {
      expect(last).toEqual({ role: "tool", tool_call_id: "call_9", content: "Error: ENOENT: gone.txt does not exist" });
    } else {
      expect(last).toMatchObject({
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "call_9", is_error: true, content: "Error: ENOENT: gone.txt does not exist" }],
      });
    }
  });
});

describe("user content reaches both wire formats", () => {
  const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
  const items = [
    item(
      "user",
      { type: "text", text: "what is this?" },
      { type: "media", mediaType: "image/png", data: png },
      { type: "resource", uri: "file:///ws/notes.md", text: "# Notes", mimeType: "text/markdown" },
    ),
  ];

  it("openai: image_url data URL and the resource as text", async () => {
    const { mock, adapter } = await setup(cases[1] as Case, { responses: [{ text: "a pixel" }] });
    await collect(adapter, { items, tools: [] }, signal());
    expect(mock.requests[0]?.messages[0]).toEqual({
      role: "user",
      content: [
        { type: "text", text: "what is this?" },
        { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } },
        { type: "text", text: '<resource uri="file:///ws/notes.md" mimeType="text/markdown">\n# Notes\n</resource>' },
      ],
    });
  });

  it("anthropic: a base64 image block", async () => {
    const { mock, adapter } = await setup(cases[4] as Case, { responses: [{ text: "a pixel" }] });
    await collect(adapter, { items, tools: [] }, signal());
    const content = mock.requests[0]?.messages[0]?.content as Array<Record<string, unknown>>;
    expect(content[1]).toEqual({ type: "image", source: { type: "base64", media_type: "image/png", data: png } });
    expect(content[2]).toMatchObject({ type: "text", text: expect.stringContaining("# Notes") });
  });
});

describe("thinking levels", () => {
  const byName = (name: string): Case => cases.find((c) => c.name === name) as Case;

  it("anthropic: a thinking budget on top of the output limit", async () => {
    const { mock, adapter } = await setup(byName("anthropic"), { responses: [{ text: "ok" }] });
    expect(adapter.capabilities.thinking).toBe(true);
    await collect(adapter, { items: [user("think")], tools: [], thinking: "medium", maxOutputTokens: 1000 }, signal());
    expect(mock.requests[0]?.body.thinking).toEqual({ type: "enabled", budget_tokens: 8192 });
    expect(mock.requests[0]?.body.max_tokens).toBe(1000 + 8192);
  });

  it("openrouter: the unified reasoning object; ollama qwen3: reasoning_effort", async () => {
    const router = await setup(byName("openrouter"), { responses: [{ text: "ok" }] });
    await collect(router.adapter, { items: [user("think")], tools: [], thinking: "high" }, signal());
    expect(router.mock.requests[0]?.body.reasoning).toEqual({ effort: "high" });

    const ollama = await setup(byName("ollama"), { responses: [{ text: "ok" }, { text: "ok" }] });
    expect(ollama.adapter.capabilities.thinking).toBe(true);
    await collect(ollama.adapter, { items: [user("think")], tools: [], thinking: "low" }, signal());
    expect(ollama.mock.requests[0]?.body.reasoning_effort).toBe("low");
    await collect(ollama.adapter, { items: [user("think")], tools: [], thinking: "off" }, signal());
    expect(ollama.mock.requests[1]?.body.reasoning_effort).toBeUndefined();
  });

  it("an unknown openai-compatible model gets no thinking option unless configured", async () => {
    const plain = await setup(byName("openai-compatible"), { responses: [{ text: "ok" }] });
    expect(plain.adapter.capabilities).toMatchObject({ thinking: false, image: false, audio: false });
    await collect(plain.adapter, { items: [user("think")], tools: [], thinking: "high" }, signal());
    expect(plain.mock.requests[0]?.body.reasoning_effort).toBeUndefined();

    const configured = await setup(byName("openai-compatible"), { responses: [{ text: "ok" }] }, { thinking: true, contextWindow: 32_768 });
    expect(configured.adapter.capabilities).toMatchObject({ thinking: true, contextWindow: 32_768 });
    await collect(configured.adapter, { items: [user("think")], tools: [], thinking: "high" }, signal());
    expect(configured.mock.requests[0]?.body.reasoning_effort).toBe("high");
  });
});
