// The floor for ACP over HTTP and WebSocket in Node (bench/service-floor.ts): the bare agent of
// bench/bare-model.mjs served by the SDK's own AcpServer with its Node adapters at /acp — no
// auth, no store, no limits beyond the SDK's defaults, no metrics. Each session keeps its
// conversation and sends it with every prompt, as serve does (any chat agent must); `--no-history`
// sends only the latest prompt (the floor before 2026-12-03).
// Usage: node bench/bare-http-agent.mjs BASE_URL [openai|anthropic] [--no-history]; prints "listening on URL" on stderr.
import { createServer } from "node:http";
import { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } from "@agentclientprotocol/sdk/experimental/node";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { WebSocketServer } from "ws";
import { bareAgent } from "./bare-model.mjs";

const baseUrl = process.argv[2] ?? "http://127.0.0.1:11434/v1";
const format = process.argv[3] ?? "openai";
const history = process.argv[4] !== "--no-history";
const acpServer = new AcpServer({ createAgent: () => bareAgent(baseUrl, format, { history }) });
const webSockets = new WebSocketServer({ noServer: true });
const handle = createNodeHttpHandler(acpServer);
const upgrade = createNodeWebSocketUpgradeHandler(acpServer, webSockets);
const server = createServer((request, response) => {
  if (request.url?.startsWith("/acp")) return handle(request, response);
  response.writeHead(404).end();
});
server.on("upgrade", (request, socket, head) => (request.url?.startsWith("/acp") ? upgrade(request, socket, head) : socket.destroy()));
server.listen(0, "127.0.0.1", () => process.stderr.write(`listening on http://127.0.0.1:${server.address().port}/acp\n`));
process.once("SIGTERM", () => {
  void acpServer.close().then(() => {
    for (const client of webSockets.clients) client.terminate();
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
});
