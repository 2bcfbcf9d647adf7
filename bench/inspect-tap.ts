/**
 * What the inspect tap adds per message: N sequential `session/new` round trips (request and
 * answer: two messages through the tap) against the bare SDK agent (bench/bare-agent.mjs),
 * directly and through `agentkit-acp inspect -- …` (trace written, page served), interleaved.
 * Added latency per message = (median tapped round trip − median direct round trip) / 2.
 *
 * Run: npm run build && npx tsx bench/inspect-tap.ts [roundTrips=400]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";

const total = Number(process.argv[2] ?? "400");
const root = fileURLToPath(new URL("..", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "bench-inspect-"));
const agent = [join(root, "bench/bare-agent.mjs"), "1"];

async function connect(command: string[]) {
  const child = spawn(process.execPath, command, { cwd: root, stdio: ["pipe", "pipe", "ignore"] });
  child.stdin.on("error", () => undefined);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const client = acp
    .client({ name: "bench" })
    .connect(acp.ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>));
  await client.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  return {
    async roundTrip(): Promise<number> {
      const t = performance.now();
      await client.agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
      return performance.now() - t;
    },
    async close(): Promise<void> {
      child.stdin.end();
      await exited;
    },
  };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};

const direct = await connect(agent);
const tapped = await connect([join(root, "bin/agentkit-acp.js"), "inspect", "--trace", join(dir, "t.jsonl"), "--", process.execPath, ...agent]);
const d: number[] = [];
const t: number[] = [];
for (let i = 0; i < 20; i++) await Promise.all([direct.roundTrip(), tapped.roundTrip()]); // warm-up
for (let i = 0; i < total; i++) {
  // Alternate, so load on the machine hits both alike.
  if (i % 2 === 0) {
    d.push(await direct.roundTrip());
    t.push(await tapped.roundTrip());
  } else {
    t.push(await tapped.roundTrip());
    d.push(await direct.roundTrip());
  }
}
await direct.close();
await tapped.close();
rmSync(dir, { recursive: true, force: true });
const md = median(d);
const mt = median(t);
process.stdout.write(
  `round trips: ${total} each\n` +
    `median round trip direct ${md.toFixed(3)} ms, through the tap ${mt.toFixed(3)} ms\n` +
    `added per message (median): ${((mt - md) / 2).toFixed(3)} ms (budget 1 ms)\n`,
);
