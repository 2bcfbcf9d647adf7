import { afterEach, describe, expect, it } from "vitest";
import { AcpClient, ClientPermissionPolicy } from "../../src/acp/client/index.js";
import { startListening, TOKEN } from "../acp/agent/http-support.js";
import { tempDir } from "../acp/agent/support.js";
import { sandboxOrSkip } from "../support/sandbox-engine.js";

const engine = await sandboxOrSkip("serve --listen --no-persist");

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/**
 * `serve --listen --no-persist` may run for months: the sessions its clients leave behind must
 * leave its memory (the in-memory store kept every one for the process's life). Counted in the
 * store itself, through session/list.
 */
describe.skipIf(!engine.available)("serve --listen --no-persist: sessions leave memory with their clients", () => {
  it("sessions closed by session/close or by their connection's end are forgotten; an open one stays listed", async () => {
    const dir = tempDir("agentkit-no-persist-");
    cleanups.push(() => dir.remove());
    const proc = startListening(["--model", "demo", "--no-persist"], { cwd: dir.path });
    cleanups.push(() => proc.kill());
    const http = await proc.url;
    const start = (transport: "http" | "ws"): Promise<AcpClient> =>
      AcpClient.start({ url: transport === "ws" ? http.replace(/^http/, "ws") : http, token: TOKEN, cwd: dir.path, reconnect: { enabled: false } }, ClientPermissionPolicy.allowAll());
    const watcher = await start("http");
    cleanups.push(() => watcher.close());
    const listed = async (): Promise<number> => (await watcher.listSessions()).sessions.length;
    expect(await listed()).toBe(0);

    const open = await (await start("ws")).newSession();
    for (const [i, transport] of (["http", "ws", "http", "ws", "http", "ws"] as const).entries()) {
      const client = await start(transport);
      const session = await client.newSession();
      expect((await session.prompt("hello")).stopReason).toBe("end_turn");
      if (i % 2 === 0) await session.close(); // else the connection's end closes it
      await client.close();
    }
    // Closing after a connection ends is asynchronous on the server: wait (bounded) for the count.
    const deadline = Date.now() + 20_000;
    while ((await listed()) !== 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const sessions = (await watcher.listSessions()).sessions;
    expect(sessions.map((s) => s.sessionId)).toEqual([open.sessionId]);
    expect(proc.stderr).toContain("sessions are kept in memory only while a connection has them open");
  });
});
