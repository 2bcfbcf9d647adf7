// The floor for bench/client.ts: a client written directly on the official SDK that spawns an
// agent, opens a session, sends one prompt and prints each message chunk's text to stdout.
// Usage: node bench/raw-client.mjs -- AGENT_COMMAND...
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [command, ...args] = process.argv.slice(process.argv.indexOf("--") + 1);
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const connection = acp
  .client({ name: "raw-client" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    const update = params.update;
    if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") process.stdout.write(update.content.text);
  })
  .connect(acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
await connection.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
const { sessionId } = await connection.agent.request(acp.methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] });
const { stopReason } = await connection.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] });
process.stdout.write(`\n[${stopReason}]\n`);
// The same shutdown as AcpSession.close(): stdin EOF, then wait for the agent to exit.
const exited = new Promise((resolve) => child.once("exit", resolve));
connection.close();
child.stdin.end();
await exited;
