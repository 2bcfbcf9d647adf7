import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readTrace } from "../../src/inspect/trace.js";
import { normalize } from "../../src/inspect/replay.js";
import type { TraceMessage } from "../../src/inspect/types.js";
import { bin, editScript, fixtureAgent, InspectProcess, lines, startEditor, tempDir, wireRecorder } from "./support.js";

/** One turn with a tool call, a diff and a permission question; returns both directions as the client saw them. */
async function serveTurn(ws: string, scriptPath: string, tap: string[] | undefined): Promise<{ sent: unknown[]; received: unknown[]; text: string }> {
  writeFileSync(join(ws, "a.txt"), "hello\n");
  const serve = [process.execPath, bin, "serve", "--model", `scripted:${scriptPath}`];
  const argv = tap ? [bin, "inspect", ...tap, "--", ...serve] : serve.slice(1);
  // The tap would have serve trace to the inspector (a traced agent puts _meta.traceparent on its
  // requests): kept off, as the user's OTEL_TRACES_EXPORTER=none does, so both runs are alike.
  const { client, wire } = await startEditor({ command: process.execPath, args: argv, cwd: ws, env: { OTEL_TRACES_EXPORTER: "none" } });
  try {
    const session = await client.newSession();
    const result = await session.prompt("edit a.txt");
    return { sent: lines(wire.clientBytes), received: lines(wire.agentBytes), text: result.text };
  } finally {
    await client.close();
  }
}

describe("inspect tap: nothing changes on the wire", () => {
  it("in front of serve: the same messages both ways as without the tap, and the trace holds exactly them", async () => {
    const dir = tempDir();
    const ws = tempDir("inspect-ws-");
    const scriptPath = join(dir, "script.json");
    writeFileSync(scriptPath, JSON.stringify(editScript));
    const direct = await serveTurn(ws, scriptPath, undefined);
    const trace = join(dir, "trace.jsonl");
    const tapped = await serveTurn(ws, scriptPath, ["--no-redact", "--trace", trace]);
    expect(tapped.text).toBe("I'll edit the file.Done: the file now says hello world.");
    expect(direct.received.length).toBeGreaterThan(8);
    // Two runs of serve differ only in session ids and times: compare with those normalized.
    expect(normalize(tapped.sent)).toEqual(normalize(direct.sent));
    expect(normalize(tapped.received)).toEqual(normalize(direct.received));
    // The trace is what was on the wire, message for message, in order per direction.
    const read = readTrace(trace);
    expect(read.warnings).toEqual([]);
    const msgs = read.lines.filter((l): l is TraceMessage => "from" in l);
    expect(msgs.filter((l) => l.from === "client").map((l) => l.message)).toEqual(tapped.sent);
    expect(msgs.filter((l) => l.from === "agent").map((l) => l.message)).toEqual(tapped.received);
  });

  it("in front of an SDK-built agent: byte for byte, both directions (the agent's own stdio recorded)", async () => {
    const dir = tempDir();
    const ws = tempDir("inspect-ws-");
    const prefix = join(dir, "wire");
    const { client, wire } = await startEditor({
      command: process.execPath,
      args: [bin, "inspect", "--trace", join(dir, "t.jsonl"), "--", process.execPath, wireRecorder, prefix, process.execPath, fixtureAgent],
      cwd: ws,
    });
    try {
      const session = await client.newSession();
      expect((await session.prompt("hello")).text).toBe("Hello, world");
      expect((await session.prompt(`edit ${join(ws, "notes.txt")}`)).stopReason).toBe("end_turn");
    } finally {
      await client.close();
    }
    // What the client wrote is what the agent read; what the agent wrote is what the client read.
    expect(readFileSync(`${prefix}.in`).equals(Buffer.concat(wire.clientBytes))).toBe(true);
    expect(readFileSync(`${prefix}.out`).equals(Buffer.concat(wire.agentBytes))).toBe(true);
    expect(Buffer.concat(wire.agentBytes).length).toBeGreaterThan(1000);
  });

  it("the recorded trace opens in view mode with the same messages", async () => {
    const dir = tempDir();
    const ws = tempDir("inspect-ws-");
    const trace = join(dir, "t.jsonl");
    const { client } = await startEditor({ command: process.execPath, args: [bin, "inspect", "--trace", trace, "--", process.execPath, fixtureAgent], cwd: ws });
    try {
      await (await client.newSession()).prompt("hello");
    } finally {
      await client.close();
    }
    const view = new InspectProcess(["--open", trace]);
    try {
      const state = await view.state();
      expect(state.status).toMatchObject({ mode: "view", state: "ended" });
      const recorded = readTrace(trace).lines.filter((l): l is TraceMessage => "from" in l);
      expect(state.entries.map((e) => e.message)).toEqual(recorded.map((l) => l.message));
      const prompt = state.entries.find((e) => e.method === "session/prompt" && e.kind === "request");
      expect(prompt?.pairSeq).toBeDefined();
      expect(state.entries.every((e) => e.issues.every((i) => i.severity !== "error"))).toBe(true);
    } finally {
      expect(await view.stop()).toBe(0);
    }
  });
});
