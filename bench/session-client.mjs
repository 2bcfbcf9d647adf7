// bench/client.ts: the same job as raw-client.mjs through this package's AcpSession event stream.
// Usage: node bench/session-client.mjs -- AGENT_COMMAND...
import { AcpClient } from "agentkit-acp/client";

const [command, ...args] = process.argv.slice(process.argv.indexOf("--") + 1);
const session = await AcpClient.startSession({ command, args, cwd: process.cwd() });
try {
  for await (const event of session.stream("go")) {
    if (event.type === "message_chunk") process.stdout.write(event.text);
    if (event.type === "done") process.stdout.write(`\n[${event.stopReason}]\n`);
  }
} finally {
  await session.close();
}
