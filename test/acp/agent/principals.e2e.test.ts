import { existsSync, mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startMockAnthropic } from "../../../src/testing/index.js";
import { createTestDatabase, postgresOrSkip } from "../../support/postgres.js";
import { startListening, type ListeningServe, connectOver } from "./http-support.js";
import { ALICE, BOB, tokenFile } from "./principals-support.js";
import { cleanEnv } from "./serve-support.js";
import { select, tempDir } from "./support.js";
import { sandboxOrSkip } from "../../support/sandbox-engine.js";

const engine = await sandboxOrSkip("serve --listen's principal tests");

// Two principals from one token file, through the real CLI over HTTP and WebSocket: every
// ownership attack of issue 22 fails for the other principal and keeps working for the owner.
// With two principals serve --listen needs --workspace-root (each works in <root>/<principal>/),
// so every attack by bob is made from a cwd inside his own workspace: what answers it is the
// ownership rule (as for an unknown session), never the workspace check.


const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const text = (t: string): acp.ContentBlock[] => [{ type: "text", text: t }];
const UNKNOWN = "sess_does_not_exist_anywhere";

/** Every turn: write_file a.txt (asks permission under --approve ask), then "done". */
export function toolScript(dir: string): string {
  const path = join(dir, "script.json");
  writeFileSync(path, JSON.stringify({ steps: [{ toolCall: { name: "write_file", input: { path: "a.txt", content: "x\n" } }, text: "writing" }, { text: "done" }], onExhausted: "repeat-last" }));
  return path;
}

/** What a request is answered with: `ok`, or the error's code and message (the session id made generic). */
export async function outcome(run: () => Promise<unknown>, id: string): Promise<string> {
  try {
    await run();
    return "ok";
  } catch (error) {
    const e = error as { code?: number; message?: string };
    return `${e.code} ${String(e.message).split(id).join("<id>")}`;
  }
}

type Agent = ReturnType<typeof connectOver>["agent"];

/** The methods a client can aim at a session id; each answer is compared with the one for an unknown id. */
export function sessionAttacks(agent: Agent, cwd: string): Record<string, (id: string) => Promise<unknown>> {
  return {
    load: (id) => agent.request(acp.methods.agent.session.load, { sessionId: id, cwd, mcpServers: [] }),
    resume: (id) => agent.request(acp.methods.agent.session.resume, { sessionId: id, cwd, mcpServers: [] }),
    prompt: (id) => agent.request(acp.methods.agent.session.prompt, { sessionId: id, prompt: text("hijack") }),
    setTitle: (id) => agent.request(acp.methods.agent.session.setTitle, { sessionId: id, title: "pwned" }),
    archive: (id) => agent.request(acp.methods.agent.session.archive, { sessionId: id }),
    status: (id) => agent.request(acp.methods.agent.session.status, { sessionId: id }),
    fork: (id) => agent.request(acp.methods.agent.session.fork, { sessionId: id, cwd, mcpServers: [] }),
    setMode: (id) => agent.request(acp.methods.agent.session.setMode, { sessionId: id, modeId: "auto-edit" }),
    close: (id) => agent.request(acp.methods.agent.session.close, { sessionId: id }),
    delete: (id) => agent.request(acp.methods.agent.session.delete, { sessionId: id }),
  };
}

/** `<root>/<principal>` for a workspace root (a real path, as serve compares real paths); serve makes it (0700) on first use. */
const home = (root: string, principal: "alice" | "bob"): string => join(root, principal);

async function initialize(agent: Agent): Promise<void> {
  await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
}

