import { createServer as createHttpServer, type ServerResponse } from "node:http";
import { createServer as createNetServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createModelAdapter, defaultModelTimeouts, ModelError } from "../../src/model/index.js";
import { openAIChunks } from "../../src/testing/mock-provider-formats.js";
import { streamError, user } from "./helpers.js";

// Loopback servers that misbehave in time: each counts requests and tells when the client
// went away, so the tests wait on events (never on sleeps) and use short bounds.
interface Stalling {
  baseUrl: string;
  requests: number;
  /** Resolves when `count` connections have been closed by the client. */
  closed(count: number): Promise<void>;
  close(): Promise<void>;
}

const open: Stalling[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

function tracker(server: Server, sockets: Set<Socket>): Omit<Stalling, "baseUrl"> & { onClose(): void } {
  let closedCount = 0;
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const state = {
    requests: 0,
    onClose(): void {
      closedCount += 1;
      for (const w of waiters.filter((w) => closedCount >= w.count)) w.resolve();
    },
    closed: (count: number) => new Promise<void>((resolve) => (closedCount >= count ? resolve() : waiters.push({ count, resolve }))),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  return state;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return `http://127.0.0.1:${address.port}/v1`;
}

/** Accepts the TCP connection and never sends a byte. */
async function silentServer(): Promise<Stalling> {
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    state.requests += 1;
    socket.on("close", () => state.onClose());
    socket.on("error", () => undefined);
  });
  const state = tracker(server, sockets);
  const s = Object.assign(state, { baseUrl: await listen(server) });
  open.push(s);
  return s;
}

/** Answers with 200 and the SSE headers, then sends `first` chunks of a real stream and stalls. */
async function stallingHttp(first: number): Promise<Stalling> {
  const sockets = new Set<Socket>();
  const chunks = openAIChunks({ text: "one two three four", chunkSize: 4 }, "m", true);
  const server = createHttpServer((request, response: ServerResponse) => {
    state.requests += 1;
    request.resume();
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.flushHeaders();
    for (const chunk of chunks.slice(0, first)) response.write(chunk);
    response.on("close", () => state.onClose());
  });
  server.on("connection", (socket) => sockets.add(socket));
  const state = tracker(server, sockets);
  const s = Object.assign(state, { baseUrl: await listen(server) });
  open.push(s);
  return s;
}

const request = { items: [user("hello")], tools: [] };
const fresh = (): AbortSignal => new AbortController().signal;

describe("time bounds on the model stream (each expiry names its bound)", () => {
  it("a server that accepts and stays silent: connect timeout, retried within the overall budget", async () => {
    const server = await silentServer();
    const adapter = createModelAdapter({
      spec: "openai-compatible:m",
      baseUrl: server.baseUrl,
      env: {},
      retry: { maxRetries: 20, initialDelayMs: 1, maxDelayMs: 1 },
      timeouts: { connectMs: 150, totalMs: 1_000 },
    });
    const error = (await streamError(adapter, request, fresh())) as ModelError;
    expect(error).toBeInstanceOf(ModelError);
    expect(error.kind).toBe("timeout");
    // The numbers named are the ones configured: the connect bound, or the budget that cut the last attempt short (it said "within 461 ms").
    expect(error.message).toMatch(
      new RegExp(`^openai-compatible server at ${server.baseUrl.replaceAll(".", "\\.")} did not answer the request (within 150 ms \\(connect timeout\\)|before the 1000 ms budget ran out \\(connect timeout 150 ms\\));`),
    );
    expect(error.message).not.toContain("could not connect");
    // Twenty retries of 150 ms would need more than the 1 s budget: the error says that it ran out.
    const attempts = Number(/gave up after (\d+) attempts within the 1000 ms budget\)$/.exec(error.message)?.[1]);
    expect(attempts).toBeGreaterThanOrEqual(2);
    expect(attempts).toBeLessThanOrEqual(7);
    expect(server.requests).toBeGreaterThanOrEqual(attempts);
  });

  it("a port fetch refuses is explained ('(bad port)' was all it said); the base URL's source is not guessed", async () => {
    const blocked = createModelAdapter({ spec: "openai-compatible:m", baseUrl: "http://127.0.0.1:1/v1", env: {}, retry: { maxRetries: 0 } });
    const error = (await streamError(blocked, request, fresh())) as ModelError;
    expect(error.message).toContain("(bad port: fetch refuses to connect to port 1, one browsers block; serve the model on another port)");
    const anthropic = createModelAdapter({ spec: "anthropic:claude-x", baseUrl: "http://127.0.0.1:1/v1", env: { ANTHROPIC_API_KEY: "k" }, retry: { maxRetries: 0 } });
    const other = (await streamError(anthropic, request, fresh())) as ModelError;
    expect(other.message).toMatch(/^could not connect to http:\/\/127\.0\.0\.1:1\/v1 — check your network connection and the base URL \(bad port/);
    expect(other.message).not.toContain("AGENTKIT_BASE_URL");
  });

  it("without retries the silent server fails after one connect bound", async () => {
    const server = await silentServer();
    const adapter = createModelAdapter({ spec: "openai-compatible:m", baseUrl: server.baseUrl, env: {}, retry: { maxRetries: 0 }, timeouts: { connectMs: 100 } });
    const started = performance.now();
    const error = (await streamError(adapter, request, fresh())) as ModelError;
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(error.message).toContain("did not answer the request within 100 ms (connect timeout)");
    expect(server.requests).toBe(1);
  });

  it("headers, then nothing: first-byte timeout", async () => {
    const server = await stallingHttp(0);
    const adapter = createModelAdapter({ spec: "openai-compatible:m", baseUrl: server.baseUrl, env: {}, retry: { maxRetries: 0 }, timeouts: { firstByteMs: 120 } });
    const error = (await streamError(adapter, request, fresh())) as ModelError;
    expect(error.kind).toBe("timeout");
    expect(error.message).toBe("openai-compatible server answered but then sent nothing for 120 ms (first-byte timeout); the server may be stuck — try again");
    await server.closed(1);
  });

  it("one chunk, then a stall: idle timeout, never retried (something was streamed)", async () => {
    const server = await stallingHttp(2);
    const adapter = createModelAdapter({ spec: "openai-compatible:m", baseUrl: server.baseUrl, env: {}, retry: { maxRetries: 3, initialDelayMs: 1 }, timeouts: { idleMs: 120 } });
    const error = (await streamError(adapter, request, fresh())) as ModelError;
    expect(error.kind).toBe("timeout");
    expect(error.message).toBe("openai-compatible server sent nothing for 120 ms mid-stream (idle timeout); the server may be stuck — try again");
    await server.closed(1);
    expect(server.requests).toBe(1);
  });

  it("the defaults end a silent model or a stalled stream within 120 s", () => {
    const { connectMs, firstByteMs, idleMs, totalMs } = defaultModelTimeouts;
    expect(totalMs).toBeLessThanOrEqual(120_000); // silent server: every attempt fits in the budget
    expect(Math.max(connectMs, firstByteMs, idleMs)).toBeLessThanOrEqual(120_000); // a stall after data
  });
});
