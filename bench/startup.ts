/**
 * Start-up latency: spawn → `initialize` answered → `session/new` answered, for
 * `agentkit-acp serve --model demo` against the bare SDK agent (bench/bare-agent.mjs), in
 * one run, interleaved. This is what an editor waits for when it opens an agent thread.
 *
 * Run: npm run build && npx tsx bench/startup.ts [runs=9]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { median } from "./support.js";

// Loopback only: a machine-wide extra CA bundle (this sandbox sets one) costs every Node start
// ~50 ms of CPU, the same for each side, and hides start-up differences; measured without it.
delete process.env.NODE_EXTRA_CA_CERTS;

const runs = Number(process.argv[2] ?? "9");
const root = fileURLToPath(new URL("..", import.meta.url));

async function measure(command: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ init: number; session: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, command, { cwd: root, env, stdio: ["pipe", "pipe", "ignore"] });
  child.stdin.on("error", () => undefined);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const client = acp
    .client({ name: "bench" })
    .connect(acp.ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>));
  await client.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  const init = performance.now() - started;
  await client.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  const session = performance.now() - started;
  client.close();
  child.stdin.end();
  await exited;
  return { init, session };
}

const work = mkdtempSync(join(tmpdir(), "agentkit-startup-"));
const env = { ...process.env, AGENTKIT_STATE_DIR: join(work, "state") };
const agents = {
  serve: [join(root, "bin/agentkit-acp.js"), "serve", "--model", "demo"],
  bare: [join(root, "bench/bare-agent.mjs"), "1"],
};
const samples: Record<keyof typeof agents, Array<{ init: number; session: number }>> = { serve: [], bare: [] };
try {
  for (const name of Object.keys(agents) as Array<keyof typeof agents>) await measure(agents[name], env, work); // warm-up
  for (let i = 0; i < runs; i++) {
    for (const name of Object.keys(agents) as Array<keyof typeof agents>) samples[name].push(await measure(agents[name], env, work));
  }
  for (const name of Object.keys(agents) as Array<keyof typeof agents>) {
    const s = samples[name];
    process.stdout.write(
      `${name.padEnd(6)} initialize ${median(s.map((x) => x.init)).toFixed(0)} ms, session/new ${median(s.map((x) => x.session)).toFixed(0)} ms (median of ${runs})\n`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
