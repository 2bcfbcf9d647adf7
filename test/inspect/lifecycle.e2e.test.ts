import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { processGroupAlive, waitProcessGroupGone } from "../../src/core/process/group.js";
import { until } from "../support/until.js";
import { readTrace } from "../../src/inspect/trace.js";
import { fixtureAgent, InspectProcess, tempDir } from "./support.js";

const init = `${JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } })}\n`;

describe("inspect tap: ends when either side ends, and ends the agent's group", () => {
  it("the editor closes stdin: an agent that ignores EOF and its grandchild are ended", async () => {
    const p = new InspectProcess(["--trace", join(tempDir(), "t.jsonl"), "--", process.execPath, fixtureAgent, "--announce", "--ignore-eof", "--grandchild"]);
    p.child.stdin!.write(init);
    await until(() => /fixture pid \d+/.test(p.stderr) && p.stdout.includes('"id":0'), 20_000);
    const pid = Number(/fixture pid (\d+)/.exec(p.stderr)?.[1]);
    expect(processGroupAlive(pid)).toBe(true);
    p.child.stdin!.end();
    expect(await p.exited).toBe(0);
    expect(await waitProcessGroupGone(pid, 5_000)).toBe(true);
  });

  it("the agent exits: stdout ends, inspect exits with the agent's code", async () => {
    const p = new InspectProcess(["--trace", join(tempDir(), "t.jsonl"), "--", process.execPath, "-e", "process.stdout.write('{\"jsonrpc\":\"2.0\",\"method\":\"_hello\"}\\n'); setTimeout(() => process.exit(3), 10)"]);
    const stdoutEnded = new Promise<void>((resolve) => p.child.stdout!.once("end", () => resolve()));
    await stdoutEnded;
    expect(await p.exited).toBe(3);
    expect(p.stdout).toBe('{"jsonrpc":"2.0","method":"_hello"}\n');
  });

  it("the trace is written as it happens: SIGKILL keeps every message seen so far", async () => {
    const trace = join(tempDir(), "t.jsonl");
    const p = new InspectProcess(["--trace", trace, "--", process.execPath, fixtureAgent]);
    p.child.stdin!.write(init);
    await p.waitState((s) => s.entries.length === 2);
    p.child.kill("SIGKILL"); // no chance to flush or close anything
    await p.exited;
    p.kill(); // the agent's group
    const read = readTrace(trace);
    expect(read.warnings).toEqual([]);
    expect(read.lines.map((l) => ("from" in l ? l.from : "note"))).toEqual(["client", "agent"]);
  });
});
