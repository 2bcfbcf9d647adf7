import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { openServe, writeScript } from "../acp/agent/serve-support.js";
import { tempDir } from "../acp/agent/support.js";

// Issue 14 case 8: serve killed with SIGKILL leaves no shell tool command behind (bound 10 s).

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie is gone for our purposes.
  try {
    return !/\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** Process death has no event for non-children: poll every 25 ms, bounded. */
async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const readPid = (path: string): number => Number(readFileSync(path, "utf8").trim());

describe("robustness: no orphans after serve is SIGKILLed", () => {
  it("the shell tool's command and its background child end within 10 s of serve's SIGKILL", async () => {
    const dir = tempDir("agentkit-robust-orphans-");
    const command = "sleep 600 & echo $! > bg.pid; echo $$ > fg.pid; wait";
    const proc = openServe(["--model", `scripted:${writeScript(dir.path, [{ toolCall: { name: "shell", input: { command } } }, { text: "done" }])}`, "--no-persist", "--approve", "auto-all"], { cwd: dir.path, process: true });
    const pids: number[] = [];
    cleanups.push(() => {
      proc.kill();
      for (const pid of pids) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // gone, as it should be
        }
      }
      dir.remove();
    });
    const connection = acp.client({ name: "t" }).connect(proc.stream());
    await connection.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await connection.agent.request(acp.methods.agent.session.new, { cwd: dir.path, mcpServers: [] });
    connection.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "run it" }] }).catch(() => undefined);
    const bg = join(dir.path, "bg.pid");
    const fg = join(dir.path, "fg.pid");
    await until(() => existsSync(bg) && existsSync(fg) && readFileSync(fg, "utf8").endsWith("\n"), 20_000);
    pids.push(readPid(bg), readPid(fg));
    expect(pids.every(alive)).toBe(true);

    process.kill(proc.child.pid!, "SIGKILL"); // serve alone: its command runs in its own process group
    await proc.exited;
    const killedAt = Date.now();
    await until(() => !pids.some(alive), 10_000);
    const took = Date.now() - killedAt;
    expect(took).toBeLessThan(10_000);
    connection.close();
  });
});
