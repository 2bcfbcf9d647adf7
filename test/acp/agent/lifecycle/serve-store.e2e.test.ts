import { spawnSync } from "node:child_process";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { SESSION_ACTIVE_ELSEWHERE, SESSION_LEASE_LOST } from "../../../../src/acp/agent/index.js";
import { silentLogger } from "../../../../src/core/index.js";
import { openPostgresStore } from "../../../../src/store/postgres/index.js";
import { cleanEnv, serveBehindBridge } from "../serve-support.js";
import { createTestDatabase, postgresOrSkip } from "../../../support/postgres.js";
import { runCli } from "../../../support/cli.js";
import { startTcpProxy } from "../../../support/tcp-proxy.js";
import { cleanUp, label, onCleanup, startServe, textOf, workspace, writeScriptFile } from "./support.js";

afterEach(cleanUp);
const pg = await postgresOrSkip("serve --store postgres://… tests");

// Checks of flags and configuration need no process of their own (in-process: exit code and output are the point).
const check = (args: string[], env = cleanEnv()) => runCli(["serve", ...args], { cwd: process.cwd(), env });

describe("serve --store: bad store configuration exits 2 saying what to fix", () => {
  it.each([
    [["--store", "mysql://u@h/db"], /--store: store URL must start with postgres:\/\/ or postgresql:\/\//],
    [["--store", "postgres://"], /--store: store URL .* names no host/],
    [["--store", ""], /--store needs a URL such as postgres:\/\//],
    [["--store", "postgres://h/db", "--no-persist"], /--store and --no-persist exclude each other/],
    [["--store", "postgres://h/db", "--state-dir", "/tmp/x"], /--store and --state-dir exclude each other/],
    [["--lease-ttl", "5000"], /--lease-ttl only applies with --store/],
    [["--store", "postgres://h/db", "--lease-ttl", "500"], /--lease-ttl must be at least 1000 ms/],
    [["--store", "postgres://h/db", "--lease-ttl", "soon"], /--lease-ttl must be a positive number of milliseconds/],
  ])("%j", async (args, message) => {
    const r = await check(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe("");
  });

  it("AGENTKIT_STORE_URL is checked the same way, and named", async () => {
    const r = await check([], cleanEnv({ AGENTKIT_STORE_URL: "redis://h" }));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/AGENTKIT_STORE_URL: store URL must start with postgres:\/\//);
  });

  it("an unreachable database: exit 2 naming host and port, password not shown, stdout clean", async () => {
    const closed = await startTcpProxy("127.0.0.1", 1);
    await closed.cut();
    const r = await check(["--model", "demo", "--store", `postgres://agent:s3cret@127.0.0.1:${closed.port}/agents`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`cannot use the session store: nothing accepts connections at 127\\.0\\.0\\.1:${closed.port}/agents: start PostgreSQL there or fix the host/port`));
    expect(r.stderr).not.toContain("s3cret");
    expect(r.stdout).toBe("");
  });

  it("stdio serve without --store never loads the PostgreSQL driver", () => {
    const dist = new URL("../../../../dist/", import.meta.url).href;
    const probe = `import { createRequire } from "node:module";
      const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes("/node_modules/pg/"));
      await import("${dist}cli/serve.js");
      await import("${dist}serve/runtime.js");
      const before = loaded();
      await import("${dist}store/postgres/index.js");
      process.stdout.write(JSON.stringify([before, loaded()]));`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", probe], { encoding: "utf8", timeout: 30_000 });
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toEqual([false, true]);
  });

  it.runIf(pg.url)("a database that does not exist: exit 2 saying to create it", async () => {
    const url = new URL(pg.url!);
    url.pathname = "/agentkit_missing_db";
    const r = await check(["--model", "demo", "--store", url.toString()]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/database "agentkit_missing_db" does not exist.*create it \(createdb\)/);
  });
});

describe.runIf(pg.url)("serve --store postgres://… through the real CLI", () => {
  it("two instances on one database: the session runs on one; after kill -9 of it the other loads the whole history once the lease (--lease-ttl 5000) runs out, and goes on", { timeout: 90_000 }, async () => {
    const db = await createTestDatabase(pg.url!);
    onCleanup(() => db.drop());
    const { root, ws } = workspace();
    const file = writeScriptFile(root, "s.json", { stepFrom: "transcript", steps: [{ text: "first answer" }, { echo: "transcript" }] });
    // A 5 s lease (default 10 s; the default's length is tested in test/store/session-leases.test.ts).
    const args = ["--model", `scripted:${file}`, "--store", db.url, "--lease-ttl", "5000"];
    const a = await startServe(args, ws, { process: true });
    expect(a.proc.stderr).toMatch(/kept in PostgreSQL at postgres:\/\/postgres@/);
    const { sessionId } = await a.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    expect((await a.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hello there" }] })).stopReason).toBe("end_turn");

    const b = await startServe(args, ws);
    expect((await b.agent.request(acp.methods.agent.session.list, {})).sessions.map((s) => [s.sessionId, s.title])).toEqual([[sessionId, "hello there"]]);
    await expect(b.agent.request(acp.methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] })).rejects.toMatchObject({
      code: -32600,
      data: { sessionId, reason: SESSION_ACTIVE_ELSEWHERE },
    });
    await expect(b.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "me too" }] })).rejects.toMatchObject({ code: -32600 });

    a.proc.kill(); // SIGKILL to the whole process group: no chance to release the lease
    await a.proc.exited;
    const killedAt = performance.now();
    for (;;) {
      const loaded = await b.agent.request(acp.methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] }).then(
        () => true,
        (error: { data?: { reason?: string } }) => {
          if (error.data?.reason !== SESSION_ACTIVE_ELSEWHERE) throw error;
          return false;
        },
      );
      if (loaded) break;
      expect(performance.now() - killedAt).toBeLessThan(10_000);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    process.stderr.write(`[serve-store] session free on the other instance ${Math.round(performance.now() - killedAt)} ms after kill -9\n`);
    expect(b.client.updates(sessionId).map(label).filter((l) => l.startsWith("user") || l.startsWith("agent"))).toEqual(["user_message_chunk:hello there", "agent_message_chunk:first answer"]);
    expect((await b.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "still there?" }] })).stopReason).toBe("end_turn");
    expect(textOf(b.client.updates(sessionId), "agent_message_chunk")).toContain("user: hello there\nassistant: first answer\nuser: still there?");

    // A clean exit gives the lease back at once.
    expect((await b.end()).code).toBe(0);
    const store = await openPostgresStore({ url: db.url, logger: silentLogger });
    onCleanup(() => store.close());
    expect(await store.leases.holderOf(sessionId)).toBeUndefined();
    expect((await store.sessions.load(sessionId))!.items.map((i) => i.role)).toEqual(["user", "assistant", "user", "assistant"]);
  });

  it("prompt --session right after the holder's kill -9 waits (bounded) for its lease to run out, then goes on", { timeout: 90_000 }, async () => {
    const db = await createTestDatabase(pg.url!);
    onCleanup(() => db.drop());
    const { root, ws } = workspace();
    const file = writeScriptFile(root, "s.json", { stepFrom: "transcript", steps: [{ text: "first answer" }, { echo: "transcript" }] });
    // 8 s: longer than prompt and its serve take to start on a busy machine, so the lease is still held then.
    const args = ["--model", `scripted:${file}`, "--store", db.url, "--lease-ttl", "8000"];
    const a = await startServe(args, ws, { process: true });
    const { sessionId } = await a.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    expect((await a.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hello there" }] })).stopReason).toBe("end_turn");
    a.proc.kill(); // SIGKILL: its lease stays until it expires
    await a.proc.exited;
    const agent = await serveBehindBridge(args, { cwd: ws, env: cleanEnv() });
    const r = await runCli(["prompt", "--agent", agent.line, "--cwd", ws, "--session", sessionId, "still there?"], { cwd: ws, env: cleanEnv() });
    expect(r.stderr).toContain(`(session ${sessionId} is still leased by another instance until `);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("user: hello there\nassistant: first answer\nuser: still there?");
  });

  it("a lease lost between turns: the next prompt is told so (session_lease_lost, not -32002 'not found'); session/load opens it again", { timeout: 90_000 }, async () => {
    const db = await createTestDatabase(pg.url!);
    onCleanup(() => db.drop());
    const { root, ws } = workspace();
    const file = writeScriptFile(root, "s.json", { stepFrom: "transcript", steps: [{ text: "first answer" }, { echo: "transcript" }] });
    const a = await startServe(["--model", `scripted:${file}`, "--store", db.url, "--lease-ttl", "3000"], ws, { process: true });
    const { sessionId } = await a.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    expect((await a.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hello there" }] })).stopReason).toBe("end_turn");

    // Frozen until its lease has run out in the database (nobody takes it over), then thawed: it finds the lease gone.
    const store = await openPostgresStore({ url: db.url, logger: silentLogger });
    onCleanup(() => store.close());
    const pid = a.proc.child.pid!;
    process.kill(pid, "SIGSTOP");
    onCleanup(() => {
      try {
        process.kill(pid, "SIGCONT"); // a failed test must not leave it frozen
      } catch {
        // gone
      }
    });
    const frozenAt = performance.now();
    while ((await store.leases.holderOf(sessionId)) !== undefined) {
      expect(performance.now() - frozenAt).toBeLessThan(20_000);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    process.kill(pid, "SIGCONT");
    const thawedAt = performance.now();
    while (!a.proc.stderr.includes("session lease lost")) {
      expect(performance.now() - thawedAt).toBeLessThan(20_000);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await expect(a.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "still there?" }] })).rejects.toMatchObject({
      code: -32600,
      message: expect.stringContaining("open it again with session/resume or session/load"),
      data: { sessionId, reason: SESSION_LEASE_LOST },
    });
    await a.agent.request(acp.methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] });
    expect((await a.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "still there?" }] })).stopReason).toBe("end_turn");
    expect(textOf(a.client.updates(sessionId), "agent_message_chunk")).toContain("user: hello there\nassistant: first answer\nuser: still there?");
  });
});
