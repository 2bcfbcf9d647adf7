// SSE bodies of the two wire formats the mock provider servers speak. Each builder returns
// the chunks of one response; the server writes them (optionally with delays).

/** One tool call a scripted reply makes. */
export interface MockToolCall {
  /** Defaults to `call_<n>` (OpenAI) or `toolu_<n>` (Anthropic). */
  id?: string;
  name: string;
  input: unknown;
}

/** Token counts a scripted reply reports. */
export interface MockUsage {
  inputTokens: number;
  outputTokens: number;
}

/** A scripted model reply: reasoning, then text, then tool calls, then finish and usage. */
export interface MockReply {
  reasoning?: string;
  text?: string;
  toolCalls?: MockToolCall[];
  /** Defaults to `tool_calls` when there are tool calls, else `stop`. */
  finish?: "stop" | "tool_calls" | "length";
  /** Defaults to 42 in / 17 out. */
  usage?: MockUsage;
  /** Characters per streamed text/reasoning/argument fragment (default 8), so streaming is visible. */
  chunkSize?: number;
  /** Milliseconds between chunks (cancellation tests). Writing stops when the client disconnects. */
  slow?: number;
}

export const defaultMockUsage: MockUsage = { inputTokens: 42, outputTokens: 17 };

export function splitText(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += Math.max(1, size)) out.push(text.slice(i, i + Math.max(1, size)));
  return out;
}

function finishOf(reply: MockReply): "stop" | "tool_calls" | "length" {
  return reply.finish ?? ((reply.toolCalls?.length ?? 0) > 0 ? "tool_calls" : "stop");
}

function sse(data: unknown, event?: string): string {
  return `${event === undefined ? "" : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`;
}

/** OpenAI chat-completions SSE: `reasoning_content`, `content`, streamed tool-call arguments, usage, `[DONE]`. */
export function openAIChunks(reply: MockReply, model: string, includeUsage: boolean): string[] {
  const size = reply.chunkSize ?? 8;
  const base = { id: "chatcmpl-mock", object: "chat.completion.chunk", created: 1_700_000_000, model };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
    sse({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
  const out: string[] = [chunk({ role: "assistant", content: "" })];
  for (const piece of splitText(reply.reasoning ?? "", size)) out.push(chunk({ reasoning_content: piece }));
  for (const piece of splitText(reply.text ?? "", size)) out.push(chunk({ content: piece }));
  (reply.toolCalls ?? []).forEach((call, index) => {
    const id = call.id ?? `call_${index + 1}`;
    out.push(chunk({ tool_calls: [{ index, id, type: "function", function: { name: call.name, arguments: "" } }] }));
    for (const piece of splitText(JSON.stringify(call.input), size)) {
      out.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  out.push(chunk({}, finishOf(reply)));
  if (includeUsage) {
    const usage = reply.usage ?? defaultMockUsage;
    out.push(
      sse({
        ...base,
        choices: [],
        usage: {
          prompt_tokens: usage.inputTokens,
          completion_tokens: usage.outputTokens,
          total_tokens: usage.inputTokens + usage.outputTokens,
        },
      }),
    );
  }
  out.push("data: [DONE]\n\n");
  return out;
}

const anthropicStop = { stop: "end_turn", tool_calls: "tool_use", length: "max_tokens" } as const;

/** Anthropic Messages SSE: message_start, thinking/text/tool_use blocks, message_delta, message_stop. */
export function anthropicChunks(reply: MockReply, model: string): string[] {
  const size = reply.chunkSize ?? 8;
  const usage = reply.usage ?? defaultMockUsage;
  const out: string[] = [
    sse(
      {
        type: "message_start",
        message: {
          id: "msg_mock",
          type: "message",
          role: "assistant",
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: usage.inputTokens, output_tokens: 1 },
        },
      },
      "message_start",
    ),
  ];
  let index = 0;
  const block = (start: Record<string, unknown>, deltas: Array<Record<string, unknown>>): void => {
    out.push(sse({ type: "content_block_start", index, content_block: start }, "content_block_start"));
    for (const delta of deltas) out.push(sse({ type: "content_block_delta", index, delta }, "content_block_delta"));
    out.push(sse({ type: "content_block_stop", index }, "content_block_stop"));
    index += 1;
  };
  if (reply.reasoning) {
    const deltas = splitText(reply.reasoning, size).map((thinking) => ({ type: "thinking_delta", thinking }));
    block({ type: "thinking", thinking: "", signature: "" }, [...deltas, { type: "signature_delta", signature: "mock-signature" }]);
  }
  if (reply.text) {
    block({ type: "text", text: "" }, splitText(reply.text, size).map((text) => ({ type: "text_delta", text })));
  }
  (reply.toolCalls ?? []).forEach((call, i) => {
    const deltas = splitText(JSON.stringify(call.input), size).map((partial_json) => ({ type: "input_json_delta", partial_json }));
    block({ type: "tool_use", id: call.id ?? `toolu_${i + 1}`, name: call.name, input: {} }, deltas);
  });
  out.push(
    sse(
      {
        type: "message_delta",
        delta: { stop_reason: anthropicStop[finishOf(reply)], stop_sequence: null },
        usage: { output_tokens: usage.outputTokens },
      },
      "message_delta",
    ),
  );
  out.push(sse({ type: "message_stop" }, "message_stop"));
  return out;
}

/** The error body each API sends with a failed status. */
export function errorBody(format: "openai" | "anthropic", status: number, message: string): unknown {
  if (format === "openai") return { error: { message, type: status === 401 ? "invalid_request_error" : "server_error", code: null } };
  const type =
    status === 401 ? "authentication_error" : status === 403 ? "permission_error" : status === 404 ? "not_found_error"
    : status === 429 ? "rate_limit_error" : status === 529 ? "overloaded_error" : status >= 500 ? "api_error" : "invalid_request_error";
  return { type: "error", error: { type, message } };
}

/** Chunks that start like a real stream and then turn into garbage. */
export function malformedChunks(format: "openai" | "anthropic", model: string): string[] {
  const good = format === "openai" ? openAIChunks({ text: "Hel" }, model, false).slice(0, 2) : anthropicChunks({ text: "Hel" }, model).slice(0, 3);
  const garbage =
    format === "openai"
      ? 'data: {"id":"chatcmpl-mock","choices":[{"delta":{"content":\n\ndata: <html>502 Bad Gateway</html>\n\n'
      : 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{\n\ndata: <html>502 Bad Gateway</html>\n\n';
  return [...good, garbage];
}
