import type { Item, Part } from "../../src/core/index.js";
import type { ModelAdapter, ModelEvent, ModelRequest, ModelToolSpec } from "../../src/model/index.js";

let counter = 0;

export function item(role: Item["role"], ...parts: Part[]): Item {
  counter += 1;
  return { id: `item_${counter}`, role, parts, createdAt: "2026-01-01T00:00:00.000Z" };
}

export const user = (text: string): Item => item("user", { type: "text", text });

export const readFileTool: ModelToolSpec = {
  name: "read_file",
  description: "Read a text file",
  inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"], additionalProperties: false },
};

export async function collect(adapter: ModelAdapter, request: ModelRequest, signal: AbortSignal = new AbortController().signal): Promise<ModelEvent[]> {
  const events: ModelEvent[] = [];
  for await (const event of adapter.stream(request, signal)) events.push(event);
  return events;
}

/** The error a stream ends with (fails the test if it ends normally). */
export async function streamError(adapter: ModelAdapter, request: ModelRequest, signal?: AbortSignal): Promise<Error> {
  try {
    await collect(adapter, request, signal);
  } catch (error) {
    if (error instanceof Error) return error;
    throw new Error(`stream threw a non-Error: ${String(error)}`);
  }
  throw new Error("stream ended without an error");
}

export function textOf(events: ModelEvent[], type: "text_delta" | "reasoning_delta" = "text_delta"): string {
  return events.map((e) => (e.type === type ? e.text : "")).join("");
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const { createServer } = await import("node:net");
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}