describe.skipIf(!engine.available)("serve --listen with a token file: two principals", () => {
  const dir = tempDir("agentkit-principals-");
  const ws = join(realpathSync(dir.path), "ws");
  let proc: ListeningServe;
  let url: string;
  beforeAll(async () => {
    proc = startListening(["--model", `scripted:${toolScript(dir.path)}`, "--token-file", tokenFile(dir.path), "--workspace-root", ws, "--state-dir", join(dir.path, "state"), "--approve", "ask"], { cwd: dir.path, env: cleanEnv() });
    url = await proc.url;
  });
  afterAll(async () => {
    await proc.kill();
    dir.remove();
  });

  for (const transport of ["http", "ws"] as const) {
    it(`${transport}: bob cannot list, load, resume, prompt, retitle, archive, fork, close or delete alice's session; it is answered as unknown and alice's open copy goes on`, async () => {
      const alice = connectOver(transport, url, ALICE);
      const bob = connectOver(transport, url, BOB);
      cleanups.push(() => alice.connection.close(), () => bob.connection.close());
      await initialize(alice.agent);
      await initialize(bob.agent);
      alice.client.answer = () => select("allow_once");
      const { sessionId } = await alice.agent.request(acp.methods.agent.session.new, { cwd: home(ws, "alice"), mcpServers: [] });
      expect((await alice.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: text("alice's secret plan") })).stopReason).toBe("end_turn");

      const listed = await bob.agent.request(acp.methods.agent.session.list, {});
      expect(listed.sessions.map((s) => s.sessionId)).not.toContain(sessionId);
      expect(JSON.stringify(listed)).not.toContain("secret plan");
      expect((await alice.agent.request(acp.methods.agent.session.list, {})).sessions.map((s) => s.sessionId)).toContain(sessionId);

      // bob's cwd is his own workspace: valid for him, so only ownership can refuse him.
      for (const [name, attack] of Object.entries(sessionAttacks(bob.agent, home(ws, "bob")))) {
        const unknown = await outcome(() => attack(UNKNOWN), UNKNOWN);
        // close and delete of an unknown id answer success (idempotent); the rest -32002.
        if (name !== "close" && name !== "delete") expect(unknown, name).toMatch(/^-32002 /);
        expect(await outcome(() => attack(sessionId), sessionId), name).toBe(unknown);
      }
      expect(bob.client.updates(sessionId)).toEqual([]);

      // Alice's open copy was never closed: she prompts on; her session is still hers, titled by her.
      expect((await alice.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: text("still mine") })).stopReason).toBe("end_turn");
      const mine = (await alice.agent.request(acp.methods.agent.session.list, {})).sessions.find((s) => s.sessionId === sessionId);
      expect(mine?.title).toBe("alice's secret plan");
      expect(await alice.agent.request(acp.methods.agent.session.status, { sessionId })).toMatchObject({ status: "open" });
    });
  }

  // With workspaces two principals can no longer share a directory, and the remembered answer's
  // key holds the session cwd: here bob's own project already keys apart from alice's. That the
  // key is also scoped by principal (same cwd, same tool call) is tested in principals.test.ts.
  it("alice's \"always allow\" is hers: bob, in his own workspace, is still asked", async () => {
    const alice = connectOver("http", url, ALICE);
    const bob = connectOver("ws", url, BOB);
    cleanups.push(() => alice.connection.close(), () => bob.connection.close());
    await initialize(alice.agent);
    await initialize(bob.agent);
    const cwd = join(home(ws, "alice"), "project");
    const bobCwd = join(home(ws, "bob"), "project");
    for (const d of [cwd, bobCwd]) mkdirSync(d, { recursive: true, mode: 0o700 });
    alice.client.answer = () => select("allow_always");
    const a = await alice.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    await alice.agent.request(acp.methods.agent.session.prompt, { sessionId: a.sessionId, prompt: text("write it") });
    expect(alice.client.permissionRequests).toHaveLength(1);
    // Alice is not asked again: her answer is remembered.
    const a2 = await alice.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    await alice.agent.request(acp.methods.agent.session.prompt, { sessionId: a2.sessionId, prompt: text("again") });
    expect(alice.client.permissionRequests).toHaveLength(1);

    bob.client.answer = () => select("reject_once");
    const b = await bob.agent.request(acp.methods.agent.session.new, { cwd: bobCwd, mcpServers: [] });
    await bob.agent.request(acp.methods.agent.session.prompt, { sessionId: b.sessionId, prompt: text("write it too") });
    expect(bob.client.permissionRequests).toHaveLength(1);
    expect(existsSync(join(cwd, "a.txt"))).toBe(true);
    expect(existsSync(join(bobCwd, "a.txt"))).toBe(false);
  });

  it("a request carrying alice's connection id with bob's token is answered as an unknown connection (404), over POST, GET and DELETE", async () => {
    const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } };
    const headers = (token: string): Record<string, string> => ({ "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: `Bearer ${token}` });
    const opened = await fetch(url, { method: "POST", headers: headers(ALICE), body: JSON.stringify(init) });
    expect(opened.status).toBe(200);
    const id = opened.headers.get("acp-connection-id")!;
    expect(id).toBeTruthy();
    // A request bob could make on a connection of his own (his workspace): only the connection id is wrong.
    const newSession = { jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: home(ws, "bob"), mcpServers: [] } };
    const unknownId = "00000000-0000-4000-8000-000000000000";
    for (const connectionId of [id, unknownId]) {
      const post = await fetch(url, { method: "POST", headers: { ...headers(BOB), "Acp-Connection-Id": connectionId }, body: JSON.stringify(newSession) });
      const get = await fetch(url, { method: "GET", headers: { ...headers(BOB), Accept: "text/event-stream", "Acp-Connection-Id": connectionId } });
      const del = await fetch(url, { method: "DELETE", headers: { ...headers(BOB), "Acp-Connection-Id": connectionId } });
      expect([post.status, await post.text(), get.status, await get.text(), del.status, await del.text()]).toEqual([404, "Unknown Acp-Connection-Id", 404, "Unknown Acp-Connection-Id", 404, "Unknown Acp-Connection-Id"]);
    }
    // Alice's connection is untouched: her DELETE closes it.
    const mine = await fetch(url, { method: "DELETE", headers: { ...headers(ALICE), "Acp-Connection-Id": id } });
    expect(mine.status).toBe(202);
  });
});

