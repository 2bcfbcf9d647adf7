import { describe, expect, it } from "vitest";
import {
  AcpClient,
  AcpTimeoutError,
  AgentExitedError,
  AgentSpawnError,
  ProtocolVersionError,
  type ClientLifecycleEvent,
} from "../../../src/acp/client/index.js";
import { expectGroupGone, fixture, fixtureConfig, pidAlive, startClient, tempDir, trackPid } from "./helpers.js";

/** A config whose agent announces its pid (and grandchild's) on stderr, captured here. */
function announcing(flags: string[], extra: Parameters<typeof fixtureConfig>[1] = {}) {
  const pids: number[] = [];
  const lines: string[] = [];
  const config = fixtureConfig(["--announce", ...flags], {
    stderr: (line) => {
      lines.push(line);
      const m = /(?:fixture|grandchild) pid (\d+)/.exec(line);
      if (m) pids.push(Number(m[1]));
    },
    ...extra,
  });
  return { config, pids, lines };
}

describe("the agent process", () => {
  it("a crash mid-prompt settles the prompt with AgentExitedError (exit code, stderr tail)", async () => {
    const client = await startClient(["--announce"]);
    const session = await client.newSession();
    const events: string[] = [];
    session.onEvent((e) => events.push(e.type));
    const error = await session.prompt("crash").then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(AgentExitedError);
    const exited = error as AgentExitedError;
    expect(exited.exitCode).toBe(3);
    expect(exited.signal).toBeNull();
    expect(exited.stderrTail).toContain("fatal: simulated crash in the middle of a prompt");
    expect(exited.message).toMatch(/exited with code 3[\s\S]*simulated crash/);
    expect(events).toContain("message_chunk"); // what arrived before the crash was delivered
    expect(events.at(-1)).toBe("error");
    // Every later call settles too, with the same typed error.
    await expect(session.prompt("hello")).rejects.toBeInstanceOf(AgentExitedError);
    await expect(client.newSession()).rejects.toBeInstanceOf(AgentExitedError);
    await expect(session.close()).resolves.toBeUndefined(); // nothing left to close on a dead agent
  });

  it("times out an agent that never answers initialize, and ends it", async () => {
    const { config, pids } = announcing(["--silent-init"], { timeouts: { initializeMs: 800 } });
    const t0 = performance.now();
    await expect(AcpClient.start(config)).rejects.toBeInstanceOf(AcpTimeoutError);
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(pids).toHaveLength(1);
    await expectGroupGone(pids[0] as number);
  });

  it("rejects an agent that speaks protocol version 2 only, clearly, and ends it", async () => {
    const { config, pids } = announcing(["--v2"]);
    const error = await AcpClient.start(config).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolVersionError);
    expect(error).toMatchObject({ agentVersion: 2, supported: [1] });
    expect((error as Error).message).toMatch(/protocol version 2.*supports only version 1/);
    await expectGroupGone(pids[0] as number);
  });

  it("reports a missing executable as AgentSpawnError, and a missing shell command with exit 127", async () => {
    await expect(AcpClient.start({ command: "definitely-not-an-acp-agent-xyz", cwd: "/tmp" })).rejects.toBeInstanceOf(AgentSpawnError);
    const error = await AcpClient.start({ shellLine: "definitely-not-an-acp-agent-xyz --acp", cwd: "/tmp", stderr: "ignore" }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(AgentExitedError);
    expect(error).toMatchObject({ exitCode: 127 });
    expect((error as AgentExitedError).stderrTail.join("\n")).toMatch(/not found/);
  });

  it("leaves no orphans when the agent runs behind a shell wrapper with a grandchild", async () => {
    const { config, pids } = announcing([], { command: undefined, args: undefined, shellLine: `"${process.execPath}" "${fixture}" --announce --grandchild; echo wrapper-done >&2` });
    const client = await AcpClient.start(config);
    trackPid(client.pid);
    const session = await client.newSession();
    expect((await session.prompt("hello")).text).toBe("Hello, world");
    expect(pids).toHaveLength(2); // the agent and its grandchild
    await client.close();
    await expectGroupGone(client.pid as number);
    for (const pid of pids) expect(pidAlive(pid), `pid ${pid}`).toBe(false);
  });

  it("close() escalates: stdin EOF, then SIGTERM, then SIGKILL", async () => {
    const eof = await AcpClient.start(fixtureConfig(["--ignore-eof"], { timeouts: { exitGraceMs: 200, termGraceMs: 2_000 } }));
    trackPid(eof.pid);
    const t0 = performance.now();
    await eof.close();
    expect(performance.now() - t0).toBeGreaterThanOrEqual(190);
    await expectGroupGone(eof.pid as number);

    const stubborn = await AcpClient.start(fixtureConfig(["--ignore-eof", "--ignore-term"], { timeouts: { exitGraceMs: 100, termGraceMs: 300 } }));
    trackPid(stubborn.pid);
    const t1 = performance.now();
    await stubborn.close();
    expect(performance.now() - t1).toBeGreaterThanOrEqual(390);
    await expectGroupGone(stubborn.pid as number);
  });

  it("never crashes the host with EPIPE when writing to a dead agent", async () => {
    const client = await startClient();
    const session = await client.newSession();
    process.kill(-(client.pid as number), "SIGKILL");
    const error = await session.prompt("hello").then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(AgentExitedError);
    expect(error).toMatchObject({ signal: "SIGKILL" });
    await client.close();
  });

  it("ends an agent that stopped reading stdin (EPIPE) so pending calls settle with AgentExitedError", async () => {
    const client = await startClient(["--close-stdin", "--ignore-eof"], undefined, { timeouts: { exitGraceMs: 200, requestMs: 60_000 } });
    await new Promise((r) => setTimeout(r, 300)); // the agent closes its stdin 50 ms after initialize
    const error = await client.newSession().then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(AgentExitedError);
    expect(error).toMatchObject({ signal: "SIGTERM" });
  });

  it("recovery (opt-in): respawns the agent and resumes the session after a crash", async () => {
    const state = tempDir();
    const lifecycle: ClientLifecycleEvent[] = [];
    const client = await startClient(["--state", state], undefined, { recovery: { enabled: true, maxRestarts: 1 } });
    client.onLifecycle((e) => lifecycle.push(e));
    const firstPid = client.pid;
    const session = await client.newSession();
    await expect(session.prompt("crash")).rejects.toBeInstanceOf(AgentExitedError);
    const result = await session.prompt("hello");
    expect(result.text).toBe("Hello, world");
    expect(client.pid).not.toBe(firstPid);
    trackPid(client.pid);
    expect(lifecycle.map((e) => e.type)).toEqual(["agent_exited", "recovered"]);
    expect(lifecycle[1]).toMatchObject({ restarts: 1, sessions: [session.sessionId] });
    await expectGroupGone(firstPid as number);
  });

  it("recovery falls back to session/load and does not re-deliver the replayed history", async () => {
    const state = tempDir();
    const client = await startClient(["--state", state, "--no-resume"], undefined, { recovery: { enabled: true } });
    const session = await client.newSession();
    await session.prompt("hello");
    const seen: string[] = [];
    session.onEvent((e) => seen.push(e.type));
    await expect(session.prompt("crash")).rejects.toBeInstanceOf(AgentExitedError);
    seen.length = 0;
    expect((await session.prompt("refuse")).stopReason).toBe("refusal");
    trackPid(client.pid);
    // Only the new turn's events: the history replayed by session/load stayed internal.
    expect(seen).toEqual(["user_message_chunk", "done"]);
  });
});
