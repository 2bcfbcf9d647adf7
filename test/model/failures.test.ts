import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createModelAdapter, ModelError, type ModelAdapter } from "../../src/model/index.js";
import { startMockAnthropic, startMockOpenAI, type MockFailure, type MockProviderServer, type MockResponse } from "../../src/testing/index.js";
import { closedPort, collect, streamError, user } from "./helpers.js";

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
beforeAll(() => void process.on("unhandledRejection", onUnhandled));
afterAll(async () => {
  await new Promise((resolve) => setTimeout(resolve, 50));
  process.off("unhandledRejection", onUnhandled);
  expect(unhandled).toEqual([]);
});

let servers: MockProviderServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

const request = { items: [user("hello")], tools: [] };
const fresh = (): AbortSignal => new AbortController().signal;

type Format = "openai" | "anthropic";
const specs: Record<Format, { spec: string; env: Record<string, string> }> = {
  openai: { spec: "openai:gpt-4.1", env: { OPENAI_API_KEY: "sk-openai-test" } },
  anthropic: { spec: "anthropic:claude-sonnet-4-5", env: { ANTHROPIC_API_KEY: "sk-ant-test" } },
};

async function adapterFor(format: Format, responses: MockResponse[], maxRetries = 0): Promise<{ mock: MockProviderServer; adapter: ModelAdapter }> {
  const mock = await (format === "openai" ? startMockOpenAI({ responses }) : startMockAnthropic({ responses }));
  servers.push(mock);
  const { spec, env } = specs[format];
  const adapter = createModelAdapter({ spec, env, baseUrl: mock.baseUrl, retry: { maxRetries, initialDelayMs: 5 } });
  return { mock, adapter };
}

async function failure(format: Format, response: MockFailure): Promise<{ error: ModelError; elapsed: number; mock: MockProviderServer }> {
  const { mock, adapter } = await adapterFor(format, [response]);
  const started = Date.now();
  const error = await streamError(adapter, request, fresh());
  expect(error).toBeInstanceOf(ModelError);
  return { error: error as ModelError, elapsed: Date.now() - started, mock };
}

describe.each(["openai", "anthropic"] as const)("%s failures become clear ModelErrors", (format) => {
  const keyVar = format === "openai" ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY";

  it("401 names the variable to check", async () => {
    const { error, elapsed } = await failure(format, { status: 401, body: "invalid api key" });
    expect(error.kind).toBe("auth");
    expect(error.status).toBe(401);
    expect(error.message).toBe(`${format} rejected the API key (401): check ${keyVar}; server said: "invalid api key"`);
    expect(elapsed).toBeLessThan(5_000);
  });

  it("403, 404, 429, 500, 503 each say what to do", async () => {
    const expectations: Array<[number, ModelError["kind"], string]> = [
      [403, "auth", `${format} refused access (403) to model`],
      [404, "config", `${format} has no model '${specs[format].spec.split(":")[1]}' at http://127.0.0.1:`],
      [429, "rate_limit", `${format} rate limit or quota exceeded (429): wait and try again`],
      [500, "server", `${format} had a server error (500): try again later`],
      [503, "server", `${format} had a server error (503): try again later`],
    ];
    for (const [status, kind, text] of expectations) {
      const { error } = await failure(format, { status });
      expect(error.kind, `status ${status}`).toBe(kind);
      expect(error.status).toBe(status);
      expect(error.message).toContain(text);
    }
  });

  it("a malformed SSE body", async () => {
    const { error } = await failure(format, { malformed: true });
    expect(error.kind).toBe("bad_response");
    expect(error.message).toMatch(new RegExp(`^${format} sent a malformed response stream .*: check that http://127\\.0\\.0\\.1:\\d+/v1 is the right API endpoint$`));
  });

  it("a stream truncated mid-way is not retried", async () => {
    const { mock, adapter } = await adapterFor(format, [{ truncate: true }, { text: "should not be requested" }], 2);
    const error = await streamError(adapter, request, fresh());
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).kind).toBe("bad_response");
    expect(error.message).toMatch(new RegExp(`^${format}'s response stream broke off before the model finished`));
    expect(await mock.responseEnd(0)).toBe("truncated");
    expect(mock.requests).toHaveLength(1);
  });

  it("5xx and 429 are retried before anything streamed, with backoff, and then succeed", async () => {
    const { mock, adapter } = await adapterFor(format, [{ status: 500 }, { status: 429 }, { text: "recovered" }], 2);
    const events = await collect(adapter, request, fresh());
    expect(events.at(-1)).toMatchObject({ type: "finish", reason: "stop" });
    expect(mock.requests).toHaveLength(3);
  });

  it("retries are bounded and a 401 is never retried", async () => {
    const bounded = await adapterFor(format, [{ status: 503 }, { status: 503 }, { status: 503 }, { text: "too late" }], 2);
    expect((await streamError(bounded.adapter, request, fresh())).message).toContain("(503)");
    expect(bounded.mock.requests).toHaveLength(3);

    const auth = await adapterFor(format, [{ status: 401 }, { text: "never" }], 2);
    expect((await streamError(auth.adapter, request, fresh())).message).toContain("(401)");
    expect(auth.mock.requests).toHaveLength(1);
  });

  it("abort mid-stream ends within 200 ms and the server sees the disconnect", async () => {
    const { mock, adapter } = await adapterFor(format, [{ slow: 25 }]);
    const controller = new AbortController();
    let deltas = 0;
    let abortedAt = 0;
    let caught: unknown;
    try {
      for await (const event of adapter.stream(request, controller.signal)) {
        if (event.type === "text_delta") deltas += 1;
        if (deltas === 3 && abortedAt === 0) {
          abortedAt = performance.now();
          controller.abort();
        }
        expect(abortedAt === 0 || event.type !== "finish").toBe(true);
      }
    } catch (error) {
      caught = error;
    }
    const elapsed = performance.now() - abortedAt;
    expect(abortedAt).toBeGreaterThan(0);
    expect((caught as Error).name).toBe("AbortError");
    expect(elapsed).toBeLessThan(200);
    expect(await mock.responseEnd(0)).toBe("client_disconnected");
  });
});

