// The baseline for bench/stream.ts: an ACP agent written directly on the official SDK, no loop,
// no model — each prompt sends N `agent_message_chunk` updates (awaited, in order), then end_turn.
// Usage: node bench/bare-agent.mjs N [text]
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const count = Number(process.argv[2] ?? "10000");
const text = process.argv[3] ?? "tok ";
let sessions = 0;

const app = acp
  .agent({ name: "bare-agent" })
  .onRequest(acp.methods.agent.initialize, () => ({ protocolVersion: 1, agentCapabilities: {}, authMethods: [], agentInfo: { name: "bare", version: "1" } }))
  .onRequest(acp.methods.agent.session.new, () => ({ sessionId: `bare_${++sessions}` }))
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const messageId = `msg_${Date.now()}`;
    for (let i = 0; i < count; i++) {
      await client.notify(acp.methods.client.session.update, {
        sessionId: params.sessionId,
        update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text }, messageId },
      });
    }
    return { stopReason: "end_turn" };
  });

const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed;
process.exit(0);
