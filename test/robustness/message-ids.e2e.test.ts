import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterAll, describe, expect, it } from "vitest";
import { openServe, cleanEnv, writeScript } from "../acp/agent/serve-support.js";
import { RecordingClient, tempDir } from "../acp/agent/support.js";
import { repoRoot } from "../acp/client/helpers.js";
import { agentFixture } from "../support/fixture-agents.js";

// Issue 14 case 11: user message chunks carry a messageId (replayed by session/load, stable),
// and SDK error lines reach prompt's stderr through our logger, one readable line each.

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("robustness: message ids and SDK error lines", () => {
  it("session/load replays each prompt as its own user message (distinct ids, the same on every load)", async () => {
    const dir = tempDir("agentkit-robust-ids-");
    dirs.push(dir.path);
    const state = mkdtempSync(join(tmpdir(), "agentkit-robust-ids-state-"));
    dirs.push(state);
    const script = writeScript(dir.path, [{ text: "one" }, { text: "two" }]);
    const args = ["--model", `scripted:${script}`, "--state-dir", state];
    const first = openServe(args, { cwd: dir.path, env: cleanEnv() });
    const c1 = new RecordingClient().connect(first.stream());
    await c1.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await c1.agent.request(acp.methods.agent.session.new, { cwd: dir.path, mcpServers: [] });
    for (const text of ["first prompt", "second prompt"]) await c1.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
    c1.close();
    await first.end();

    const loadIds = async (): Promise<Array<{ text: string; messageId: unknown }>> => {
      const proc = openServe(args, { cwd: dir.path, env: cleanEnv() });
      const client = new RecordingClient();
      const connection = client.connect(proc.stream());
      try {
        await connection.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
        await connection.agent.request(acp.methods.agent.session.load, { sessionId, cwd: dir.path, mcpServers: [] });
        return client
          .updates(sessionId)
          .filter((u) => u.sessionUpdate === "user_message_chunk")
          .map((u) => ({ text: u.sessionUpdate === "user_message_chunk" && u.content.type === "text" ? u.content.text : "", messageId: (u as { messageId?: unknown }).messageId }));
      } finally {
        connection.close();
        await proc.end();
      }
    };
    const once = await loadIds();
    expect(once.map((u) => u.text)).toEqual(["first prompt", "second prompt"]);
    expect(once.every((u) => typeof u.messageId === "string" && u.messageId.length > 0)).toBe(true);
    expect(once[0]?.messageId).not.toBe(once[1]?.messageId);
    expect((await loadIds()).map((u) => u.messageId)).toEqual(once.map((u) => u.messageId));
  });

  it("an update the SDK rejects becomes one formatted line on prompt's stderr", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agentkit-robust-sdklog-"));
    dirs.push(dir);
    const hostile = agentFixture("hostile-agent.mjs");
    const run = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [join(repoRoot, "bin/agentkit-acp.js"), "prompt", "--agent", `"${process.execPath}" "${hostile}"`, "--permissions", "allow-all", "--cwd", dir, "--json", "go"], {
        cwd: dir,
        env: { ...process.env, NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stdout.resume();
      child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stderr }));
    });
    expect(run.code).toBe(0);
    const lines = run.stderr.split("\n").filter((l) => l.includes("Error handling notification"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[agentkit-acp prompt\] warn: the ACP SDK: Error handling notification \{"method":"session\/update","code":-32602/);
    // Nothing of the SDK's multi-line object dump is left on stderr.
    expect(run.stderr).not.toMatch(/^\s+(method|code|message):/m);
  });
});
