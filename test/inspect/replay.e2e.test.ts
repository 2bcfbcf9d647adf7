import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bin, fixtureAgent, InspectProcess, startEditor, tempDir } from "./support.js";

async function record(ws: string, trace: string): Promise<void> {
  const { client } = await startEditor({ command: process.execPath, args: [bin, "inspect", "--trace", trace, "--", process.execPath, fixtureAgent], cwd: ws });
  try {
    const s = await client.newSession();
    await s.prompt("hello");
    await s.prompt(`edit ${join(ws, "notes.txt")}`); // asks permission: the replay answers as recorded
  } finally {
    await client.close();
  }
}

describe("inspect --replay", () => {
  it("the same agent answers the same (ids and timestamps ignored); exit 0", async () => {
    const ws = tempDir("inspect-ws-");
    const trace = join(tempDir(), "t.jsonl");
    await record(ws, trace);
    const p = new InspectProcess(["--replay", trace, "--agent", `${process.execPath} ${fixtureAgent}`, "--cwd", ws]);
    try {
      const state = await p.waitState((s) => s.status.state === "ended", 30_000);
      expect(state.replay?.length).toBeGreaterThan(10);
      expect(state.replay?.filter((d) => d.op !== "same")).toEqual([]);
      // The replayed conversation is on the page too, permission answered from the recording.
      const answer = state.entries.find((e) => e.from === "client" && e.method === "session/request_permission" && e.kind === "response");
      expect(JSON.stringify(answer?.message)).toContain("opt-allow-once");
      expect(p.stderr).toContain("the agent answered the same");
    } finally {
      expect(await p.stop()).toBe(0);
    }
  });

  it("a different agent: the differences are shown; exit 1", async () => {
    const ws = tempDir("inspect-ws-");
    const trace = join(tempDir(), "t.jsonl");
    await record(ws, trace);
    const p = new InspectProcess(["--replay", trace, "--agent", `${process.execPath} ${fixtureAgent} --minimal`, "--cwd", ws]);
    try {
      const state = await p.waitState((s) => s.status.state === "ended", 30_000);
      const removed = state.replay?.filter((d) => d.op === "removed") ?? [];
      const added = state.replay?.filter((d) => d.op === "added") ?? [];
      expect(removed.some((d) => d.text.includes("loadSession"))).toBe(true); // the recorded initialize answer
      expect(added.some((d) => d.text.includes("agentCapabilities"))).toBe(true);
      expect(p.stderr).toMatch(/replay: \d+ differing/);
    } finally {
      expect(await p.stop()).toBe(1);
    }
  });
});

describe("inspect --replay of a trace whose session directory is gone", () => {
  const serve = `${process.execPath} ${bin} serve --model demo`;
  async function recordServe(): Promise<string> {
    const ws = tempDir("inspect-ws-");
    const trace = join(tempDir(), "t.jsonl");
    const { client } = await startEditor({ command: process.execPath, args: [bin, "inspect", "--trace", trace, "--", ...serve.split(" ")], cwd: ws });
    try {
      await (await client.newSession()).prompt("hello");
    } finally {
      await client.close();
    }
    rmSync(ws, { recursive: true, force: true });
    return trace;
  }

  it("--cwd DIR replays the sessions in DIR (the demo model writes its note there)", async () => {
    const trace = await recordServe();
    const ws2 = tempDir("inspect-ws2-");
    const p = new InspectProcess(["--replay", trace, "--agent", serve, "--cwd", ws2]);
    try {
      const state = await p.waitState((s) => s.status.state === "ended", 30_000);
      expect(state.entries.find((e) => e.from === "client" && e.method === "session/new")?.message).toMatchObject({ params: { cwd: ws2 } });
      expect(existsSync(join(ws2, "agentkit-demo.md"))).toBe(true);
    } finally {
      await p.stop();
    }
  });

  it("without --cwd: a hint naming the directory and the option", async () => {
    const trace = await recordServe();
    const p = new InspectProcess(["--replay", trace, "--agent", serve]);
    try {
      // Said before the replay starts (which then waits out the refused session's silence).
      await p.url;
      const hint = /the trace's session directory \/\S+ is gone: the agent will refuse it; replay in another one with --cwd DIR/;
      for (const deadline = Date.now() + 20_000; !hint.test(p.stderr) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
      expect(p.stderr).toMatch(hint);
    } finally {
      await p.stop();
    }
  });
});
