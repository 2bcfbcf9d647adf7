import { setTimeout as delay } from "node:timers/promises";
import type { Item, Part, ToolResult } from "../core/index.js";
import type { ModelAdapter, ModelCapabilities, ModelEvent, ModelRequest } from "./types.js";

/** The file the demo model writes (and appends to in later turns). */
export const demoNotePath = "agentkit-demo.md";

/** Options of `createDemoModel`. */
export interface DemoModelOptions {
  /** Pause between streamed chunks, so a terminal shows them arriving. Default 0. */
  chunkDelayMs?: number;
}

type DemoCall = { toolName: "write_file" | "edit_file" | "shell"; input: Record<string, unknown> };

/**
 * The built-in demo model: a fixed script, not an LLM, and it says so. A pure function of
 * the transcript (so replays and tests are deterministic), no network. On a prompt it streams
 * a short thought and an answer, then proposes a real tool call — `write_file` of a note that
 * quotes the prompt (`edit_file` appending to it once a previous turn wrote it), or
 * `shell {command: "ls -la"}` when the prompt says "run" or "shell". After the result it
 * reports what happened (written, denied with the reason, or failed) and finishes.
 */
export function createDemoModel(options: DemoModelOptions = {}): ModelAdapter {
  const capabilities: ModelCapabilities = { image: false, audio: false, embeddedContext: true, contextWindow: 32_768, thinking: false };
  return {
    id: "demo",
    capabilities,
    stream: (request, signal) => streamEvents(demoStep(request), signal, options.chunkDelayMs ?? 0),
  };
}

async function* streamEvents(events: ModelEvent[], signal: AbortSignal, chunkDelayMs: number): AsyncGenerator<ModelEvent> {
  for (const event of events) {
    signal.throwIfAborted();
    if (chunkDelayMs > 0) await delay(chunkDelayMs, undefined, { signal });
    else await new Promise<void>((resolve) => setImmediate(resolve));
    signal.throwIfAborted();
    yield event;
  }
}

/** The events of the next step for this transcript. Exported for tests and docs. */
export function demoStep(request: ModelRequest): ModelEvent[] {
  const { items } = request;
  const lastUser = findLastIndex(items, (item) => item.role === "user");
  const prompt = lastUser < 0 ? "" : promptText(items[lastUser] as Item);
  const turn = items.slice(lastUser + 1);
  const results = turn.flatMap((item) => item.parts).filter((p): p is Extract<Part, { type: "tool_result" }> => p.type === "tool_result");
  const out = new EventBuilder(estimateTokens(request));

  if (results.length > 0 || turn.some((item) => item.role === "assistant" && !hasToolCall(item))) {
    const last = results.at(-1);
    out.text(last === undefined ? "(Demo model: nothing more to do for this prompt.)" : outcomeText(last.toolName, last.result));
    return out.finish("stop");
  }

  const offered = new Set(request.tools.map((t) => t.name));
  const firstTurn = !items.slice(0, Math.max(0, lastUser)).some((item) => item.role === "assistant");
  const call = chooseCall(prompt, items, offered);
  out.reasoning(
    `The prompt was "${prompt}". I am the demo model, so I follow a fixed script: ${call ? `propose ${call.toolName} to show a tool call and its approval` : "answer without tools, since none I use are offered"}.`,
  );
  out.text(introText(firstTurn) + (call ? ` ${plan(call)}` : " No file or shell tool is available in this session, so I will stop here."));
  if (call === undefined) return out.finish("stop");
  const callCount = items.flatMap((item) => item.parts).filter((p) => p.type === "tool_call").length;
  out.toolCall(`demo_call_${callCount + 1}`, call);
  return out.finish("tool_calls");
}

function introText(firstTurn: boolean): string {
  if (!firstTurn) return "(Demo model — a fixed script, not an LLM.)";
  return (
    "Hello! I am the built-in **demo model** of agentkit-acp: a fixed script, not an LLM, so I do not really understand your prompt. " +
    "To use a real model, pass `--model provider:model` (for example `--model anthropic:claude-sonnet-4-5` or `--model ollama:qwen3`), " +
    "set AGENTKIT_MODEL, or set an API key such as ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENROUTER_API_KEY."
  );
}

function plan(call: DemoCall): string {
  if (call.toolName === "shell") return "You mentioned running something, so I will run `ls -la` to show a command with its approval.";
  if (call.toolName === "edit_file") return `To show an edit with a diff, I will append your prompt to ${demoNotePath}.`;
  return `To show how tools and permissions work, I will write a small note to ${demoNotePath}.`;
}

