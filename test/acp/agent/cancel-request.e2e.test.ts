import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { connectServe, gone, hanging, startedPid, writeScript } from "./serve-support.js";
import { tempDir } from "./support.js";

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function serve(dir: string) {
  const script = writeScript(dir, [{ echo: "last_user_message" }]);
  // A start-up bound far beyond the test: only the cancellation can end these requests early.
  return ["--model", `scripted:${script}`, "--state-dir", join(dir, "state"), "--mcp-startup-timeout", "600000"];
}

describe("$/cancel_request cancels slow session requests cleanly", () => {
  it("official SDK client → serve: a session/new stuck starting an MCP server, and a session/load likewise, answer -32800 and leave nothing behind", async () => {
    const dir = tempDir("agentkit-cancel-req-");
    const env = connectServe(serve(dir.path), { cwd: dir.path });
    cleanups.push(
      () => dir.remove(),
      async () => {
        env.connection.close();
        await env.proc.end();
      },
    );
    await env.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });

    const slow = hanging(dir.path, "new");
    const abort = new AbortController();
    const request = env.agent.request(acp.methods.agent.session.new, { cwd: dir.path, mcpServers: [slow.server] }, { cancellationSignal: abort.signal });
    const settled = request.then(
      () => "answered",
      (e: unknown) => e,
    );
    const pid = await startedPid(slow.pidFile);
    abort.abort();
    expect(await settled).toMatchObject({ code: -32800 });
    expect(await gone(pid), "the MCP server of the cancelled session/new is stopped").toBe(true);
    // Nothing stored or open; the agent serves on.
    expect((await env.agent.request(acp.methods.agent.session.list, {})).sessions).toEqual([]);
    const ok = await env.agent.request(acp.methods.agent.session.new, { cwd: dir.path, mcpServers: [] });
    await env.agent.request(acp.methods.agent.session.prompt, { sessionId: ok.sessionId, prompt: [{ type: "text", text: "kept" }] });
    await env.agent.request(acp.methods.agent.session.close, { sessionId: ok.sessionId });

    const slowLoad = hanging(dir.path, "load");
    const abortLoad = new AbortController();
    const loading = env.agent
      .request(acp.methods.agent.session.load, { sessionId: ok.sessionId, cwd: dir.path, mcpServers: [slowLoad.server] }, { cancellationSignal: abortLoad.signal })
      .then(
        () => "answered",
        (e: unknown) => e,
      );
    const loadPid = await startedPid(slowLoad.pidFile);
    abortLoad.abort();
    expect(await loading).toMatchObject({ code: -32800 });
    expect(await gone(loadPid)).toBe(true);
    // Still stored, not open: a prompt is refused until a load succeeds, which replays the history.
    await expect(env.agent.request(acp.methods.agent.session.prompt, { sessionId: ok.sessionId, prompt: [{ type: "text", text: "x" }] })).rejects.toMatchObject({ code: -32002 });
    const before = env.client.notifications.length;
    await env.agent.request(acp.methods.agent.session.load, { sessionId: ok.sessionId, cwd: dir.path, mcpServers: [] });
    expect(env.client.notifications.slice(before).some((n) => n.update.sessionUpdate === "user_message_chunk")).toBe(true);
  });
  // AcpClient's side (aborting newSession's signal sends $/cancel_request): test/acp/client/protocols.e2e.test.ts, over v1 and v2.
});
