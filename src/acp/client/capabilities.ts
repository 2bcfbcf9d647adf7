import type * as acp from "@agentclientprotocol/sdk/unstable";
import { CapabilityError } from "./errors.js";

/** Gate for the capability-dependent agent methods (ACP v1, stable and unstable). */
export function requireCapability(caps: acp.AgentCapabilities | undefined, method: string): void {
  const sc = caps?.sessionCapabilities;
  const gates: Record<string, [boolean, string]> = {
    "session/load": [caps?.loadSession === true, "loadSession"],
    "session/resume": [sc?.resume != null, "sessionCapabilities.resume"],
    "session/list": [sc?.list != null, "sessionCapabilities.list"],
    "session/close": [sc?.close != null, "sessionCapabilities.close"],
    "session/delete": [sc?.delete != null, "sessionCapabilities.delete"],
    logout: [caps?.auth?.logout != null, "auth.logout"],
    "auth/status": [caps?.auth?.status != null, "auth.status"],
    "providers/list": [caps?.providers != null, "providers"],
    "providers/set": [caps?.providers != null, "providers"],
    "providers/disable": [caps?.providers != null, "providers"],
    "session/fork": [sc?.fork != null, "sessionCapabilities.fork"],
    "session/set_title": [sc?.title != null, "sessionCapabilities.title"],
    "session/status": [sc?.status != null, "sessionCapabilities.status"],
    "session/archive": [sc?.archive != null, "sessionCapabilities.archive"],
    "session/unarchive": [sc?.archive != null, "sessionCapabilities.archive"],
  };
  const gate = gates[method];
  if (gate && !gate[0]) throw new CapabilityError(method, gate[1]);
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
