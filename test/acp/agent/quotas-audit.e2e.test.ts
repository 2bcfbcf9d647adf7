import { chmodSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { SignJWT, exportJWK, generateKeyPair } from "jose";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../../support/cli.js";
import { createTestDatabase, postgresOrSkip } from "../../support/postgres.js";
import { startListening, connectOver, exitWithin } from "./http-support.js";
import { cleanEnv } from "./serve-support.js";
import { deferred, select, tempDir } from "./support.js";
import { sandboxOrSkip } from "../../support/sandbox-engine.js";

const engine = await sandboxOrSkip("serve --listen's quota tests");

// #22 items 6 and 7 through the real CLI: two serve --listen instances on one PostgreSQL.
// Quotas hold whichever instance is asked, a running turn is never cut, /metrics counts per
// principal, and `agentkit-acp audit` prints who did what, refusals included.

const pg = await postgresOrSkip("the quota and audit tests on two instances");
const cleanups: Array<() => Promise<unknown> | void> = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const TOKENS = {
  alice: "alice-token-0123456789abcdef",
  bob: "bob-token-0123456789abcdef01",
  carol: "carol-token-0123456789abcdef",
  dave: "dave-token-0123456789abcdef0",
};
type Who = keyof typeof TOKENS;
const text = (t: string): acp.ContentBlock[] => [{ type: "text", text: t }];

/** Every turn: write_file a.txt (asks permission under --mode ask), then "done". */
function toolScript(dir: string): string {
  const path = join(dir, "script.json");
  writeFileSync(path, JSON.stringify({ steps: [{ toolCall: { name: "write_file", input: { path: "a.txt", content: "x\n" } }, text: "writing" }, { text: "done" }], onExhausted: "repeat-last" }));
  return path;
}

interface QuotaError {
  code: number;
  data: { reason: string; limit: string; value: number; retryAfterMs: number };
}

async function refusal(run: () => Promise<unknown>): Promise<QuotaError> {
  try {
    await run();
  } catch (error) {
    return error as QuotaError;
  }
  throw new Error("the request was not refused");
}

describe.skipIf(!pg.url || !engine.available)("quotas across two serve --listen instances on PostgreSQL, and the audit trail", () => {
  it("sessions, turns, prompts per minute and tokens per day hold on both; turns run to the end; /metrics and audit show it", { timeout: 120_000 }, async () => {
    const dir = tempDir("agentkit-quotas-");
    const db = await createTestDatabase(pg.url!, "quotas");
    cleanups.push(() => dir.remove(), () => db.drop());
    const ws = join(realpathSync(dir.path), "ws");
    const tokens = join(dir.path, "tokens");
    // Existing two-field lines stay valid; a third column overrides --quota for its principal.
    writeFileSync(
      tokens,
      [
        `alice ${TOKENS.alice} quota=sessions=1,tokens-per-day=20`,
        `bob ${TOKENS.bob}`,
        `carol ${TOKENS.carol} quota=sessions=2,turns=1`,
        `dave ${TOKENS.dave} quota=sessions=2,prompts-per-minute=2`,
        "",
      ].join("\n"),
    );
    chmodSync(tokens, 0o600);
    const args = ["--model", `scripted:${toolScript(dir.path)}`, "--token-file", tokens, "--workspace-root", ws, "--store", db.url, "--approve", "ask", "--mode", "ask", "--quota", "sessions=5"];
    const [a, b] = [startListening(args, { cwd: dir.path, env: cleanEnv(), process: true }), startListening(args, { cwd: dir.path, env: cleanEnv(), process: true })]; // SIGTERMed
    cleanups.push(() => a.kill(), () => b.kill());
    const [urlA, urlB] = [await a.url, await b.url];
    const connect = (who: Who, on: "A" | "B") => {
      const c = connectOver(on === "A" ? "http" : "ws", on === "A" ? urlA : urlB, TOKENS[who]);
      cleanups.push(() => c.connection.close());
      return c;
    };
    const open = async (c: ReturnType<typeof connect>, who: Who) => {
      await c.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      return (await c.agent.request(acp.methods.agent.session.new, { cwd: join(ws, who), mcpServers: [] })).sessionId;
    };
    const since = new Date(Date.now() - 1_000).toISOString();

    // sessions=1: alice's one session is open on A; B refuses the second, saying which limit and when to retry.
    const aliceA = connect("alice", "A");
    const aliceB = connect("alice", "B");
    const aliceSession = await open(aliceA, "alice");
    await aliceB.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const sessions = await refusal(() => aliceB.agent.request(acp.methods.agent.session.new, { cwd: join(ws, "alice"), mcpServers: [] }));
    expect(sessions.code).toBe(-32600);
    expect(sessions.data).toMatchObject({ reason: "quota_exceeded", limit: "sessions", value: 1 });
    expect(sessions.data.retryAfterMs).toBeGreaterThan(0);
    // Bob (--quota sessions=5) is not held back by alice's limit.
    const bobB = connect("bob", "B");
    await open(bobB, "bob");

    // turns=1: carol's turn on A waits on her permission answer; her prompt on B is refused; the
    // turn on A then runs to its end (never cut), and B takes her next prompt.
    const carolA = connect("carol", "A");
    const carolB = connect("carol", "B");
    const [c1, c2] = [await open(carolA, "carol"), await open(carolB, "carol")];
    const held = deferred<acp.RequestPermissionResponse>();
    carolA.client.answer = () => held.promise;
    const running = carolA.agent.request(acp.methods.agent.session.prompt, { sessionId: c1, prompt: text("write") });
    await carolA.client.waitFor(() => carolA.client.permissionRequests.length === 1, "carol's permission request");
    const turns = await refusal(() => carolB.agent.request(acp.methods.agent.session.prompt, { sessionId: c2, prompt: text("second") }));
    expect(turns.data).toMatchObject({ reason: "quota_exceeded", limit: "turns", value: 1 });
    held.resolve(select("allow_once"));
    expect((await running).stopReason).toBe("end_turn");
    expect((await carolB.agent.request(acp.methods.agent.session.prompt, { sessionId: c2, prompt: text("now") })).stopReason).toBe("end_turn");

    // prompts-per-minute=2, counted on both instances together.
    const daveA = connect("dave", "A");
    const daveB = connect("dave", "B");
    const [d1, d2] = [await open(daveA, "dave"), await open(daveB, "dave")];
    await daveA.agent.request(acp.methods.agent.session.prompt, { sessionId: d1, prompt: text("1") });
    await daveB.agent.request(acp.methods.agent.session.prompt, { sessionId: d2, prompt: text("2") });
    const rate = await refusal(() => daveA.agent.request(acp.methods.agent.session.prompt, { sessionId: d1, prompt: text("3") }));
    expect(rate.data).toMatchObject({ reason: "quota_exceeded", limit: "prompts-per-minute", value: 2 });
    expect(rate.data.retryAfterMs).toBeGreaterThan(0);
    expect(rate.data.retryAfterMs).toBeLessThanOrEqual(60_000);

    // tokens-per-day=20: the first turn uses 30 (two model calls of 15) and still ends normally;
    // the NEXT prompt is refused until the next UTC day.
    expect((await aliceA.agent.request(acp.methods.agent.session.prompt, { sessionId: aliceSession, prompt: text("write") })).stopReason).toBe("end_turn");
    const daily = await refusal(() => aliceA.agent.request(acp.methods.agent.session.prompt, { sessionId: aliceSession, prompt: text("more") }));
    expect(daily.data).toMatchObject({ reason: "quota_exceeded", limit: "tokens-per-day", value: 20 });
    expect(daily.data.retryAfterMs).toBeLessThanOrEqual(86_400_000);

    // Refusals of the other rules are recorded too: bob asks for alice's session (answered as
    // unknown), names a cwd outside his workspace, and asks for a mode above the ceiling.
    await expect(bobB.agent.request(acp.methods.agent.session.load, { sessionId: aliceSession, cwd: join(ws, "bob"), mcpServers: [] })).rejects.toThrow();
    await expect(bobB.agent.request(acp.methods.agent.session.new, { cwd: join(ws, "alice"), mcpServers: [] })).rejects.toThrow(/cwd/);

    // Per-principal /metrics (labels: the token file's names).
    const scrape = async (url: string) => (await fetch(url.replace(/\/acp$/, "/metrics"), { headers: { Authorization: `Bearer ${TOKENS.bob}` } })).text();
    const [metricsA, metricsB] = [await scrape(urlA), await scrape(urlB)];
    expect(metricsB).toContain('agentkit_acp_quota_refusals_total{principal="alice",limit="sessions"} 1');
    expect(metricsB).toContain('agentkit_acp_quota_refusals_total{principal="carol",limit="turns"} 1');
    expect(metricsA).toContain('agentkit_acp_quota_refusals_total{principal="dave",limit="prompts-per-minute"} 1');
    expect(metricsA).toMatch(/agentkit_acp_principal_prompts_total\{principal="alice"\} 2/);
    expect(metricsA).toMatch(/agentkit_acp_principal_tokens_total\{principal="alice",direction="input"\} 20/);

    // A clean shutdown writes every queued audit record.
    a.signal("SIGTERM");
    b.signal("SIGTERM");
    expect((await exitWithin(a)).code).toBe(0);
    expect((await exitWithin(b)).code).toBe(0);

    const audit = (...more: string[]) => runCli(["audit", "--store", db.url, ...more], { cwd: dir.path, env: cleanEnv() });
    const all = await audit("--json");
    expect(all.code).toBe(0);
    const records = all.lines as Array<{ principal: string; action: string; sessionId?: string; instance: string; at: string; detail: Record<string, unknown> }>;
    const actions = (who: string) => records.filter((r) => r.principal === who).map((r) => `${r.action}${r.detail.reason ? `:${String(r.detail.reason)}` : ""}${r.detail.limit ? `:${String(r.detail.limit)}` : ""}`);
    expect(actions("alice")).toEqual(expect.arrayContaining(["session/new", "refused:quota_exceeded:sessions", "session/prompt", "tool_call", "refused:quota_exceeded:tokens-per-day"]));
    expect(actions("carol")).toEqual(expect.arrayContaining(["refused:quota_exceeded:turns"]));
    expect(actions("dave")).toEqual(expect.arrayContaining(["refused:quota_exceeded:prompts-per-minute"]));
    expect(actions("bob")).toEqual(expect.arrayContaining(["foreign_session", "refused"]));
    const tool = records.find((r) => r.principal === "carol" && r.action === "tool_call");
    expect(tool?.detail).toMatchObject({ tool: "write_file", permission: "approve" });
    // Both instances wrote, each under its own name; every record has a time.
    expect(new Set(records.map((r) => r.instance)).size).toBe(2);
    expect(records.every((r) => !Number.isNaN(Date.parse(r.at)))).toBe(true);

    // Text, filtered by principal and since.
    const bob = await audit("--principal", "bob", "--since", since);
    expect(bob.code).toBe(0);
    const lines = bob.stdout.trim().split("\n");
    expect(lines.every((l) => /^\S+Z {2}bob {2}/.test(l))).toBe(true);
    expect(bob.stdout).toMatch(/foreign_session {2}owner=alice/);
    expect(bob.stdout).toMatch(/refused {2}method=session\/new code=-32602/);
    expect((await audit("--since", "2999-01-01T00:00:00Z")).stdout).toBe("");
    expect((await audit("--principal", "alice", "--since", "1h", "--json")).lines.length).toBe(actions("alice").length);
  });
});

describe.skipIf(!engine.available)("the agentkit_quota JWT claim", () => {
  it("sets its subject's limits over --quota; a subject without it keeps the operator's", { timeout: 60_000 }, async () => {
    const dir = tempDir("agentkit-quota-jwt-");
    cleanups.push(() => dir.remove());
    const key = await generateKeyPair("ES256");
    const jwks = join(dir.path, "jwks.json");
    writeFileSync(jwks, JSON.stringify({ keys: [{ ...(await exportJWK(key.publicKey)), kid: "k1", alg: "ES256" }] }));
    const sign = (claims: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: "ES256", kid: "k1" }).setIssuer("https://issuer.test").setAudience("agentkit").setExpirationTime("5m").sign(key.privateKey);
    const ws = join(realpathSync(dir.path), "ws");
    const proc = startListening(["--model", "demo", "--no-persist", "--jwks", jwks, "--jwt-issuer", "https://issuer.test", "--jwt-audience", "agentkit", "--workspace-root", ws, "--quota", "sessions=2"], { cwd: dir.path, env: cleanEnv() });
    cleanups.push(() => proc.kill());
    const url = await proc.url;
    const opens = async (token: string, who: string, n: number): Promise<string[]> => {
      const c = connectOver("ws", url, token);
      cleanups.push(() => c.connection.close());
      await c.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      const out: string[] = [];
      for (let i = 0; i < n; i++) {
        out.push(await c.agent.request(acp.methods.agent.session.new, { cwd: join(ws, who), mcpServers: [] }).then(
          () => "ok",
          (e: QuotaError) => `${e.data.limit}=${e.data.value}`,
        ));
      }
      return out;
    };
    expect(await opens(await sign({ sub: "erin", agentkit_quota: { sessions: 1 } }), "erin", 2)).toEqual(["ok", "sessions=1"]);
    expect(await opens(await sign({ sub: "frank" }), "frank", 3)).toEqual(["ok", "ok", "sessions=2"]);
  });
});

describe("bad input", () => {
  it("--quota foo, an unknown name and --audit-retain without a duration exit 2 naming what to fix", async () => {
    const dir = tempDir("agentkit-quota-flags-");
    cleanups.push(() => dir.remove());
    const serve = (...args: string[]) => runCli(["serve", ...args], { cwd: dir.path, env: cleanEnv() });
    const foo = await serve("--quota", "foo");
    expect(foo.code).toBe(2);
    expect(foo.stderr).toMatch(/--quota takes NAME=VALUE\[,NAME=VALUE\] with NAME one of sessions, turns, prompts-per-minute, tokens-per-day .*got "foo"/);
    expect((await serve("--quota", "sessions=2,tokens=5")).stderr).toMatch(/got "tokens=5"/);
    expect((await serve("--listen", "0", "--audit-retain", "soon")).stderr).toMatch(/--audit-retain takes an age such as 30d, 12h or 90m/);
    const audit = await runCli(["audit", "--since", "yesterday"], { cwd: dir.path, env: cleanEnv() });
    expect(audit.code).toBe(2);
    expect(audit.stderr).toMatch(/--since takes an age back from now \(30d, 12h, 90m\) or an ISO time \(got "yesterday"\)/);
  });
});
