import { realpathSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { SignJWT, exportJWK, generateKeyPair } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import { startMockAnthropic } from "../../../src/testing/index.js";
import { startListening, connectOver } from "./http-support.js";
import { cleanEnv } from "./serve-support.js";
import { deferred, tempDir } from "./support.js";
import { ALICE, BOB, tokenFile } from "./principals-support.js";
import { sandboxOrSkip } from "../../support/sandbox-engine.js";

const engine = await sandboxOrSkip("serve --listen's identity tests");

// Identities of serve --listen through the real CLI: JWTs (JWKS from a file and from loopback),
// token-file errors, and SIGHUP rotation while a turn runs. More than one principal (JWT subjects,
// several token-file names) needs --workspace-root: every instance here that can have them gets one.

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const ISS = "https://issuer.test";
const AUD = "agentkit";
const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } };

async function initStatus(url: string, token: string): Promise<number> {
  const res = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: `Bearer ${token}` }, body: JSON.stringify(init) });
  await res.arrayBuffer();
  return res.status;
}

function workspace(): string {
  const dir = tempDir("agentkit-identities-");
  cleanups.push(() => dir.remove());
  return dir.path;
}

/** The --workspace-root of an instance in `dir` (a real path: serve compares real paths). */
const workspaceRoot = (dir: string): string => join(realpathSync(dir), "ws");

/** `startListening`, ended after the test; `{ process: true }` where the test signals it. */
function listen<O extends { process?: true } = Record<never, never>>(args: string[], cwd: string, where?: O) {
  const proc = startListening(args, { cwd, env: cleanEnv(), ...where } as { cwd: string; env: NodeJS.ProcessEnv } & O);
  cleanups.push(() => proc.kill());
  return proc;
}

async function keys() {
  const good = await generateKeyPair("ES256");
  const other = await generateKeyPair("ES256");
  const jwk = { ...(await exportJWK(good.publicKey)), kid: "k1", alg: "ES256" };
  const sign = (claims: Record<string, unknown>, options: { key?: Parameters<SignJWT["sign"]>[0]; kid?: string; iss?: string; aud?: string; exp?: number | string; nbf?: number | string } = {}) => {
    let jwt = new SignJWT(claims).setProtectedHeader({ alg: "ES256", kid: options.kid ?? "k1" }).setIssuedAt().setIssuer(options.iss ?? ISS).setAudience(options.aud ?? AUD).setExpirationTime(options.exp ?? "5m");
    if (options.nbf !== undefined) jwt = jwt.setNotBefore(options.nbf);
    return jwt.sign(options.key ?? good.privateKey);
  };
  const unsecured = `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${Buffer.from(JSON.stringify({ sub: "mallory", iss: ISS, aud: AUD, exp: Math.floor(Date.now() / 1000) + 300 })).toString("base64url")}.`;
  return { jwks: { keys: [jwk] }, sign, other, unsecured };
}

