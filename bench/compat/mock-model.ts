/**
 * One loopback server that speaks the four model APIs the vendors' agents call — Anthropic
 * Messages, OpenAI Chat Completions, OpenAI Responses and Gemini generateContent — with one
 * scripted "model" behind them (no keys, no network):
 * - "Create the file /abs/path.txt …" (also .toml, .json, .md: a vendor's own config, for the
 *   sandbox tests) → a call of the request's own write tool for that
 *   path (so the agent asks permission), then, once the tool result is back, "done";
 * - "Count from 1 to 300 …" → a long text streamed slowly (something to cancel);
 * - anything else → "ok"; with `toolEveryPrompt: DIR` (a model that calls a tool on every
 *   prompt, as coding models do) first a write of DIR/acp-tool-N.txt, then "ok".
 * Anthropic and Chat Completions chunks come from src/testing/mock-provider-formats.ts.
 */
import { writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import { anthropicChunks, openAIChunks, splitText, type MockReply } from "../../src/testing/mock-provider-formats.js";

export interface MockModelServer {
  /** `http://127.0.0.1:PORT` (no path). */
  readonly origin: string;
  /** `METHOD path → what was answered`, one line per request (for diagnosis). */
  readonly log: string[];
  close(): Promise<void>;
}

type Api = "anthropic" | "chat" | "responses" | "gemini";

interface Decision {
  reply: MockReply;
  /** ms between chunks */
  pause: number;
}

const SLOW_TEXT = Array.from({ length: 300 }, (_, i) => `${i + 1} `).join("");

export interface MockModelOptions {
  /** Every plain prompt first calls the request's write tool for a new file in this directory. */
  toolEveryPrompt?: string;
}

export async function startMockModel(options: MockModelOptions = {}): Promise<MockModelServer> {
  const log: string[] = [];
  let written = 0;
  const scenario = { toolFile: options.toolEveryPrompt === undefined ? undefined : () => `${options.toolEveryPrompt}/acp-tool-${++written}.txt` };
  const server = createServer((req, res) => {
    void handle(req, res, log, scenario).catch((error: unknown) => {
      log.push(`error ${String(error)}`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, log: string[], scenario: Scenario): Promise<void> {
  const raw = await readBody(req);
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    // not JSON: routes below answer by path alone
  }
  const path = (req.url ?? "/").split("?")[0] ?? "/";
  const method = req.method ?? "GET";
  const api: Api | undefined =
    method !== "POST" ? undefined
    : /\/messages$/.test(path) ? "anthropic"
    : /\/chat\/completions$/.test(path) ? "chat"
    : /\/responses$/.test(path) ? "responses"
    : /:streamGenerateContent$|:generateContent$/.test(path) ? "gemini"
    : undefined;
  if (api === undefined) {
    log.push(`${method} ${path} → ${answerOther(method, path, res)}`);
    return;
  }
  const decision = decide(api, body, scenario);
  if (process.env.COMPAT_MOCK_DUMP) writeFileSync(`${process.env.COMPAT_MOCK_DUMP}/${Date.now()}-${api}.json`, raw);
  const model = typeof body.model === "string" ? body.model : (/models\/([^:]+)/.exec(path)?.[1] ?? "mock-model");
  log.push(`${method} ${path} → ${decision.reply.toolCalls?.[0] ? `tool ${decision.reply.toolCalls[0].name}` : decision.pause > 0 ? "slow text" : JSON.stringify(decision.reply.text)}`);
  if (api === "gemini" && path.endsWith(":generateContent")) {
    sendJson(res, 200, geminiResponse(decision.reply, true));
    return;
  }
  if (api === "chat" && body.stream !== true) {
    sendJson(res, 200, { id: "chatcmpl-mock", object: "chat.completion", created: 1_700_000_000, model, choices: [{ index: 0, message: { role: "assistant", content: decision.reply.text ?? "" }, finish_reason: "stop" }], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } });
    return;
  }
  if (api === "anthropic" && body.stream !== true) {
    sendJson(res, 200, { id: "msg_mock", type: "message", role: "assistant", model, content: [{ type: "text", text: decision.reply.text ?? "ok" }], stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 10, output_tokens: 2 } });
    return;
  }
  const chunks =
    api === "anthropic" ? anthropicChunks(decision.reply, model)
    : api === "chat" ? openAIChunks(decision.reply, model, true)
    : api === "responses" ? responsesChunks(decision.reply, model)
    : geminiChunks(decision.reply);
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  res.flushHeaders();
  for (const chunk of chunks) {
    if (res.destroyed) return;
    res.write(chunk);
    if (decision.pause > 0) await delay(decision.pause);
  }
  if (!res.destroyed) res.end();
}

/** Routes other than a model call: model lists and token counts; the rest is 404 in JSON. */
function answerOther(method: string, path: string, res: ServerResponse): string {
  if (method === "POST" && /count_tokens$/.test(path)) return sendJson(res, 200, { input_tokens: 10 });
  if (method === "POST" && /:countTokens$/.test(path)) return sendJson(res, 200, { totalTokens: 10 });
  if (method === "GET" && /\/models$/.test(path)) return sendJson(res, 200, { object: "list", data: [{ id: "mock-model", object: "model", created: 1_700_000_000, owned_by: "mock" }], models: [] });
  return sendJson(res, 404, { error: { message: `mock model: no route ${method} ${path}`, type: "not_found" } });
}

interface Scenario {
  /** Set for a model that calls a tool on every prompt: the next file to write. */
  toolFile: (() => string) | undefined;
}

/** The scripted model: looks at the newest user-side entry of the conversation and at the tools offered. */
function decide(api: Api, body: Record<string, unknown>, scenario: Scenario): Decision {
  const schema = structuredOutput(body);
  // Structured side requests (Gemini CLI's model router, …): the smallest answer the schema allows.
  if (schema !== undefined) return { reply: { text: JSON.stringify(sample(schema)) }, pause: 0 };
  const tools = toolsOf(api, body);
  // Side requests (titles, summaries, suggestions) offer no tools: a short answer.
  if (tools.length === 0) return { reply: { text: "ok" }, pause: 0 };
  const last = userEntries(api, body).at(-1);
  if (last === undefined || last.kind === "result") return { reply: { text: "done" }, pause: 0 };
  if (/Count from 1 to 300/.test(last.text)) return { reply: { text: SLOW_TEXT, chunkSize: 4 }, pause: 40 };
  const file = /Create the file (\/\S+\.(?:txt|toml|json|md))\b/.exec(last.text)?.[1] ?? scenario.toolFile?.();
  const write = file === undefined ? undefined : writeTool(tools, file);
  if (write) return { reply: { text: `Writing ${file}.`, toolCalls: [write] }, pause: 0 };
  return { reply: { text: "ok" }, pause: 0 };
}

function structuredOutput(body: Record<string, unknown>): unknown {
  const gemini = body.generationConfig as { responseJsonSchema?: unknown; responseSchema?: unknown } | undefined;
  const openai = body.response_format as { type?: string; json_schema?: { schema?: unknown } } | undefined;
  return gemini?.responseJsonSchema ?? gemini?.responseSchema ?? (openai?.type === "json_schema" ? (openai.json_schema?.schema ?? {}) : undefined);
}

/** A minimal value of a JSON schema: first enum value, required properties filled in. */
function sample(schema: unknown): unknown {
  const s = (schema ?? {}) as { type?: string | string[]; enum?: unknown[]; properties?: Record<string, unknown>; required?: string[]; anyOf?: unknown[] };
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if (Array.isArray(s.anyOf) && s.anyOf.length > 0) return sample(s.anyOf[0]);
  const type = (Array.isArray(s.type) ? s.type[0] : s.type)?.toLowerCase();
  if (type === "object" || s.properties) {
    const keys = s.required ?? Object.keys(s.properties ?? {});
    return Object.fromEntries(keys.map((key) => [key, sample(s.properties?.[key])]));
  }
  if (type === "array") return [];
  if (type === "boolean") return false;
  if (type === "number" || type === "integer") return 0;
  return "ok";
}

type Entry = { kind: "text"; text: string } | { kind: "result" };

/** What the user side said, in order: prompt texts and tool results (system text, reminders and assistant turns left out). */
function userEntries(api: Api, body: Record<string, unknown>): Entry[] {
  const list = (value: unknown): Record<string, unknown>[] => (Array.isArray(value) ? (value as Record<string, unknown>[]) : []);
  const text = (value: unknown): Entry[] => {
    const t = typeof value === "string" ? value : "";
    return t === "" || /^\s*<system-reminder>|\[SUGGESTION MODE/.test(t) ? [] : [{ kind: "text", text: t }];
  };
  const blocks = (content: unknown): Entry[] =>
    typeof content === "string" ? text(content)
    : list(content).flatMap((b): Entry[] => (b.type === "tool_result" ? [{ kind: "result" }] : text(b.text)));
  if (api === "anthropic") return list(body.messages).filter((m) => m.role === "user").flatMap((m) => blocks(m.content));
  if (api === "chat") return list(body.messages).flatMap((m): Entry[] => (m.role === "tool" ? [{ kind: "result" }] : m.role === "user" ? blocks(m.content) : []));
  if (api === "responses") {
    return list(body.input).flatMap((item): Entry[] =>
      item.type === "function_call_output" || item.type === "custom_tool_call_output" ? [{ kind: "result" }]
      : item.role === "user" ? (typeof item.content === "string" ? text(item.content) : list(item.content).flatMap((c) => text(c.text)))
      : [],
    );
  }
  return list(body.contents)
    .filter((c) => c.role === "user")
    .flatMap((c) => list(c.parts).flatMap((p): Entry[] => (p.functionResponse !== undefined ? [{ kind: "result" }] : text(p.text))));
}

const WRITE_NAMES = ["Write", "write", "write_file", "create_file", "edit", "shell", "exec_command"];

/** A call of the request's own file-writing tool (chosen by name), with arguments named as its schema names them. */
function writeTool(tools: { name: string; properties: Record<string, unknown> }[], file: string): { name: string; input: Record<string, unknown> } | undefined {
  const tool = WRITE_NAMES.map((name) => tools.find((t) => t.name === name)).find((t) => t !== undefined);
  if (!tool) return undefined;
  const keys = Object.keys(tool.properties);
  if (tool.name === "shell" || tool.name === "exec_command") {
    const command = `printf ok > ${file}`;
    return { name: tool.name, input: keys.includes("cmd") ? { cmd: command } : { command: ["bash", "-lc", command] } };
  }
  const pathKey = keys.find((k) => /^(file_?path|filePath|path|absolute_path|file)$/i.test(k)) ?? "file_path";
  const contentKey = keys.find((k) => /^(content|contents|text|new_string)$/i.test(k)) ?? "content";
  return { name: tool.name, input: { [pathKey]: file, [contentKey]: "ok\n" } };
}

function toolsOf(api: Api, body: Record<string, unknown>): { name: string; properties: Record<string, unknown> }[] {
  const raw = Array.isArray(body.tools) ? (body.tools as Record<string, unknown>[]) : [];
  const props = (schema: unknown): Record<string, unknown> => ((schema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {});
  if (api === "gemini") {
    return raw.flatMap((t) => ((t.functionDeclarations as Record<string, unknown>[] | undefined) ?? []).map((f) => ({ name: String(f.name), properties: props(f.parametersJsonSchema ?? f.parameters) })));
  }
  if (api === "chat") return raw.map((t) => ({ name: String((t.function as Record<string, unknown> | undefined)?.name), properties: props((t.function as Record<string, unknown> | undefined)?.parameters) }));
  return raw.map((t) => ({ name: String(t.name), properties: props(t.input_schema ?? t.parameters) }));
}

function sse(data: unknown, event?: string): string {
  return `${event === undefined ? "" : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`;
}

/** OpenAI Responses API SSE: created, one message item (text deltas), function_call items, completed. */
function responsesChunks(reply: MockReply, model: string): string[] {
  const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
  const response = { id: "resp_mock", object: "response", created_at: 1_700_000_000, model, status: "in_progress", output: [] as unknown[] };
  const out = [sse({ type: "response.created", response }, "response.created")];
  const items: unknown[] = [];
  let index = 0;
  if (reply.text) {
    const item = { type: "message", id: "msg_mock", role: "assistant", status: "in_progress", content: [] as unknown[] };
    out.push(sse({ type: "response.output_item.added", output_index: index, item }, "response.output_item.added"));
    for (const delta of splitText(reply.text, reply.chunkSize ?? 8)) out.push(sse({ type: "response.output_text.delta", item_id: item.id, output_index: index, content_index: 0, delta }, "response.output_text.delta"));
    const done = { ...item, status: "completed", content: [{ type: "output_text", text: reply.text, annotations: [] }] };
    out.push(sse({ type: "response.output_item.done", output_index: index, item: done }, "response.output_item.done"));
    items.push(done);
    index += 1;
  }
  for (const [i, call] of (reply.toolCalls ?? []).entries()) {
    const item = { type: "function_call", id: `fc_mock_${i}`, call_id: `call_mock_${i}`, name: call.name, arguments: JSON.stringify(call.input), status: "completed" };
    out.push(sse({ type: "response.output_item.added", output_index: index, item: { ...item, arguments: "" } }, "response.output_item.added"));
    out.push(sse({ type: "response.output_item.done", output_index: index, item }, "response.output_item.done"));
    items.push(item);
    index += 1;
  }
  out.push(sse({ type: "response.completed", response: { ...response, status: "completed", output: items, usage } }, "response.completed"));
  return out;
}

function geminiResponse(reply: MockReply, whole: boolean, text = reply.text): Record<string, unknown> {
  const parts: unknown[] = [];
  if (text) parts.push({ text });
  if (whole) for (const call of reply.toolCalls ?? []) parts.push({ functionCall: { name: call.name, args: call.input } });
  return {
    candidates: [{ content: { role: "model", parts }, ...(whole ? { finishReason: "STOP" } : {}), index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 2, totalTokenCount: 12 },
    modelVersion: "mock-model",
  };
}

/** Gemini streamGenerateContent?alt=sse: text pieces, then the function calls with finishReason STOP. */
function geminiChunks(reply: MockReply): string[] {
  const pieces = splitText(reply.text ?? "", reply.chunkSize ?? 8);
  const out = pieces.slice(0, -1).map((text) => `data: ${JSON.stringify(geminiResponse(reply, false, text))}\r\n\r\n`);
  out.push(`data: ${JSON.stringify(geminiResponse(reply, true, pieces.at(-1)))}\r\n\r\n`);
  return out;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (chunk: Buffer) => parts.push(chunk));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, payload: unknown): string {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(payload));
  return String(status);
}
