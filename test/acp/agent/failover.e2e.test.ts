import { writeFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import type { ScriptFileStep } from "../../../src/testing/scripted-script.js";
import { afterEach, describe, expect, it } from "vitest";
import type { AcpSessionEvent, ClientLifecycleEvent } from "../../../src/acp/client/index.js";
import { AcpClient, ClientPermissionPolicy, TurnInterruptedError } from "../../../src/acp/client/index.js";
import { startNginx } from "../../support/nginx.js";
import { createTestDatabase, postgresOrSkip } from "../../support/postgres.js";
import { startListening, type ListeningProcess, TOKEN, connectOver } from "./http-support.js";
import { cleanEnv, writeScript } from "./serve-support.js";
import { deferred, tempDir, textOf } from "./support.js";
import { sandboxOrSkip } from "../../support/sandbox-engine.js";

const engine = await sandboxOrSkip("the serve --listen failover tests");

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const pg = await postgresOrSkip("the serve --listen failover tests");

function workspace(): string {
  const dir = tempDir("agentkit-failover-");
  cleanups.push(() => dir.remove());
  return dir.path;
}

async function database(): Promise<string> {
  const db = await createTestDatabase(pg.url!, "failover");
  cleanups.push(() => db.drop());
  return db.url;
}

/** Both instances play one script; `stepFrom: transcript` lets the survivor continue where the dead one stopped. */
function sharedScript(dir: string): string {
  const path = join(dir, "shared-script.json");
  const steps: ScriptFileStep[] = [
    { text: "first answer", chunks: 3 },
    { toolCall: { name: "write_file", input: { path: "f.txt", content: "never written\n" }, callId: "call_f" }, text: "Writing f.txt." },
    { echo: "transcript" },
  ];
  writeFileSync(path, JSON.stringify({ steps, stepFrom: "transcript" }));
  return path;
}

// A 5 s lease (default 10 s): a dead instance's sessions come free sooner; the default's length is tested in test/store.
function instance(script: string, storeUrl: string, cwd: string): ListeningProcess {
  // A process: the tests kill -9 an instance.
  const proc = startListening(["--model", `scripted:${script}`, "--store", storeUrl, "--lease-ttl", "5000", "--approve", "ask"], { cwd, env: cleanEnv({ AGENTKIT_ACP_TOKEN: TOKEN }), process: true });
  cleanups.push(() => proc.kill());
  return proc;
}

async function openSessions(proc: ListeningProcess): Promise<number> {
  const text = await (await fetch(`${await proc.base()}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } })).text();
  const line = text.split("\n").find((l) => l.startsWith("agentkit_acp_open_sessions "));
  return Number(line?.split(" ")[1] ?? "NaN");
}

function next(c: AcpClient, type: ClientLifecycleEvent["type"]): Promise<ClientLifecycleEvent> {
  return new Promise((resolve) => {
    const off = c.onLifecycle((event) => {
      if (event.type !== type) return;
      off();
      resolve(event);
    });
  });
}

describe.skipIf(!pg.url || !engine.available)("failover: two serve --listen instances sharing PostgreSQL", () => {
  it("A is SIGKILLed mid-turn: the client reconnects through nginx (or to B), the session comes back with its whole history, the next prompt ends end_turn", async () => {
    const dir = workspace();
    const storeUrl = await database();
    const script = sharedScript(dir);
    const [one, two] = [instance(script, storeUrl, dir), instance(script, storeUrl, dir)];
    const ports = [Number(new URL(await one.url).port), Number(new URL(await two.url).port)] as [number, number];
    const nginx = await startNginx(ports);
    if (nginx.url) cleanups.push(() => nginx.stop());
    else process.stderr.write(`[failover] no balancer (${nginx.reason}): the client is pointed at the instances directly\n`);

    // The permission question of the second turn is never answered: the instance dies while it waits.
    const asked = deferred<void>();
    const policy = ClientPermissionPolicy.custom(async (_q, signal) => {
      asked.resolve(undefined);
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      return "cancel" as const;
    });
    const entry = nginx.url ?? (await one.url);
    const client = await AcpClient.start({ url: entry, token: TOKEN, cwd: dir, reconnect: { attempts: 40, reattachTimeoutMs: 60_000 } }, policy);
    cleanups.push(() => client.close());
    const session = await client.newSession();
    const first = await session.prompt("one");
    expect([first.stopReason, first.text]).toEqual(["end_turn", "first answer"]);

    // Which instance holds the session (the balancer chose): that one is "A".
    const counts = await Promise.all([openSessions(one), openSessions(two)]);
    expect(counts.sort()).toEqual([0, 1]);
    const [a, b] = (await openSessions(one)) === 1 ? [one, two] : [two, one];

    const events: AcpSessionEvent[] = [];
    const stream = session.stream("two");
    const consumed = (async () => {
      for await (const event of stream) events.push(event);
    })();
    await asked.promise;
    expect(events.some((e) => e.type === "tool_call" && e.toolCall.toolCallId === "call_f")).toBe(true);
    expect(events.filter((e) => e.type === "message_chunk").map((e) => (e as { text: string }).text).join("")).toBe("Writing f.txt.");
    const recovered = next(client, "recovered");
    await a.kill();
    expect(await stream.result.catch((e: unknown) => e)).toBeInstanceOf(TurnInterruptedError);
    await consumed;

    if (nginx.url) {
      // Through the balancer: the same client reconnects, lands on B and re-attaches the session
      // once A's lease has expired (bounded: the lease TTL).
      expect(await recovered).toMatchObject({ sessions: [session.sessionId] });
      await session.close();
    } else {
      await client.close();
    }
    // A fresh client on B loads the session: the whole history is replayed, the interrupted call included.
    const viewer = connectOver("http", nginx.url ?? (await b.url));
    cleanups.push(() => viewer.connection.close());
    await viewer.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    await loadWhenFree(viewer.agent, session.sessionId, dir);
    const replay = viewer.client.updates(session.sessionId);
    expect(replay.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => (u.content.type === "text" ? u.content.text : ""))).toEqual(["one", "two"]);
    expect(textOf(replay, "agent_message_chunk")).toBe("first answerWriting f.txt.");
    // The call that was waiting for permission when A died is shown as interrupted (failed), never as lost.
    expect(replay.find((u) => u.sessionUpdate === "tool_call")).toMatchObject({ toolCallId: "call_f", status: "failed", rawOutput: { text: expect.stringMatching(/stopped \(crash or kill\)/) } });
    const third = await viewer.agent.request(acp.methods.agent.session.prompt, { sessionId: session.sessionId, prompt: [{ type: "text", text: "three" }] });
    expect(third.stopReason).toBe("end_turn");
    // The model was sent everything acknowledged before the kill.
    const transcript = textOf(viewer.client.updates(session.sessionId), "agent_message_chunk");
    for (const piece of ["one", "first answer", "two", "Writing f.txt.", "three"]) expect(transcript).toContain(piece);
    expect(await openSessions(b)).toBe(1);
  });

  it("two clients prompting one session on A and B at once: exactly one runs, the other is told it is active elsewhere", async () => {
    const dir = workspace();
    const storeUrl = await database();
    const script = writeScript(dir, [{ echo: "last_user_text" }]);
    const [a, b] = [instance(script, storeUrl, dir), instance(script, storeUrl, dir)];
    // Create the session on A, then close it there: it is stored and free.
    const creator = connectOver("http", await a.url);
    cleanups.push(() => creator.connection.close());
    await creator.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await creator.agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
    await creator.agent.request(acp.methods.agent.session.close, { sessionId });

    const race = async (proc: ListeningProcess, who: string, transport: "http" | "ws"): Promise<string> => {
      const c = connectOver(transport, await proc.url);
      cleanups.push(() => c.connection.close());
      await c.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      try {
        await c.agent.request(acp.methods.agent.session.load, { sessionId, cwd: dir, mcpServers: [] });
        const r = await c.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: `from ${who}` }] });
        return `ran:${r.stopReason}`;
      } catch (error) {
        expect(error).toBeInstanceOf(acp.RequestError);
        expect((error as acp.RequestError).data).toMatchObject({ reason: "session_active_elsewhere" });
        return "refused";
      }
    };
    const outcomes = await Promise.all([race(a, "A", "http"), race(b, "B", "ws")]);
    expect(outcomes.sort()).toEqual(["ran:end_turn", "refused"]);

    // The store holds exactly one of the two prompts.
    await creator.connection.close();
    const winner = outcomes[0] === "refused" ? b : a;
    await winner.kill(); // frees nothing cleanly: the loser's instance must wait for the lease to expire
    const loser = winner === a ? b : a;
    const viewer = connectOver("http", await loser.url);
    cleanups.push(() => viewer.connection.close());
    await viewer.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    await loadWhenFree(viewer.agent, sessionId, dir);
    const users = viewer.client.updates(sessionId).filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => (u.content.type === "text" ? u.content.text : ""));
    expect(users).toHaveLength(1);
    expect(["from A", "from B"]).toContain(users[0]);
  });
});

/** session/load, retried while the session is still leased by a dead instance (bounded by the lease TTL). */
async function loadWhenFree(agent: ReturnType<typeof connectOver>["agent"], sessionId: string, cwd: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await agent.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
      return;
    } catch (error) {
      const elsewhere = error instanceof acp.RequestError && (error.data as { reason?: string } | undefined)?.reason === "session_active_elsewhere";
      if (!elsewhere || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
