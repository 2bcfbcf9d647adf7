import { realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AcpClient, CapabilityError, type AcpAgentConfig, type AcpSession } from "../../../src/acp/client/index.js";
import { expectGroupGone, fixtureConfig, repoRoot, tempDir } from "./helpers.js";
import { runCli as runCliInProcess, type CliRun } from "../../support/cli.js";

const bin = join(repoRoot, "bin/agentkit-acp.js");
const unstableFixture = new URL("../../fixtures/agents/unstable-agent.mjs", import.meta.url).pathname;

const clients: AcpClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) {
    const pid = c.pid;
    await c.close();
    if (pid !== undefined) await expectGroupGone(pid);
  }
});

async function start(config: AcpAgentConfig): Promise<AcpClient> {
  const client = await AcpClient.start(config);
  clients.push(client);
  return client;
}

/** `agentkit-acp serve` with a scripted model that answers with the transcript it was sent. */
function serveLine(dir: string): string {
  const script = join(dir, "script.json");
  writeFileSync(script, JSON.stringify({ steps: [{ echo: "transcript" }], onExhausted: "repeat-last" }));
  return `"${process.execPath}" "${bin}" serve --model "scripted:${script}" --state-dir "${join(dir, "state")}"`;
}

/** The CLI in-process (its agents are real processes). */
const runCli = (args: string[], cwd: string): Promise<CliRun> => runCliInProcess(args, { cwd });

/** The session's title, waiting for the agent's session_info_update when none has arrived yet. */
function titleOf(session: AcpSession): Promise<string> {
  if (session.title !== undefined) return Promise.resolve(session.title);
  return new Promise((resolve) => {
    const off = session.onEvent((event) => {
      if (event.type !== "session_info" || typeof event.title !== "string") return;
      off();
      resolve(event.title);
    });
  });
}

describe("AcpClient / AcpSession unstable session methods", () => {
  it("against agentkit-acp serve: fork, titles (derived and set), status, archive / unarchive with the list filter", async () => {
    const dir = realpathSync(tempDir());
    const client = await start({ shellLine: serveLine(dir), cwd: dir, stderr: "ignore" });
    const session = await client.newSession();
    await session.prompt("first question");
    expect(session.title).toBe("first question");
    expect(await session.status()).toMatchObject({ status: "open" });

    const fork = await session.fork();
    expect(fork.sessionId).not.toBe(session.sessionId);
    // The agent reports a restored session's title (session_info_update) just after its answer.
    expect(await titleOf(fork)).toBe("Fork of first question");
    const answer = await fork.prompt("in the fork");
    expect(answer.text).toContain("first question");
    expect(answer.text).toContain("in the fork");
    expect((await session.prompt("original again")).text).not.toContain("in the fork");

    expect(await fork.setTitle("  Forked   work ")).toBe("Forked work");
    expect(fork.title).toBe("Forked work");
    const titles = async (archived?: "include" | "only"): Promise<string[]> =>
      (await client.listSessions(archived ? { archived } : {})).sessions.map((s) => `${s.title ?? ""}${s.archived ? "*" : ""}`).sort();
    expect(await titles()).toEqual(["Forked work", "first question"]);

    await client.archiveSession(fork.sessionId);
    expect(client.sessions.map((s) => s.sessionId)).toEqual([session.sessionId]);
    expect(await titles()).toEqual(["first question"]);
    expect(await titles("only")).toEqual(["Forked work*"]);
    expect(await titles("include")).toEqual(["Forked work*", "first question"]);
    expect((await client.sessionStatus(fork.sessionId)).status).toBe("saved");
    await client.unarchiveSession(fork.sessionId);
    expect(await titles()).toEqual(["Forked work", "first question"]);
  });

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
    const states: string[] = [];
    let seen: () => void = () => undefined;
    client.onAuthStatus((s) => {
      states.push(s.state);
      seen();
    });
    const twoUpdates = new Promise<void>((resolve) => (seen = () => states.length === 2 && resolve()));
    const session = await client.newSession();
    await client.logout();
    await expect(session.prompt("x")).rejects.toMatchObject({ code: -32000 });
    await client.authenticate("fixture-login");
    await twoUpdates;
    expect(states).toEqual(["unauthenticated", "authenticated"]);
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

describe("agentkit-acp prompt: --fork, --list, --archive / --unarchive, --archived", () => {
  it("drives serve's sessions from the command line", async () => {
    const dir = realpathSync(tempDir());
    const agent = ["prompt", "--agent", serveLine(dir), "--cwd", dir];
    const first = await runCli([...agent, "--json", "plan the trip"], dir);
    expect(first.code, first.stderr).toBe(0);
    const sessionId = (JSON.parse(first.stdout.split("\n")[0]!) as { sessionId: string }).sessionId;

    const forked = await runCli([...agent, "--fork", sessionId, "and the return"], dir);
    expect(forked.code, forked.stderr).toBe(0);
    expect(forked.stderr).toMatch(new RegExp(`forked session ${sessionId} into sess_`));
    expect(forked.stdout).toContain("plan the trip");
    expect(forked.stdout).toContain("and the return");

    const listed = await runCli([...agent, "--list"], dir);
    expect(listed.code, listed.stderr).toBe(0);
    const rows = listed.stdout.trim().split("\n");
    expect(rows).toHaveLength(2);
    expect(rows.every((r) => r.endsWith("plan the trip"))).toBe(true);
    expect(rows.some((r) => r.startsWith(sessionId))).toBe(true);

    expect((await runCli([...agent, "--archive", sessionId], dir)).code).toBe(0);
    const after = await runCli([...agent, "--list", "--json"], dir);
    const lines = after.stdout.trim().split("\n").map((l) => JSON.parse(l) as { sessionId: string; archived: boolean; title: string });
    expect(lines.map((l) => l.sessionId)).not.toContain(sessionId);
    const only = await runCli([...agent, "--list", "--archived", "only"], dir);
    expect(only.stdout).toMatch(new RegExp(`^${sessionId}  \\S+  plan the trip \\[archived\\]\\n$`));
    expect((await runCli([...agent, "--unarchive", sessionId], dir)).code).toBe(0);
    expect((await runCli([...agent, "--list"], dir)).stdout.trim().split("\n")).toHaveLength(2);
  }, 180_000); // eight CLI runs (in-process), each starting serve on a busy machine

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
