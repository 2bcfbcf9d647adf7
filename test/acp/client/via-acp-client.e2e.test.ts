import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AcpClient, createFileSystemHost, createTerminalHost, type HostServices } from "../../../src/acp/client/index.js";
import { ATTACKS, advertisedFs, expectZeroEscapes, type Report } from "./escape-checks.js";
import { agentsDir, buildLayout, pidAlive, pidsIn, reports, snapshot, type Layout } from "./host-support.js";

// The same fixture agents, driven through our AcpClient with `hostServices` (its SDK handlers
// forward fs/* and terminal/* to the hosts, and it releases a session's terminals on close).

let layout: Layout | undefined;
const clients: AcpClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  layout?.cleanup();
});

async function start(agentFile: string, l: Layout, hostServices: HostServices): Promise<AcpClient> {
  const client = await AcpClient.start({
    command: process.execPath,
    args: [join(agentsDir, agentFile)],
    cwd: l.cwd,
    additionalDirectories: [l.extra],
    hostServices,
    stderr: "ignore",
  });
  clients.push(client);
  return client;
}

describe("host services through AcpClient", () => {
  it("adversarial fs agent: zero escapes with a read-write host; the capabilities were advertised", async () => {
    layout = buildLayout();
    const l = layout;
    const before = { outside: snapshot(l.outside), evil: snapshot(l.evil), extra: snapshot(l.extra) };
    const client = await start("fs-escape-agent.mjs", l, { fileSystem: createFileSystemHost({ access: "read-write" }) });
    const session = await client.newSession();
    const result = await session.prompt(JSON.stringify({ outside: l.outside, evil: l.evil }));
    expect(result.stopReason).toBe("end_turn");
    const results = reports<Report>(result.text);
    expect(advertisedFs(results)).toEqual({ readTextFile: true, writeTextFile: true });
    for (const a of ATTACKS) expect(results.filter((r) => r.name.endsWith(`:${a}`)), a).toHaveLength(2);
    for (const r of results.filter((x) => x.expect === "refuse")) {
      expect(r.ok, r.name).toBe(false);
      expect([-32602, -32002], r.name).toContain(r.error?.code);
    }
    for (const r of results.filter((x) => x.expect === "allow")) expect(r.ok, r.name).toBe(true);
    expectZeroEscapes(l, results, before);
  }, 60_000);

  it("adversarial fs agent: a read-only host refuses every write (writes not even advertised)", async () => {
    layout = buildLayout();
    const l = layout;
    const before = { outside: snapshot(l.outside), evil: snapshot(l.evil), extra: snapshot(l.extra), app: snapshot(l.cwd) };
    const client = await start("fs-escape-agent.mjs", l, { fileSystem: createFileSystemHost({ access: "read" }) });
    const session = await client.newSession();
    const results = reports<Report>((await session.prompt(JSON.stringify({ outside: l.outside, evil: l.evil }))).text);
    expect(advertisedFs(results)).toEqual({ readTextFile: true, writeTextFile: false });
    const writes = results.filter((r) => r.op === "write");
    expect(writes.length).toBeGreaterThanOrEqual(ATTACKS.length + 2);
    // AcpClient answers an unadvertised method with -32601 before the host is asked; the host itself would say -32602 "disabled".
    for (const w of writes) {
      expect(w.ok, w.name).toBe(false);
      expect([-32601, -32602], w.name).toContain(w.error?.code);
    }
    expect(results.find((r) => r.name === "read:control-file")?.ok).toBe(true);
    expect(snapshot(l.cwd)).toEqual(before.app);
    expectZeroEscapes(l, results, before);
  }, 60_000);

  it("terminal agent: lifecycle works and closing the session ends the terminal it left running", async () => {
    layout = buildLayout();
    const l = layout;
    const terminal = createTerminalHost();
    const client = await start("terminal-agent.mjs", l, { terminal });
    const session = await client.newSession();
    const result = await session.prompt(JSON.stringify({ outside: l.outside }));
    const steps = new Map(reports<{ step: string; ok: boolean; result?: { output?: string; truncated?: boolean }; error?: { data?: { reason?: string } } }>(result.text).map((s) => [s.step, s]));
    expect(steps.get("big:output")?.result).toMatchObject({ truncated: true, output: "\u{1D11E}".repeat(249) + "END" });
    expect(steps.get("forever:after-release")?.error?.data?.reason).toBe("unknown_terminal");
    expect(steps.get("outside-cwd")?.error?.data?.reason).toBe("outside_roots");
    const leftover = pidsIn(steps.get("leftover:running")?.result?.output ?? "")[0]!;
    expect(pidAlive(leftover)).toBe(true);
    expect(terminal.count(session.sessionId)).toBe(1);
    await session.close();
    expect(pidAlive(leftover)).toBe(false);
    expect(terminal.count()).toBe(0);
  }, 60_000);
});
