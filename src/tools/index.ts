export * from "./types.js";
// toJsonSchema stays inside (defineTool and delegation use it).
export { ToolInputError, defineTool, errorResult } from "./define.js";
export type { InferOutput, StandardSchemaV1 } from "./standard-schema.js";
export * from "./registry.js";
export * from "./paths.js";
export * from "./local-ops.js";
export { LineWindow, sliceLines } from "./text-window.js";
export * from "./policy.js";
export * from "./builtin/index.js";
export * from "./mcp.js";
export type { McpAcpChannel, McpAcpNotification, McpAcpOutcome } from "./mcp-acp.js";
export { mcpToolName, sanitizeMcpName } from "./mcp-tool.js";
