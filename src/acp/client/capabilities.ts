import type * as acp from "@agentclientprotocol/sdk/unstable";
import { capabilityOf, hasCapability, type AgentMethod } from "../methods.js";
import { CapabilityError } from "./errors.js";

/** Gate for the capability-dependent agent methods: the capability the method table names (acp/methods.ts). */
export function requireCapability(caps: acp.AgentCapabilities | undefined, method: AgentMethod): void {
  const path = capabilityOf(method);
  if (path !== undefined && !hasCapability(caps, path)) throw new CapabilityError(method, path);
}

/** `additionalDirectories` on new/load/resume needs `sessionCapabilities.additionalDirectories`. */
export function requireAdditionalDirectories(caps: acp.AgentCapabilities | undefined, method: string, dirs: string[]): void {
  if (dirs.length > 0 && caps?.sessionCapabilities?.additionalDirectories == null) {
    throw new CapabilityError(method, "sessionCapabilities.additionalDirectories", "additional directories were requested");
  }
}

/** stdio MCP servers are always allowed; http / sse / acp (MCP over ACP) only when the agent advertised them. */
export function validateMcpServers(caps: acp.AgentCapabilities | undefined, method: string, servers: acp.McpServer[]): void {
  for (const server of servers) {
    const type = "type" in server ? server.type : "stdio";
    if (type === "http" && caps?.mcpCapabilities?.http !== true) {
      throw new CapabilityError(method, "mcpCapabilities.http", `MCP server "${server.name}" uses the http transport`);
    }
    if (type === "sse" && caps?.mcpCapabilities?.sse !== true) {
      throw new CapabilityError(method, "mcpCapabilities.sse", `MCP server "${server.name}" uses the sse transport`);
    }
    if (type === "acp" && caps?.mcpCapabilities?.acp !== true) {
      throw new CapabilityError(method, "mcpCapabilities.acp", `MCP server "${server.name}" uses the acp transport (MCP over ACP)`);
    }
    if (type !== "http" && type !== "sse" && type !== "stdio" && type !== "acp") {
      throw new CapabilityError(method, `mcpCapabilities.${String(type)}`, `MCP server "${server.name}" uses an unknown transport`);
    }
  }
}

/** Prompt content beyond text and resource_link needs `promptCapabilities`. */
export function validatePromptBlocks(caps: acp.AgentCapabilities | undefined, blocks: acp.ContentBlock[]): void {
  const pc = caps?.promptCapabilities;
  for (const block of blocks) {
    if (block.type === "image" && pc?.image !== true) throw new CapabilityError("session/prompt", "promptCapabilities.image", "the prompt has an image");
    if (block.type === "audio" && pc?.audio !== true) throw new CapabilityError("session/prompt", "promptCapabilities.audio", "the prompt has audio");
    if (block.type === "resource" && pc?.embeddedContext !== true) {
      throw new CapabilityError("session/prompt", "promptCapabilities.embeddedContext", "the prompt embeds a resource");
    }
  }
}
