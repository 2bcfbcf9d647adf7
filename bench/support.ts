/** What the benchmarks read off a process, how they summarise runs (Linux: /proc), and the mock model they share. */
import { readFileSync, readdirSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { anthropicChunks, openAIChunks } from "../src/testing/mock-provider-formats.js";

/** CPU time of every thread of a process so far, in ms (schedstat: ns resolution, unlike getrusage's ticks). */
export function cpuMs(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // the thread ended meanwhile
    }
  }
  return ns / 1e6;
}

function statusKb(pid: number, field: "VmHWM" | "VmRSS"): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) : NaN;
}

/** Peak resident set so far, in MB. */
export function peakRssMb(pid: number): number {
  return statusKb(pid, "VmHWM") / 1024;
}

/** Resident set now, in KiB. */
export function currentRssKb(pid: number): number {
  return statusKb(pid, "VmRSS");
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

/** The value below which `p` percent of the values lie (nearest rank). */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/** The median, and the lowest and highest value. */
export function spread(values: number[]): { median: number; low: number; high: number } {
  return { median: median(values), low: Math.min(...values), high: Math.max(...values) };
}

/**
 * The loopback mock model every side of a benchmark reads: `count` six-character text deltas as a
 * pre-built SSE body in the request's wire format (`/messages`: Anthropic Messages; otherwise
 * OpenAI chat completions), written in 64 KiB slices with backpressure.
 */
export async function startMockModel(count: number): Promise<MockModel> {
  const deltaText = "word, ";
  const text = deltaText.repeat(count);
  const bodies = {
    openai: Buffer.from(openAIChunks({ text, chunkSize: deltaText.length }, "mock", true).join("")),
    anthropic: Buffer.from(anthropicChunks({ text, chunkSize: deltaText.length }, "mock").join("")),
  };
  const model: MockModel = { baseUrl: "", text, deltaText, onRequest: () => undefined, close: () => new Promise((resolve) => server.close(() => resolve())) };
  async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    model.onRequest(performance.now());
    for await (const _ of request); // drain the request body
    const body = request.url?.endsWith("/messages") ? bodies.anthropic : bodies.openai;
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    for (let offset = 0; offset < body.length; offset += 65_536) {
      if (!response.write(body.subarray(offset, offset + 65_536))) await new Promise((resolve) => response.once("drain", resolve));
    }
    response.end();
  }
  const server = createServer((request, response) => void answer(request, response).catch(() => response.destroy()));
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  model.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return model;
}

export interface MockModel {
  /** `http://127.0.0.1:PORT/v1` */
  baseUrl: string;
  /** The whole reply's text. */
  text: string;
  deltaText: string;
  /** Called (with performance.now()) when a request arrives. */
  onRequest: (at: number) => void;
  close(): Promise<void>;
}