describe.skipIf(!engine.available)("serve --listen with a token file: provider routes and logout are per principal", () => {
  for (const transport of ["http", "ws"] as const) {
    it(`${transport}: bob's providers/set reroutes only bob's sessions, never with the server's key; bob's logout leaves alice logged in`, async () => {
      const dir = tempDir("agentkit-principals-");
      const operator = await startMockAnthropic({ whenEmpty: { text: "from the operator's provider" } });
      const evil = await startMockAnthropic({ whenEmpty: { text: "from bob's server" } });
      const ws = join(realpathSync(dir.path), "ws");
      const proc = startListening(["--model", "anthropic:claude-sonnet-4-5", "--base-url", operator.baseUrl, "--token-file", tokenFile(dir.path), "--workspace-root", ws, "--no-persist"], {
        cwd: dir.path,
        env: cleanEnv({ ANTHROPIC_API_KEY: "sk-server-secret" }),
      });
      cleanups.push(() => dir.remove(), () => operator.close(), () => evil.close(), () => proc.kill());
      const url = await proc.url;
      const alice = connectOver(transport, url, ALICE);
      const bob = connectOver(transport, url, BOB);
      cleanups.push(() => alice.connection.close(), () => bob.connection.close());
      await initialize(alice.agent);
      await initialize(bob.agent);

      await bob.agent.request(acp.methods.agent.providers.set, { providerId: "main", apiType: "anthropic", baseUrl: evil.baseUrl, headers: { "x-bob": "1" } });
      const listed = (await alice.agent.request(acp.methods.agent.providers.list, {})) as { providers: Array<{ current: { baseUrl: string } | null }> };
      expect(listed.providers[0]?.current?.baseUrl).toBe(operator.baseUrl);
      const a = await alice.agent.request(acp.methods.agent.session.new, { cwd: home(ws, "alice"), mcpServers: [] });
      expect((await alice.agent.request(acp.methods.agent.session.prompt, { sessionId: a.sessionId, prompt: text("alice asks") })).stopReason).toBe("end_turn");
      expect(operator.requests).toHaveLength(1);
      expect(operator.requests[0]?.headers["x-api-key"]).toBe("sk-server-secret");
      expect(evil.requests).toHaveLength(0);

      const b = await bob.agent.request(acp.methods.agent.session.new, { cwd: home(ws, "bob"), mcpServers: [] });
      await bob.agent.request(acp.methods.agent.session.prompt, { sessionId: b.sessionId, prompt: text("bob asks") });
      expect(evil.requests).toHaveLength(1);
      expect(JSON.stringify(evil.requests[0])).not.toContain("sk-server-secret");
      expect(JSON.stringify(evil.requests[0])).not.toContain("alice asks");

      await bob.agent.request(acp.methods.agent.logout, {});
      await expect(bob.agent.request(acp.methods.agent.session.prompt, { sessionId: b.sessionId, prompt: text("again") })).rejects.toMatchObject({ code: -32000 });
      expect((await alice.agent.request(acp.methods.agent.session.prompt, { sessionId: a.sessionId, prompt: text("alice again") })).stopReason).toBe("end_turn");
      expect(operator.requests).toHaveLength(2);
    });
  }
});

