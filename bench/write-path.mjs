// CPU per outgoing message through serve's stdout write path in one process: the SDK's
// ndJsonStream (via guardedNdJsonStream) to a null byte sink, each message written the way the
// SDK's connection does (serialised getWriter → write → releaseLock).
// Usage: npm run build && node bench/write-path.mjs [CHECKOUT_DIR=.] [N=200000]
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const dir = resolve(process.argv[2] ?? ".");
const count = Number(process.argv[3] ?? "200000");
const { guardedNdJsonStream } = await import(pathToFileURL(`${dir}/dist/acp/agent/line-guard.js`).href);
const sink = { write() {}, close: async () => {}, abort() {} };
const stream = guardedNdJsonStream(sink, new ReadableStream());
const params = { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "word, " }, messageId: "msg_1" } };

async function run(n) {
  let queue = Promise.resolve();
  for (let i = 0; i < n; i++) {
    queue = queue.then(async () => {
      const writer = stream.writable.getWriter();
      try {
        await writer.write({ jsonrpc: "2.0", method: "session/update", params });
      } finally {
        writer.releaseLock();
      }
    });
  }
  await queue;
}
await run(count / 10); // warm-up
const before = process.cpuUsage();
await run(count);
const used = process.cpuUsage(before);
console.log(`${dir}: ${((used.user + used.system) / count).toFixed(2)} µs CPU per message (${count} messages)`);
