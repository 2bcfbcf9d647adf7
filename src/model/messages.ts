import type {
  LanguageModelV3FilePart,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3TextPart,
  LanguageModelV3ToolResultPart,
  SharedV3ProviderOptions,
} from "@ai-sdk/provider";
import type { AssistantContent, ModelMessage, ToolResultPart, UserContent } from "ai";
import type { Item, Part } from "../core/index.js";

type AssistantPart = Exclude<AssistantContent, string>[number];
type UserPart = Exclude<UserContent, string>[number];
type ReasoningOptions = Extract<AssistantPart, { type: "reasoning" }>["providerOptions"];

/** Options of `toModelMessages`: how reasoning parts are sent back to a provider. */
export interface ConvertOptions {
  /**
   * Provider data to send back with a reasoning part (Anthropic's thinking signature).
   * Return `"drop"` to leave the part out (a provider that cannot take it unsigned).
   */
  reasoning?: (text: string) => ReasoningOptions | "drop";
}

/**
 * Converts our transcript into AI SDK messages. Keeps it valid for strict providers: every
 * tool call is answered by a tool result before the next message (an unanswered call gets an
 * error result), results without a call are dropped, and empty parts are left out.
 */
export function toModelMessages(items: readonly Item[], options: ConvertOptions = {}): ModelMessage[] {
  const messages: ModelMessage[] = [];
  let pending = new Map<string, string>(); // callId → toolName, awaiting a result
  let results: ToolResultPart[] = [];

  const flushResults = (): void => {
    for (const [callId, toolName] of pending) {
      results.push({
        type: "tool-result",
        toolCallId: callId,
        toolName,
        output: { type: "error-text", value: "The tool call was interrupted and produced no result." },
      });
    }
    if (results.length > 0) messages.push({ role: "tool", content: results });
    pending = new Map();
    results = [];
  };

  for (const item of items) {
    if (item.role === "tool") {
      for (const part of item.parts) {
        if (part.type !== "tool_result" || !pending.has(part.callId)) continue;
        pending.delete(part.callId);
        results.push({
          type: "tool-result",
          toolCallId: part.callId,
          toolName: part.toolName,
          // Error results stay readable text; Anthropic also flags them (is_error).
          output: part.result.isError ? { type: "error-text", value: errorText(part.result.text) } : { type: "text", value: part.result.text },
        });
      }
      continue;
    }
    flushResults();
    if (item.role === "system") {
      const text = item.parts.map((p) => (p.type === "text" ? p.text : "")).join("");
      if (text !== "") messages.push({ role: "system", content: text });
    } else if (item.role === "user") {
      const content = item.parts.flatMap(userPart);
      if (content.length > 0) messages.push({ role: "user", content });
    } else {
      const content = item.parts.flatMap((part) => assistantPart(part, options));
      for (const part of content) if (part.type === "tool-call") pending.set(part.toolCallId, part.toolName);
      if (content.length > 0) messages.push({ role: "assistant", content });
    }
  }
  flushResults();
  return messages;
}

function userPart(part: Part): UserPart[] {
  switch (part.type) {
    case "text":
      return part.text === "" ? [] : [{ type: "text", text: part.text }];
    case "media":
      return part.mediaType.startsWith("image/")
        ? [{ type: "image", image: part.data, mediaType: part.mediaType }]
        : [{ type: "file", data: part.data, mediaType: part.mediaType }];
    case "resource_link": {
      const details = [part.title, part.mimeType, part.description].filter((d) => d !== undefined && d !== "");
      const suffix = details.length > 0 ? ` (${details.join("; ")})` : "";
      return [{ type: "text", text: `[Attached resource: ${part.name}](${part.uri})${suffix}` }];
    }
    case "resource":
      return [{ type: "text", text: `<resource uri="${part.uri}"${part.mimeType ? ` mimeType="${part.mimeType}"` : ""}>\n${part.text}\n</resource>` }];
    default:
      // Reasoning and tool parts never come from a user; nothing to send.
      return [];
  }
}

function assistantPart(part: Part, options: ConvertOptions): AssistantPart[] {
  switch (part.type) {
    case "text":
      return part.text === "" ? [] : [{ type: "text", text: part.text }];
    case "reasoning": {
      if (part.text === "") return [];
      const providerOptions = options.reasoning?.(part.text);
      if (providerOptions === "drop") return [];
      return [providerOptions === undefined ? { type: "reasoning", text: part.text } : { type: "reasoning", text: part.text, providerOptions }];
    }
    case "tool_call":
      return [{ type: "tool-call", toolCallId: part.callId, toolName: part.toolName, input: toolInput(part.input) }];
    default:
      return [];
  }
}

/** OpenAI-style APIs have no error flag on tool results, so the text itself says so. */
function errorText(text: string): string {
  return /^\s*error\b/i.test(text) ? text : `Error: ${text}`;
}

/** Providers require an object; a call whose input never parsed is replayed as `{}`. */
function toolInput(input: unknown): Record<string, unknown> {
  let value = input;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      return {};
    }
  }
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * The same messages in the provider-level prompt form that `doStream` takes (what `streamText`
 * would build): images become file parts, a system prompt goes first.
 */
export function toProviderPrompt(system: string | undefined, messages: readonly ModelMessage[]): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Prompt = system === undefined || system === "" ? [] : [{ role: "system", content: system }];
  for (const message of messages) {
    switch (message.role) {
      case "system":
        prompt.push({ role: "system", content: message.content });
        break;
      case "user":
        prompt.push({
          role: "user",
          content: typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content.map(providerUserPart),
        });
        break;
      case "assistant":
        prompt.push({
          role: "assistant",
          content: typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content.flatMap(providerAssistantPart),
        });
        break;
      case "tool":
        prompt.push({ role: "tool", content: message.content.flatMap((part) => (part.type === "tool-result" ? [part as LanguageModelV3ToolResultPart] : [])) });
        break;
    }
  }
  return prompt;
}

function providerUserPart(part: UserPart): LanguageModelV3TextPart | LanguageModelV3FilePart {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text };
    case "image":
      return { type: "file", data: part.image as string, mediaType: part.mediaType ?? "image/*" };
    case "file":
      return { type: "file", data: part.data as string, mediaType: part.mediaType };
  }
}

function providerAssistantPart(part: AssistantPart): Extract<LanguageModelV3Message, { role: "assistant" }>["content"] {
  switch (part.type) {
    case "text":
      return [{ type: "text", text: part.text }];
    case "reasoning":
      return [part.providerOptions === undefined ? { type: "reasoning", text: part.text } : { type: "reasoning", text: part.text, providerOptions: part.providerOptions as SharedV3ProviderOptions }];
    case "tool-call":
      return [{ type: "tool-call", toolCallId: part.toolCallId, toolName: part.toolName, input: part.input }];
    default:
      return []; // this module never produces other assistant parts
  }
}
