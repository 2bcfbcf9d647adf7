import { afterEach, describe, expect, it } from "vitest";
import { createModelAdapter } from "../../src/model/index.js";
import { startMockAnthropic, startMockOpenAI, type MockProviderServer } from "../../src/testing/index.js";
import { collect, streamError, textOf, user } from "./helpers.js";

let servers: MockProviderServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

describe("mock provider servers", () => {
  it("answer from the request (function form), record requests, and say when the script ran out", async () => {
    const mock = await startMockOpenAI({ responses: [(req) => ({ text: `you sent ${req.messages.length} message(s) to ${req.path}` })] });
    servers.push(mock);
    const adapter = createModelAdapter({ spec: "openai-compatible:m", baseUrl: mock.baseUrl, env: {}, retry: { maxRetries: 0 } });
    const events = await collect(adapter, { items: [user("one")], tools: [] });
    expect(textOf(events)).toBe("you sent 1 message(s) to /v1/chat/completions");
    expect(mock.requests[0]).toMatchObject({ index: 0, method: "POST", headers: { "content-type": "application/json" } });
    expect(await mock.responseEnd(0)).toBe("completed");

    const error = await streamError(adapter, { items: [user("two")], tools: [] });
    expect(error.message).toContain("no scripted response left for request #2");
    await expect(mock.waitForRequests(2)).resolves.toHaveLength(2);
  });

  it("push() appends answers; whenEmpty repeats; an unknown path is a 404", async () => {
    const mock = await startMockAnthropic({ whenEmpty: { text: "default" } });
    servers.push(mock);
    mock.push({ text: "pushed" });
    const adapter = createModelAdapter({ spec: "anthropic:claude-haiku-4-5", baseUrl: mock.baseUrl, env: { ANTHROPIC_API_KEY: "k" } });
    expect(textOf(await collect(adapter, { items: [user("a")], tools: [] }))).toBe("pushed");
    expect(textOf(await collect(adapter, { items: [user("b")], tools: [] }))).toBe("default");
    expect(textOf(await collect(adapter, { items: [user("c")], tools: [] }))).toBe("default");
    const wrong = await fetch(`${mock.baseUrl}/chat/completions`, { method: "POST", body: "{}" });
    expect(wrong.status).toBe(404);
    await wrong.text();
  });

  it("finish 'length' and custom usage reach the adapter's finish event", async () => {
    const mock = await startMockOpenAI({ responses: [{ text: "cut", finish: "length", usage: { inputTokens: 7, outputTokens: 3 } }] });
    servers.push(mock);
    const adapter = createModelAdapter({ spec: "ollama:llama3.2", baseUrl: mock.baseUrl, env: {} });
    const events = await collect(adapter, { items: [user("a")], tools: [] });
    expect(events.at(-1)).toEqual({ type: "finish", reason: "length", usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10 } });
  });
});
