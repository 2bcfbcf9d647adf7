import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { ContentBlock, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { SpanKind, errorMessage, injectTraceMeta, isAbortError, recordSpanError, startSpan, withSpanActive } from "../core/index.js";
import type { ToolResult } from "../core/index.js";
import type { JsonSchema } from "../model/types.js";
import { ToolInputError } from "./define.js";
import type { Tool } from "./types.js";

const maxNameLength = 64;

/** Replaces everything outside `[a-zA-Z0-9_-]` with `_` (the tool-name alphabet providers accept). */
export function sanitizeMcpName(name: string): string {
  const cleaned = name.replace(/[^a-zA-Z0-9_-]/g, "_");
  return cleaned.length > 0 ? cleaned : "_";
}

/** `<server>__<tool>`, sanitized, at most 64 characters, unique among `taken`. */
export function mcpToolName(server: string, tool: string, taken: ReadonlySet<string>): string {
  const base = `${sanitizeMcpName(server)}__${sanitizeMcpName(tool)}`.slice(0, maxNameLength);
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const candidate = base.slice(0, maxNameLength - suffix.length) + suffix;
    if (!taken.has(candidate)) return candidate;
  }
}

/** What the tool bridge uses of an MCP client: the MCP SDK's Client, or AcpMcpClient for `acp` servers. */
export type McpToolClient = Pick<Client, "listTools" | "callTool" | "close">;

export interface WrapMcpToolOptions {
  client: McpToolClient;
  server: string;
  tool: McpTool;
  name: string;
  callTimeoutMs: number;
}

/**
 * An MCP tool as one of ours. Kind is "other" whatever the server's annotations claim
 * (a readOnlyHint is the server's word, not something the default policy should trust).
 */
export function wrapMcpTool(options: WrapMcpToolOptions): Tool<Record<string, unknown>> {
  const { client, server, tool, name } = options;
  const label = tool.title ?? tool.annotations?.title ?? tool.name;
  return {
    name,
    description: tool.description ?? `Tool ${tool.name} of MCP server ${server}`,
    kind: "other",
    inputSchema: tool.inputSchema as JsonSchema,
    parse(input: unknown): Record<string, unknown> {
      if (input === undefined || input === null) return {};
      if (typeof input !== "object" || Array.isArray(input)) throw new ToolInputError(name, "expected a JSON object of arguments");
      return input as Record<string, unknown>;
    },
    title: () => `${server}: ${label}`,
    locations: () => [],
    target: () => ({ paths: [], server }),
    async execute(input, context): Promise<ToolResult> {
      // MCP `tools/call` span; its trace context rides in the request's `_meta` (MCP's convention).
      const span = startSpan(`tools/call ${tool.name}`, { kind: SpanKind.CLIENT });
      if (span.isRecording()) span.setAttributes({ "mcp.method.name": "tools/call", "gen_ai.tool.name": tool.name, "gen_ai.operation.name": "execute_tool", "agentkit.mcp.server": server });
      try {
        const result = await withSpanActive(span, () => {
          const meta = injectTraceMeta(undefined);
          return client.callTool({ name: tool.name, arguments: input, ...(meta ? { _meta: meta } : {}) }, undefined, {
          signal: context.signal,
          timeout: options.callTimeoutMs,
          resetTimeoutOnProgress: true,
          onprogress: (progress) => {
            const total = progress.total === undefined ? "" : `/${progress.total}`;
            context.progress({ message: progress.message ?? `${progress.progress}${total}` });
          },
          });
        });
        if (result.isError === true) recordSpanError(span, new Error("the MCP tool returned an error"), "tool_error");
        if (!("content" in result) || !Array.isArray(result.content)) {
          // Pre-2024-11 servers answer with `toolResult`.
          const legacy = (result as { toolResult?: unknown }).toolResult;
          return { text: JSON.stringify(legacy ?? null), isError: false, data: { server, tool: tool.name, toolResult: legacy } };
        }
        const content = result.content as ContentBlock[];
        const structured = result.structuredContent;
        let text = content.map(contentText).join("\n");
        if (text.length === 0 && structured !== undefined) text = JSON.stringify(structured);
        return {
          text,
          isError: result.isError === true,
          data: { server, tool: tool.name, content, ...(structured === undefined ? {} : { structuredContent: structured }) },
        };
      } catch (error) {
        recordSpanError(span, error);
        if (context.signal.aborted || isAbortError(error)) {
          return { text: `${name} was cancelled`, isError: true, data: { server, tool: tool.name, cancelled: true } };
        }
        return { text: `MCP server ${server} failed to run ${tool.name}: ${errorMessage(error)}`, isError: true, data: { server, tool: tool.name } };
      } finally {
        span.end();
      }
    },
  };
}

function contentText(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
      return `[image ${block.mimeType}, ${Math.floor((block.data.length * 3) / 4)} bytes]`;
    case "audio":
      return `[audio ${block.mimeType}]`;
    case "resource":
      return "text" in block.resource && typeof block.resource.text === "string" ? block.resource.text : `[resource ${block.resource.uri}]`;
    case "resource_link":
      return `[resource link ${block.uri}${block.name ? ` (${block.name})` : ""}]`;
    default:
      return "";
  }
}
