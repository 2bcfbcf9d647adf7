import { realpathSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CapabilityError } from "../../../src/acp/client/index.js";
import { expectSignOutAndIn, fixtureConfig, startAgent as start, tempDir } from "./helpers.js";
import { runCli as runCliInProcess, type CliRun } from "../../support/cli.js";
import { agentFixture } from "../../support/fixture-agents.js";

const unstableFixture = agentFixture("unstable-agent.mjs");

/** The CLI in-process (its agents are real processes). */
const runCli = (args: string[], cwd: string): Promise<CliRun> => runCliInProcess(args, { cwd });

describe("AcpClient / AcpSession unstable session methods", () => {
  it("against an agent built on the official SDK's /unstable entrypoint", async () => {
    const dir = realpathSync(tempDir());
    const client = await start({ command: process.execPath, args: [unstableFixture], cwd: dir, stderr: "ignore" });
    const session = await client.newSession();
    await session.prompt("one");
    expect(session.title).toBe("one");
    const fork = await session.fork();
    expect((await fork.prompt("two")).text).toBe("history: one | two");
    expect((await session.prompt("three")).text).toBe("history: one | three");
    expect(await fork.setTitle("mine")).toBe("MINE"); // the agent's normalization wins
    expect(fork.title).toBe("MINE");
    expect((await fork.status()).status).toBe("open");
    await client.archiveSession(fork.sessionId);
    expect((await client.listSessions()).sessions.map((s) => s.sessionId)).toEqual([session.sessionId]);
    expect((await client.listSessions({ archived: "only" })).sessions.map((s) => [s.sessionId, s.archived])).toEqual([[fork.sessionId, true]]);
    expect((await client.sessionStatus(fork.sessionId)).status).toBe("saved");
  });

  it("logout, auth/status and auth/status_update against the SDK-built agent", async () => {
    const client = await start({ command: process.execPath, args: [unstableFixture], cwd: realpathSync(tempDir()), stderr: "ignore" });
    expect(await client.authStatus()).toEqual({ state: "authenticated", accounts: [{ label: "fixture account", active: true }] });
    const session = await client.newSession();
    await expectSignOutAndIn(client, session, "fixture-login");
    expect((await session.prompt("y")).text).toBe("history: y");
  });

  it("providers/list, set and disable against the SDK-built agent", async () => {
    const client = await start({ command: process.execPath, args: [unstableFixture], cwd: realpathSync(tempDir()), stderr: "ignore" });
    expect((await client.listProviders()).map((p) => [p.providerId, p.current?.baseUrl ?? null])).toEqual([
      ["main", "https://api.example.test/v1"],
      ["extra", null],
    ]);
    await client.setProvider("extra", { apiType: "anthropic", baseUrl: "https://gw.example.test" });
    await client.setProvider("main", { apiType: "openai", baseUrl: "https://gw2.example.test/v1", headers: { authorization: "Bearer x" } });
    expect((await client.listProviders()).map((p) => p.current?.baseUrl)).toEqual(["https://gw2.example.test/v1", "https://gw.example.test"]);
    await client.disableProvider("extra");
    expect((await client.listProviders())[1]?.current ?? null).toBeNull();
    await expect(client.disableProvider("main")).rejects.toMatchObject({ code: -32602 });
  });

  it("refuses the methods an agent does not advertise, naming the capability", async () => {
    const client = await start(fixtureConfig(["--minimal"]));
    const session = await client.newSession();
    await expect(session.fork()).rejects.toThrow(CapabilityError);
    await expect(session.fork()).rejects.toThrow(/sessionCapabilities\.fork/);
    await expect(session.setTitle("x")).rejects.toThrow(/sessionCapabilities\.title/);
    await expect(session.status()).rejects.toThrow(/sessionCapabilities\.status/);
    await expect(client.archiveSession(session.sessionId)).rejects.toThrow(/sessionCapabilities\.archive/);
    await expect(client.authStatus()).rejects.toThrow(/auth\.status/);
    await expect(client.listProviders()).rejects.toThrow(/providers/);
  });
});

// serve driven by our client and by `prompt` (fork, titles, status, archive, the list filter): protocols.e2e.test.ts, once per protocol.
describe("agentkit-acp prompt: --fork, --list, --archive / --unarchive, --archived", () => {
  it("usage errors exit 2 and say what to fix", async () => {
    const dir = realpathSync(tempDir());
    const bad = await runCli(["prompt", "--list", "--archived", "maybe"], dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--archived must be include or only");
    const both = await runCli(["prompt", "--fork", "a", "--session", "b", "hi"], dir);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("--fork and --session exclude each other");
    const unsupported = await runCli(["prompt", "--agent", `"${process.execPath}" "${fixtureConfig().args![0]}" --minimal`, "--list"], dir);
    expect(unsupported.code).toBe(1); // a capability the agent lacks is an error, as for --add-dir
    expect(unsupported.stderr).toContain("sessionCapabilities.list");
  });
});
