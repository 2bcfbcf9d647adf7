import type { LanguageModelV3CallOptions, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, beforeAll, expect } from "vitest";
import { createStderrLogger } from "../../src/core/index.js";
import { AiSdkModelAdapter } from "../../src/model/ai-sdk-adapter.js";
import { capabilitiesFor } from "../../src/model/capabilities.js";
import { parseModelSpec } from "../../src/model/model-id.js";
import { createProviderModel } from "../../src/model/providers.js";
import type { LeanStats } from "../../src/model/lean-stream.js";
import { defaultModelTimeouts, type ModelEvent } from "../../src/model/types.js";
import { readFileTool, user } from "./helpers.js";

// The differential harness of the lean stream path (src/model/lean-stream.ts): one loopback
// server answers every request with the scripted body, written in slices of a given size (to
// split events, CRLFs and UTF-8 sequences); a run reads it with the lean path on or off. The
// server is in the test's own process and writes the whole body, and its end, in one turn: when
// the lean path reads, the body's end is there, so its stats, markers included, are exact.

export interface Answer {
  status: number;
  contentType: string;
}

export const sseAnswer: Answer = { status: 200, contentType: "text/event-stream; charset=utf-8" };
/** Slice sizes a body is written in: whole, 7 bytes, 1 byte. */
export const slices = [1 << 16, 7, 1];

export type Outcome = { events: ModelEvent[]; error?: { kind: unknown; message: string }; stats?: LeanStats };

/** Starts the server for the calling test file (vitest hooks) and returns the runners. */
export function leanHarness(specText: string) {
  const sockets = new Set<Socket>();
  let server: Server;
  let baseUrl = "";
  let next = { body: "", slice: 1 << 16, ...sseAnswer };

  beforeAll(async () => {
    server = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        const { body, slice, status, contentType } = next;
        response.writeHead(status, { "content-type": contentType });
        const bytes = Buffer.from(body);
        for (let offset = 0; offset < bytes.length; offset += slice) response.write(bytes.subarray(offset, offset + slice));
        response.end();
      });
    });
    server.on("connection", (socket) => {
      sockets.add(socket);
      socket.once("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const spec = parseModelSpec(specText);
  const handle = (leanStream: boolean) => createProviderModel(spec, { baseUrl, apiKey: "test-key", leanStream });

  /** The adapter's events (or error) for a body. */
  async function run(leanStream: boolean, body: string, slice: number, answer: Answer = sseAnswer): Promise<Outcome> {
    next = { body, slice, ...answer };
    const { model, lean } = await handle(leanStream);
    const adapter = new AiSdkModelAdapter({
      spec,
      model,
      lean,
      capabilities: capabilitiesFor(spec, {}),
      baseUrl,
      envVar: "AGENTKIT_API_KEY",
      hadKey: true,
      maxOutputTokens: 100,
      retry: { maxRetries: 0, initialDelayMs: 1, maxDelayMs: 1 },
      timeouts: defaultModelTimeouts,
      logger: createStderrLogger("error"),
    });
    const events: ModelEvent[] = [];
    try {
      for await (const event of adapter.stream({ items: [user("hi")], tools: [readFileTool] }, new AbortController().signal)) events.push(event);
      return { events, stats: lean?.stats };
    } catch (error) {
      const e = error as { kind?: unknown; message: string };
      return { events, error: { kind: e.kind, message: e.message }, stats: lean?.stats };
    }
  }

  /** The provider's stream parts for a body (raw echoes left out), or the error its `doStream` threw. */
  async function parts(leanStream: boolean, body: string, slice: number): Promise<{ parts: LanguageModelV3StreamPart[]; thrown?: string }> {
    next = { body, slice, ...sseAnswer };
    const { model, lean } = await handle(leanStream);
    const options: LanguageModelV3CallOptions = {
      prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
      maxOutputTokens: 100,
      tools: [{ type: "function", name: readFileTool.name, description: readFileTool.description, inputSchema: readFileTool.inputSchema }],
    };
    const out: LanguageModelV3StreamPart[] = [];
    try {
      if (lean) {
        const batches = await lean.open((headers) => model.doStream({ ...options, headers, includeRawChunks: true }));
        for await (const batch of batches) out.push(...batch.filter((part) => part.type !== "raw"));
      } else {
        const { stream } = await model.doStream(options);
        for await (const part of stream) out.push(part);
      }
      return { parts: out };
    } catch (error) {
      return { parts: out, thrown: (error as Error).message };
    }
  }

  return { run, parts };
}

/** The adapter reads `body` with the lean path exactly as with the provider's stream, in every slicing; returns the lean runs. */
export async function expectSameEvents(harness: ReturnType<typeof leanHarness>, body: string): Promise<Outcome[]> {
  const provider = await harness.run(false, body, 1 << 16);
  const leanRuns: Outcome[] = [];
  for (const slice of slices) {
    const lean = await harness.run(true, body, slice);
    expect({ events: lean.events, error: lean.error }).toEqual({ events: provider.events, error: provider.error });
    // The lean path was taken: plain deltas by hand, the rest through the provider.
    if (body !== "") expect(lean.stats!.plain + lean.stats!.forwarded).toBeGreaterThan(0);
    leanRuns.push(lean);
  }
  return leanRuns;
}

/**
 * The provider's own parts, the lean path's parts: equal up to the first error part (where the
 * lean read ends: the adapter ends there), leaving out `ignored` part types.
 */
export async function expectSameParts(harness: ReturnType<typeof leanHarness>, body: string, ignored: string[] = []): Promise<void> {
  const keep = (result: { parts: LanguageModelV3StreamPart[]; thrown?: string }) => {
    // Sources get a random id from the provider.
    const parts = result.parts.filter((part) => !ignored.includes(part.type)).map((part) => (part.type === "source" ? { ...part, id: "<generated>" } : part));
    const error = parts.findIndex((part) => part.type === "error");
    return { parts: error === -1 ? parts : parts.slice(0, error + 1), thrown: result.thrown };
  };
  const provider = keep(await harness.parts(false, body, 1 << 16));
  for (const slice of slices) expect(keep(await harness.parts(true, body, slice))).toEqual(provider);
}
