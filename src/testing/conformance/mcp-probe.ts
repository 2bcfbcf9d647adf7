// A stdio MCP server that records that an agent connected to it: `node mcp-probe.js MARKER_FILE`.
// The conformance suite hands it to the agent in session/new. Not exported from the testing
// index: importing it starts a server on this process's stdio.
import { writeFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const marker = process.argv[2];
const server = new McpServer({ name: "agentkit-check-probe", version: "1.0.0" });
server.registerTool("ping", { description: "Answers pong (agentkit-acp conformance probe; safe to call)" }, () => ({
  content: [{ type: "text", text: "pong" }],
}));
server.server.oninitialized = () => {
  if (marker) writeFileSync(marker, `${process.pid}\n`);
};
await server.connect(new StdioServerTransport());
