import { readFileSync } from "node:fs";
import * as acp from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { startListening, TOKEN, connectOver } from "./http-support.js";
import { writeScript } from "./serve-support.js";
import { RecordingClient, tempDir } from "./support.js";
import { sandboxOrSkip } from "../../support/sandbox-engine.js";

const engine = await sandboxOrSkip("serve --listen's output budget test");

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const init = { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "budget-test", version: "1" } };
/** Each turn after the first streams 4,000 deltas of 64 KiB: 250 MiB of text per client. */
const BIG_TURN = { deltas: 4_000, text: "x".repeat(65_536) };
/** Growth of the instance's RSS allowed while two clients that stopped reading have such turns running. */
const RSS_BOUND_MB = 64;

function rssMb(pid: number): number {
  const line = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(line?.[1] ?? 0) / 1024;
}

/** A WebSocket ACP client whose socket the test can pause (it then reads nothing more). */
function pausableClient(url: string) {
  const made: WebSocket[] = [];
  class Kept extends WebSocket {
    constructor(...args: ConstructorParameters<typeof WebSocket>) {
      super(...args);
      made.push(this);
    }
  }
  const client = new RecordingClient();
  const connection = client.connect(createWebSocketStream(url.replace(/^http/, "ws"), { WebSocket: Kept, headers: { Authorization: `Bearer ${TOKEN}` } }));
  return { agent: connection.agent, connection, socket: () => made[0]! };
}

describe.skipIf(!engine.available)("serve --listen: output held for a client is bounded", () => {
  it(`two WebSocket clients that stop reading while 250 MiB turns stream grow the instance by less than ${RSS_BOUND_MB} MB; another client keeps working`, async () => {
    const dir = tempDir("agentkit-budget-");
    cleanups.push(() => dir.remove());
    const script = writeScript(dir.path, [{ text: "ready" }, BIG_TURN]);
    const proc = startListening(["--model", `scripted:${script}`], { cwd: dir.path, process: true }); // its pid's memory is read
    cleanups.push(() => proc.kill());
    const url = await proc.url;
    const pid = proc.child.pid!;

    const stalled = [pausableClient(url), pausableClient(url)];
    const sessions: string[] = [];
    for (const c of stalled) {
      cleanups.push(() => c.socket().terminate());
      await c.agent.request(acp.methods.agent.initialize, init);
      const { sessionId } = await c.agent.request(acp.methods.agent.session.new, { cwd: dir.path, mcpServers: [] });
      expect((await c.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hi" }] })).stopReason).toBe("end_turn");
      sessions.push(sessionId);
    }
    const other = connectOver("ws", url);
    cleanups.push(() => other.connection.close());
    await other.agent.request(acp.methods.agent.initialize, init);
    const baseline = rssMb(pid);

    // They stop reading, then ask for the big turn (which they will never read).
    stalled.forEach((c, i) => {
      c.socket().pause();
      c.agent.request(acp.methods.agent.session.prompt, { sessionId: sessions[i]!, prompt: [{ type: "text", text: "stream a lot" }] }).catch(() => undefined);
    });
    // Meanwhile the other client runs turns (at least 10, for at least 5 s, at most 300: each is a
    // session of its own, and on a fast Node the garbage of hundreds more would be measured with
    // what the stalled readers hold); RSS is sampled all along.
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 50);
    cleanups.push(() => clearInterval(sampler));
    const started = performance.now();
    let turns = 0;
    while (turns < 10 || (performance.now() - started < 5_000 && turns < 300)) {
      // A session of its own each time: every session's first turn is the small one.
      const { sessionId } = await other.agent.request(acp.methods.agent.session.new, { cwd: dir.path, mcpServers: [] });
      const done = await other.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hi" }] });
      await other.agent.request(acp.methods.agent.session.close, { sessionId });
      expect(done.stopReason).toBe("end_turn");
      turns += 1;
    }
    clearInterval(sampler);
    process.stderr.write(`instance RSS: ${baseline.toFixed(0)} MB before, peak ${peak.toFixed(0)} MB with 2 stalled readers (bound +${RSS_BOUND_MB} MB); ${turns} turns of another client meanwhile\n`);
    expect(peak - baseline).toBeLessThan(RSS_BOUND_MB);
    expect(await (await fetch(`${await proc.base()}/healthz`)).text()).toBe("ok\n");
  }, 60_000);
});
