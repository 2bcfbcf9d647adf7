import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import type { ScriptFileStep } from "../../../src/testing/scripted-script.js";
import { createTestDatabase, postgresOrSkip } from "../../support/postgres.js";
import { until } from "../../support/until.js";
import { startListening, type ListeningProcess, TOKEN, connectOver } from "./http-support.js";
import { cleanEnv } from "./serve-support.js";
import { tempDir } from "./support.js";
import { sandboxOrSkip } from "../../support/sandbox-engine.js";

const engine = await sandboxOrSkip("the frozen lease holder test");

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const pg = await postgresOrSkip("the frozen lease holder test");
const TTL_MS = 3_000;
const init = { protocolVersion: 1, clientCapabilities: {} };

/** Each line of writes.log: who wrote it (the instance's WHO) and when (ns since the epoch). */
const write = 'echo "$WHO $(date +%s%N)" >> writes.log; sleep 0.05';

function instance(script: string, storeUrl: string, cwd: string, who: string): ListeningProcess {
  // WHO reaches the shell tool only when named: children get a minimal environment.
  const args = ["--model", `scripted:${script}`, "--store", storeUrl, "--lease-ttl", String(TTL_MS), "--approve", "auto-all", "--child-env", "WHO"];
  const proc = startListening(args, { cwd, env: cleanEnv({ AGENTKIT_ACP_TOKEN: TOKEN, WHO: who }), process: true }); // SIGSTOPped
  cleanups.push(async () => {
    proc.signal("SIGCONT");
    await proc.kill();
  });
  return proc;
}

function writes(dir: string): Array<{ who: string; ns: bigint }> {
  const file = join(dir, "writes.log");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => /^[AB] \d+$/.test(l))
    .map((l) => ({ who: l[0]!, ns: BigInt(l.slice(2)) }));
}

describe.skipIf(!pg.url || !engine.available)("a frozen lease holder's tools", () => {
  it("are killed before its lease can expire: the new holder's tool never overlaps them", async () => {
    const dir = tempDir("agentkit-fence-");
    cleanups.push(() => dir.remove());
    const db = await createTestDatabase(pg.url!, "fence");
    cleanups.push(() => db.drop());
    // stepFrom transcript: A's first model call runs the endless writer; B, after loading the session, the bounded one.
    const steps: ScriptFileStep[] = [
      { toolCall: { name: "shell", input: { command: `while :; do ${write}; done`, timeout_ms: 600_000 }, callId: "call_a" } },
      { toolCall: { name: "shell", input: { command: `for i in $(seq 40); do ${write}; done` }, callId: "call_b" } },
      { text: "done" },
    ];
    const script = join(dir.path, "script.json");
    writeFileSync(script, JSON.stringify({ steps, stepFrom: "transcript" }));
    const a = instance(script, db.url, dir.path, "A");
    const b = instance(script, db.url, dir.path, "B");

    const onA = connectOver("http", await a.url);
    cleanups.push(() => onA.connection.close());
    await onA.agent.request(acp.methods.agent.initialize, init);
    const { sessionId } = await onA.agent.request(acp.methods.agent.session.new, { cwd: dir.path, mcpServers: [] });
    onA.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "write forever" }] }).catch(() => undefined);
    await until(() => writes(dir.path).length >= 3, 20_000);

    a.signal("SIGSTOP");
    const stoppedAt = BigInt(Date.now()) * 1_000_000n;
    // B takes the session once A's lease has run out (A cannot renew or release it).
    const onB = connectOver("http", await b.url);
    cleanups.push(() => onB.connection.close());
    await onB.agent.request(acp.methods.agent.initialize, init);
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await onB.agent.request(acp.methods.agent.session.load, { sessionId, cwd: dir.path, mcpServers: [] });
        break;
      } catch (error) {
        const elsewhere = error instanceof acp.RequestError && (error.data as { reason?: string } | undefined)?.reason === "session_active_elsewhere";
        if (!elsewhere || Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    const done = await onB.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "your turn" }] });
    expect(done.stopReason).toBe("end_turn");

    const all = writes(dir.path);
    const lastA = all.filter((w) => w.who === "A").reduce((m, w) => (w.ns > m ? w.ns : m), 0n);
    const firstB = all.filter((w) => w.who === "B").reduce((m, w) => (m === 0n || w.ns < m ? w.ns : m), 0n);
    const ms = (ns: bigint): number => Number(ns - stoppedAt) / 1e6;
    process.stderr.write(`frozen holder: A's last write ${ms(lastA).toFixed(0)} ms after SIGSTOP, B's first ${ms(firstB).toFixed(0)} ms after (lease ttl ${TTL_MS} ms)\n`);
    expect(all.filter((w) => w.who === "B")).toHaveLength(40);
    // In ms after SIGSTOP: A's last write precedes B's first, and came before A's lease could run out.
    expect(ms(lastA)).toBeLessThan(ms(firstB));
    expect(ms(lastA)).toBeLessThan(TTL_MS);
  }, 90_000);
});