const pg = await postgresOrSkip("the two-instance ownership test");
describe.skipIf(!pg.url || !engine.available)("two serve --listen instances sharing PostgreSQL: ownership holds whichever instance is asked", () => {
  it("alice's session (opened on A) is not listed, loaded or deleted by bob on B; alice lists and loads it on B", async () => {
    const dir = tempDir("agentkit-principals-pg-");
    const db = await createTestDatabase(pg.url!, "principals");
    cleanups.push(() => dir.remove(), () => db.drop());
    // One workspace root for both instances (same machine): alice's cwd means the same on A and B.
    const ws = join(realpathSync(dir.path), "ws");
    const args = ["--model", `scripted:${toolScript(dir.path)}`, "--token-file", tokenFile(dir.path), "--workspace-root", ws, "--store", db.url, "--approve", "ask"];
    const [a, b] = [startListening(args, { cwd: dir.path, env: cleanEnv() }), startListening(args, { cwd: dir.path, env: cleanEnv() })];
    cleanups.push(() => a.kill(), () => b.kill());
    const alice = connectOver("http", await a.url, ALICE);
    const bob = connectOver("ws", await b.url, BOB);
    cleanups.push(() => alice.connection.close(), () => bob.connection.close());
    await initialize(alice.agent);
    await initialize(bob.agent);
    const { sessionId } = await alice.agent.request(acp.methods.agent.session.new, { cwd: home(ws, "alice"), mcpServers: [] });
    await alice.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: text("alice's secret plan") });

    expect((await bob.agent.request(acp.methods.agent.session.list, {})).sessions.map((s) => s.sessionId)).not.toContain(sessionId);
    const attacks = sessionAttacks(bob.agent, home(ws, "bob"));
    for (const name of ["load", "prompt", "status", "delete"] as const) {
      expect(await outcome(() => attacks[name]!(sessionId), sessionId), name).toBe(await outcome(() => attacks[name]!(UNKNOWN), UNKNOWN));
    }
    // Still alice's, still open on A; after she closes it there she loads it on B.
    expect((await alice.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: text("still mine") })).stopReason).toBe("end_turn");
    await alice.agent.request(acp.methods.agent.session.close, { sessionId });
    const aliceOnB = connectOver("ws", await b.url, ALICE);
    cleanups.push(() => aliceOnB.connection.close());
    await initialize(aliceOnB.agent);
    expect((await aliceOnB.agent.request(acp.methods.agent.session.list, {})).sessions.map((s) => s.sessionId)).toContain(sessionId);
    await aliceOnB.agent.request(acp.methods.agent.session.load, { sessionId, cwd: home(ws, "alice"), mcpServers: [] });
    expect(JSON.stringify(aliceOnB.client.updates(sessionId))).toContain("alice's secret plan");
  });
});