describe("connection and configuration failures", () => {
  it("a refused connection names the URL and asks whether Ollama runs", async () => {
    const port = await closedPort();
    const baseUrl = `http://127.0.0.1:${port}/v1`;
    const adapter = createModelAdapter({ spec: "ollama:qwen3", baseUrl, env: {}, retry: { maxRetries: 1, initialDelayMs: 5 } });
    const error = (await streamError(adapter, request, fresh())) as ModelError;
    expect(error.kind).toBe("connection");
    expect(error.message).toBe(`could not connect to ${baseUrl} — is Ollama running? (start it with 'ollama serve') (ECONNREFUSED)`);
  });

  it("ollama's 404 suggests pulling the model", async () => {
    const mock = await startMockOpenAI({ responses: [{ status: 404, body: "model 'qwen3' not found, try pulling it first" }] });
    servers.push(mock);
    const adapter = createModelAdapter({ spec: "ollama:qwen3", baseUrl: mock.baseUrl, env: {}, retry: { maxRetries: 0 } });
    const error = (await streamError(adapter, request, fresh())) as ModelError;
    expect(error.message).toBe(
      `ollama has no model 'qwen3' at ${mock.baseUrl} (404): run 'ollama pull qwen3'; server said: "model 'qwen3' not found, try pulling it first"`,
    );
  });

  it("a missing key fails at the first call, before any request, naming the variable", async () => {
    const mock = await startMockAnthropic({ responses: [{ text: "never" }] });
    servers.push(mock);
    const adapter = createModelAdapter({ spec: "anthropic:claude-sonnet-4-5", baseUrl: mock.baseUrl, env: {} });
    const error = (await streamError(adapter, request, fresh())) as ModelError;
    expect(error.kind).toBe("auth");
    expect(error.message).toContain("set ANTHROPIC_API_KEY");
    expect(mock.requests).toHaveLength(0);
  });

  it("a local server that wants a key: 401 says to set AGENTKIT_API_KEY; the key is sent once set", async () => {
    const mock = await startMockOpenAI({ responses: [{ status: 401, body: "missing key" }, { text: "ok" }] });
    servers.push(mock);
    const bare = createModelAdapter({ spec: "openai-compatible:local", baseUrl: mock.baseUrl, env: {}, retry: { maxRetries: 0 } });
    expect((await streamError(bare, request, fresh())).message).toContain("requires an API key (401): set AGENTKIT_API_KEY");
    const keyed = createModelAdapter({ spec: "openai-compatible:local", baseUrl: mock.baseUrl, env: { AGENTKIT_API_KEY: "local-secret" } });
    await collect(keyed, request, fresh());
    expect(mock.requests[1]?.headers.authorization).toBe("Bearer local-secret");
  });

  it("a server that goes silent mid-stream fails after the idle timeout instead of hanging", async () => {
    const mock = await startMockOpenAI({ responses: [{ text: "one two three", slow: 5_000 }] });
    servers.push(mock);
    const adapter = createModelAdapter({ spec: "openai-compatible:m", baseUrl: mock.baseUrl, env: {}, timeouts: { idleMs: 150 } });
    const started = performance.now();
    const error = (await streamError(adapter, request, fresh())) as ModelError;
    expect(error).toBeInstanceOf(ModelError);
    expect(error.kind).toBe("timeout");
    expect(error.message).toBe("openai-compatible server sent nothing for 150 ms mid-stream (idle timeout); the server may be stuck — try again");
    expect(performance.now() - started).toBeLessThan(4_000);
    expect(await mock.responseEnd(0)).toBe("client_disconnected");
    expect(mock.requests).toHaveLength(1);
  });

  it("a consumer that stops reading early ends the HTTP request", async () => {
    const mock = await startMockAnthropic({ responses: [{ slow: 20 }] });
    servers.push(mock);
    const adapter = createModelAdapter({ spec: "anthropic:claude-sonnet-4-5", baseUrl: mock.baseUrl, env: { ANTHROPIC_API_KEY: "k" } });
    for await (const event of adapter.stream(request, fresh())) if (event.type === "text_delta") break;
    expect(await mock.responseEnd(0)).toBe("client_disconnected");
  });

  it("an already aborted signal never reaches the network", async () => {
    const mock = await startMockOpenAI({ responses: [{ text: "never" }] });
    servers.push(mock);
    const adapter = createModelAdapter({ spec: "openai-compatible:m", baseUrl: mock.baseUrl, env: {} });
    const error = await streamError(adapter, request, AbortSignal.abort());
    expect(error.name).toBe("AbortError");
    expect(mock.requests).toHaveLength(0);
  });

  it("abort during a retry backoff ends promptly", async () => {
    const mock = await startMockOpenAI({ responses: [{ status: 503 }, { text: "late" }] });
    servers.push(mock);
    const adapter = createModelAdapter({ spec: "openai-compatible:m", baseUrl: mock.baseUrl, env: {}, retry: { maxRetries: 2, initialDelayMs: 10_000 } });
    const controller = new AbortController();
    const pending = streamError(adapter, request, controller.signal);
    await mock.waitForRequests(1);
    await mock.responseEnd(0);
    const abortedAt = performance.now();
    controller.abort();
    expect((await pending).name).toBe("AbortError");
    expect(performance.now() - abortedAt).toBeLessThan(200);
    expect(mock.requests).toHaveLength(1);
  });
});