describe.skipIf(!engine.available)("serve --listen: JWT bearer tokens", () => {
  for (const source of ["file", "loopback URL"] as const) {
    it(`JWKS from a ${source}: a valid token acts for its sub (with the token file too); alg none, wrong iss, wrong aud, expired, not yet valid and unknown kid → 401`, async () => {
      const dir = workspace();
      const k = await keys();
      let jwks: string;
      if (source === "file") {
        jwks = join(dir, "jwks.json");
        writeFileSync(jwks, JSON.stringify(k.jwks));
      } else {
        const server = createServer((_req, res) => res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(k.jwks)));
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
        cleanups.push(() => new Promise((resolve) => server.close(resolve)));
        jwks = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
      }
      const proc = listen(["--model", "demo", "--no-persist", "--token-file", tokenFile(dir), "--jwks", jwks, "--jwt-issuer", ISS, "--jwt-audience", AUD, "--workspace-root", workspaceRoot(dir)], dir);
      const url = await proc.url;
      const now = Math.floor(Date.now() / 1000);
      const bad = {
        "alg none": k.unsecured,
        "wrong issuer": await k.sign({ sub: "mallory" }, { iss: "https://evil.test" }),
        "wrong audience": await k.sign({ sub: "mallory" }, { aud: "other" }),
        expired: await k.sign({ sub: "mallory" }, { exp: now - 600 }),
        "not yet valid": await k.sign({ sub: "mallory" }, { nbf: now + 600 }),
        "unknown kid": await k.sign({ sub: "mallory" }, { key: k.other.privateKey, kid: "k2" }),
        "right kid, other key": await k.sign({ sub: "mallory" }, { key: k.other.privateKey }),
      };
      for (const [name, token] of Object.entries(bad)) expect([name, await initStatus(url, token)]).toEqual([name, 401]);
      expect(await initStatus(url, await k.sign({ sub: "carol" }))).toBe(200);
      expect(await initStatus(url, ALICE)).toBe(200);

      // carol (JWT) owns her sessions: alice (token file) does not see them.
      const carol = connectOver("http", url, await k.sign({ sub: "carol" }));
      const alice = connectOver("ws", url, ALICE);
      cleanups.push(() => carol.connection.close(), () => alice.connection.close());
      for (const c of [carol, alice]) await c.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      expect(proc.stderr).not.toContain(ALICE);
    });
  }

  it("a JWKS file that cannot be used, or a malformed token file, stops serve with exit 2 naming the key or line", async () => {
    const dir = workspace();
    const jwks = join(dir, "jwks.json");
    writeFileSync(jwks, JSON.stringify({ keys: [{ kty: "EC", crv: "P-256", x: "AAAA", y: "AAAA", kid: "broken" }] }));
    // With --workspace-root, so that the unusable key is the only reason to stop.
    const badJwks = listen(["--model", "demo", "--no-persist", "--jwks", jwks, "--jwt-issuer", ISS, "--jwt-audience", AUD, "--workspace-root", workspaceRoot(dir)], dir);
    expect((await badJwks.exited).code).toBe(2);
    expect(badJwks.stderr).toContain('kid "broken"');

    const file = tokenFile(dir, `alice ${ALICE}\nbob\n`);
    const badFile = listen(["--model", "demo", "--no-persist", "--token-file", file, "--workspace-root", workspaceRoot(dir)], dir);
    expect((await badFile.exited).code).toBe(2);
    expect(badFile.stderr).toContain("line 2");
    expect(badFile.stderr).not.toContain(ALICE);
  });
});

describe.skipIf(!engine.available)("serve --listen: token rotation (SIGHUP)", () => {
  it("a new token file takes effect at SIGHUP while a turn runs, which finishes; a bad file keeps the tokens in use", async () => {
    const dir = workspace();
    const release = deferred<void>();
    const asked = deferred<void>();
    const mock = await startMockAnthropic({
      whenEmpty: async () => {
        asked.resolve();
        await release.promise;
        return { text: "finished after the rotation" };
      },
    });
    cleanups.push(() => mock.close());
    const file = tokenFile(dir, `alice ${ALICE}\n`);
    // --workspace-root: without it the reload below (which adds bob) would be refused.
    const ws = workspaceRoot(dir);
    const proc = startListening(["--model", "anthropic:claude-sonnet-4-5", "--base-url", mock.baseUrl, "--no-persist", "--token-file", file, "--workspace-root", ws], { cwd: dir, env: cleanEnv({ ANTHROPIC_API_KEY: "sk-test" }), process: true }); // SIGHUPed
    cleanups.push(() => proc.kill());
    const url = await proc.url;
    const alice = connectOver("http", url, ALICE);
    cleanups.push(() => alice.connection.close());
    await alice.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await alice.agent.request(acp.methods.agent.session.new, { cwd: join(ws, "alice"), mcpServers: [] });
    const turn = alice.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "long task" }] });
    await asked.promise;

    const NEW_ALICE = "alice-rotated-token-0123456789";
    writeFileSync(file, `alice ${NEW_ALICE}\nbob ${BOB}\n`);
    proc.signal("SIGHUP");
    await proc.waitForLog("--token-file re-read");
    expect(await initStatus(url, ALICE)).toBe(401);
    expect(await initStatus(url, NEW_ALICE)).toBe(200);
    expect(await initStatus(url, BOB)).toBe(200);

    writeFileSync(file, "alice\nbob only-one-field-is-wrong-here\nthird line with too many fields\n");
    proc.signal("SIGHUP");
    await proc.waitForLog("--token-file not re-read");
    expect(await initStatus(url, NEW_ALICE)).toBe(200);

    release.resolve();
    expect((await turn).stopReason).toBe("end_turn");
    expect(proc.stderr).not.toContain(NEW_ALICE);
    expect(proc.stderr).not.toContain(BOB);
  });
});
