/**
 * Streaming throughput: N model text deltas from a scripted model through `agentkit-acp serve`
 * (loop → AcpIntegration → session/update over stdio) to an official SDK client, against a
 * bare agent written directly on the SDK that sends the same N updates (bench/bare-agent.mjs).
 * Both are spawned over stdio in the same run; only the prompt turn is timed (not start-up).
 *
 * Run: npx tsx bench/stream.ts [N=10000] [runs=5]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { median } from "./support.js";

const count = Number(process.argv[2] ?? "10000");
const runs = Number(process.argv[3] ?? "5");
const root = fileURLToPath(new URL("..", import.meta.url));

/** A spawned agent with an SDK client that counts the message chunks of one prompt. */
async function startAgent(label: string, command: string[], cwd: string) {
  const child = spawn(process.execPath, command, { cwd: root, stdio: ["pipe", "pipe", "inherit"] });
  child.stdin.on("error", () => undefined);
  let chunks = 0;
  const client = acp
    .client({ name: "bench" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      if (params.update.sessionUpdate === "agent_message_chunk") chunks += 1;
    })
    .connect(acp.ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await client.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  return {
    /** Seconds for one prompt turn (all updates arrive before the response). */
    async run(): Promise<number> {
      const { sessionId } = await client.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
      chunks = 0;
      const started = performance.now();
      const response = await client.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "stream" }] });
      const seconds = (performance.now() - started) / 1000;
      if (response.stopReason !== "end_turn" || chunks !== count) throw new Error(`${label}: got ${chunks} chunks and ${response.stopReason}`);
      await client.agent.request(acp.methods.agent.session.close, { sessionId }).catch(() => undefined);
      return seconds;
    },
    async stop(): Promise<void> {
      client.close();
      child.stdin.end();
      await exited;
    },
  };
}

const work = mkdtempSync(join(tmpdir(), "agentkit-bench-"));
try {
  const scriptPath = join(work, "deltas.json");
  writeFileSync(scriptPath, JSON.stringify({ steps: [{ deltas: count, text: "tok " }] }));
  const serve = await startAgent("serve", ["bin/agentkit-acp.js", "serve", "--model", `scripted:${scriptPath}`, "--log-level", "warn"], work);
  const bare = await startAgent("bare", ["bench/bare-agent.mjs", String(count), "tok "], work);
  try {
    await serve.run(); // warm-up
    await bare.run();
    // Interleaved, so load changes on a busy machine hit both sides alike.
    const serveTimes: number[] = [];
    const bareTimes: number[] = [];
    for (let i = 0; i < runs; i++) {
      serveTimes.push(await serve.run());
      bareTimes.push(await bare.run());
    }
    const serveRate = count / median(serveTimes);
    const bareRate = count / median(bareTimes);
    const ratios = serveTimes.map((t, i) => bareTimes[i]! / t);
    process.stdout.write(
      [
        `N = ${count} text deltas per prompt, ${runs} interleaved runs after a warm-up (Node ${process.version})`,
        `agentkit-acp serve (scripted model → loop → AcpIntegration → stdio): ${Math.round(serveRate).toLocaleString("en-US")} deltas/s (median)`,
        `bare SDK agent (same updates, no loop):                         ${Math.round(bareRate).toLocaleString("en-US")} deltas/s (median)`,
        `ratio serve / bare: ${(serveRate / bareRate).toFixed(2)} (per-run ratios ${ratios.map((r) => r.toFixed(2)).join(", ")})`,
        "",
      ].join("\n"),
    );
  } finally {
    await serve.stop();
    await bare.stop();
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
