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