function chooseCall(prompt: string, items: Item[], offered: Set<string>): DemoCall | undefined {
  if (/\b(run|shell)\b/i.test(prompt) && offered.has("shell")) return { toolName: "shell", input: { command: "ls -la" } };
  const existing = noteContent(items);
  const line = `- Prompt ${countUserItems(items)}: "${prompt}"`;
  if (existing !== undefined && offered.has("edit_file")) {
    const lastLine = existing.trimEnd().split("\n").at(-1) ?? "";
    if (lastLine !== "") return { toolName: "edit_file", input: { path: demoNotePath, old_text: lastLine, new_text: `${lastLine}\n${line}` } };
  }
  if (!offered.has("write_file")) return undefined;
  const content = `# agentkit-acp demo\n\nWritten by the agentkit-acp demo model (a fixed script, not an LLM).\n\n${line}\n`;
  return { toolName: "write_file", input: { path: demoNotePath, content } };
}

/** The note as the demo's own successful write/edit calls left it, or undefined if none succeeded. */
function noteContent(items: Item[]): string | undefined {
  const results = new Map<string, ToolResult>();
  for (const part of items.flatMap((item) => item.parts)) if (part.type === "tool_result") results.set(part.callId, part.result);
  let content: string | undefined;
  for (const part of items.flatMap((item) => item.parts)) {
    if (part.type !== "tool_call" || results.get(part.callId)?.isError !== false) continue;
    const input = part.input as Record<string, unknown> | null;
    if (input === null || typeof input !== "object" || input.path !== demoNotePath) continue;
    if (part.toolName === "write_file" && typeof input.content === "string") content = input.content;
    if (part.toolName === "edit_file" && content !== undefined && typeof input.old_text === "string" && typeof input.new_text === "string") {
      const replacement = input.new_text;
      content = content.replace(input.old_text, () => replacement);
    }
  }
  return content;
}

function outcomeText(toolName: string, result: ToolResult): string {
  const detail = oneLine(result.text, 300);
  if (result.isError) {
    if (/\b(denied|rejected|refused|not allowed|declined)\b/i.test(result.text)) {
      return `The ${toolName} call was denied, so nothing was changed. The reason given: ${detail} (Demo model — a fixed script, not an LLM.)`;
    }
    return `The ${toolName} call failed: ${detail} (Demo model — a fixed script, not an LLM.)`;
  }
  if (toolName === "shell") {
    const output = result.text.split("\n").slice(0, 8).join("\n");
    return `The command ran. The start of its output:\n\n\`\`\`\n${output}\n\`\`\`\n\nThat is all the demo does. Configure a real model to get real answers.`;
  }
  const verb = toolName === "edit_file" ? "appended your prompt to" : "wrote";
  return `Done: I ${verb} ${demoNotePath}. That is all the demo does — configure a real model (for example \`--model anthropic:claude-sonnet-4-5\`) to get real answers.`;
}

/** Builds the step's events, chunking text so streaming is visible, and counts output. */
class EventBuilder {
  readonly #events: ModelEvent[] = [];
  readonly #inputTokens: number;
  #outputChars = 0;
  constructor(inputTokens: number) {
    this.#inputTokens = inputTokens;
  }
  reasoning(text: string): void {
    for (const chunk of chunks(text)) this.#events.push({ type: "reasoning_delta", text: chunk });
    this.#outputChars += text.length;
  }
  text(text: string): void {
    for (const chunk of chunks(text)) this.#events.push({ type: "text_delta", text: chunk });
    this.#outputChars += text.length;
  }
  toolCall(callId: string, call: DemoCall): void {
    const json = JSON.stringify(call.input);
    this.#events.push({ type: "tool_input_start", callId, toolName: call.toolName });
    for (let i = 0; i < json.length; i += 24) this.#events.push({ type: "tool_input_delta", callId, text: json.slice(i, i + 24) });
    this.#events.push({ type: "tool_call", callId, toolName: call.toolName, input: call.input });
    this.#outputChars += json.length;
  }
  finish(reason: "stop" | "tool_calls"): ModelEvent[] {
    const outputTokens = Math.ceil(this.#outputChars / 4);
    const usage = { inputTokens: this.#inputTokens, outputTokens, totalTokens: this.#inputTokens + outputTokens };
    return [...this.#events, { type: "finish", reason, usage }];
  }
}

/** Splits into chunks of about four words. */
function chunks(text: string): string[] {
  const words = text.match(/\S+\s*/g) ?? [];
  const out: string[] = [];
  for (let i = 0; i < words.length; i += 4) out.push(words.slice(i, i + 4).join(""));
  return out.length > 0 ? out : [text];
}

function estimateTokens(request: ModelRequest): number {
  const chars = (request.system?.length ?? 0) + JSON.stringify(request.items.map((item) => item.parts)).length;
  return Math.ceil(chars / 4);
}

function promptText(item: Item): string {
  const text = item.parts.map((p) => (p.type === "text" ? p.text : "")).join(" ");
  return oneLine(text, 200) || "(no text)";
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

function hasToolCall(item: Item): boolean {
  return item.parts.some((p) => p.type === "tool_call");
}

function countUserItems(items: Item[]): number {
  return items.filter((item) => item.role === "user").length;
}

function findLastIndex<T>(list: readonly T[], test: (value: T) => boolean): number {
  for (let i = list.length - 1; i >= 0; i--) if (test(list[i] as T)) return i;
  return -1;
}
