import { createServer } from "node:net";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { InspectProcess, tempDir } from "./support.js";

const header = JSON.stringify({ agentkitInspect: 1, startedAt: 1, mode: "tap", agent: "x", redacted: true });

describe("inspect: bad input", () => {
  it("an agent that cannot be started: stderr and the page say so, exit 1", async () => {
    const p = new InspectProcess(["--trace", join(tempDir(), "t.jsonl"), "--", "/nonexistent/agent-binary", "--flag"]);
    const state = await p.waitState((s) => s.status.state === "failed");
    expect(state.status.detail).toContain("the agent could not be started: /nonexistent/agent-binary");
    expect(state.notes.some((n) => n.note.level === "error" && n.note.text.includes("ENOENT"))).toBe(true);
    expect(p.stderr).toContain("the agent could not be started");
    p.child.stdin!.end(); // the editor lets go
    expect(await p.exited).toBe(1);
    expect(p.stdout).toBe(""); // nothing but protocol on stdout
  });

  it("drive mode with an agent that cannot be started: page and stderr say so, exit 1", async () => {
    const p = new InspectProcess(["--agent", "/nonexistent/agent-binary"]);
    const state = await p.waitState((s) => s.status.state === "failed");
    expect(state.status.detail).toMatch(/could not be started/);
    expect(p.stderr).toMatch(/could not be started/);
    expect(await p.stop()).toBe(1);
  });

  it("a port in use: exit 2, naming the port", async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      const p = new InspectProcess(["--port", String(port), "--open", "/nonexistent.jsonl"]);
      expect(await p.exited).toBe(2);
      expect(p.stderr).toContain(`port ${port} on 127.0.0.1 is in use`);
    } finally {
      blocker.close();
    }
  });

  it("a torn trace opens up to the last whole line, with a warning", async () => {
    const file = join(tempDir(), "torn.jsonl");
    writeFileSync(file, `${header}\n`);
    appendFileSync(file, `${JSON.stringify({ ts: 10, from: "client", message: { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1 } } })}\n`);
    appendFileSync(file, "this line is not json\n");
    appendFileSync(file, `{"ts": 12, "from": "agent", "message": {"jsonrpc": "2.0", "id": 0, "res`); // crash mid-write
    const p = new InspectProcess(["--open", file]);
    try {
      const state = await p.waitState((s) => s.status.state === "ended");
      expect(state.entries).toHaveLength(1);
      expect(state.entries[0]?.method).toBe("initialize");
      expect(state.notes.map((n) => n.note.text).join("\n")).toMatch(/last line .* is torn[\s\S]*line 3 is not JSON/);
      expect(p.stderr).toMatch(/warning: .*torn/);
    } finally {
      expect(await p.stop()).toBe(0);
    }
  });

  it("a missing trace and bad options are usage errors (exit 2)", async () => {
    const missing = new InspectProcess(["--open", "/nonexistent/trace.jsonl"]);
    expect(await missing.exited).toBe(2);
    expect(missing.stderr).toMatch(/cannot read \/nonexistent\/trace.jsonl/);
    const noMode = new InspectProcess(["--port", "0"]);
    expect(await noMode.exited).toBe(2);
    expect(noMode.stderr).toMatch(/choose one mode/);
    const badPort = new InspectProcess(["--port", "x", "--", "true"]);
    expect(await badPort.exited).toBe(2);
    expect(badPort.stderr).toMatch(/--port must be a number/);
  });

  it("the page refuses requests without the token", async () => {
    const file = join(tempDir(), "t.jsonl");
    writeFileSync(file, `${header}\n`);
    const p = new InspectProcess(["--open", file]);
    try {
      const url = new URL(await p.url);
      expect(url.hostname).toBe("127.0.0.1");
      expect((await fetch(new URL("/", url))).status).toBe(403);
      expect((await fetch(new URL("/api/state?t=wrong", url))).status).toBe(403);
      expect((await fetch(new URL("/events", url))).status).toBe(403);
      expect((await fetch(url)).status).toBe(200);
      expect((await fetch(new URL("/assets/app.js", url))).headers.get("content-type")).toMatch(/javascript/);
    } finally {
      await p.stop();
    }
  });
});
