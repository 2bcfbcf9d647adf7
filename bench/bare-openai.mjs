// The floor for bench/agents.ts: an ACP agent written directly on the official SDK that streams
// one model reply over HTTP with plain fetch + hand-rolled SSE parsing (no AI SDK, no loop, no
// store) and sends each text delta as one agent_message_chunk. Each session keeps its conversation
// and sends it with every prompt (as serve does); `--no-history` sends only the latest prompt.
// Usage: node bench/bare-openai.mjs BASE_URL [openai|anthropic] [--no-history]
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { bareAgent } from "./bare-model.mjs";

const baseUrl = process.argv[2] ?? "http://127.0.0.1:11434/v1";
const format = process.argv[3] ?? "openai";

const app = bareAgent(baseUrl, format, { history: process.argv[4] !== "--no-history" });
const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed;
process.exit(0);
