import { describe, expect, it } from "vitest";
import { AuthenticationRequiredError, CapabilityError, type AcpSessionEvent } from "../../../src/acp/client/index.js";
import { AcpClient, ClientPermissionPolicy } from "../../../src/acp/client/index.js";
import { expectGroupGone, fixtureConfig, startClient, tempDir } from "./helpers.js";

describe("session lifecycle over stdio", () => {
  it("AcpClient.startSession ties the session to its agent; withSession ends the agent when done", async () => {
    const session = await AcpClient.startSession(fixtureConfig());
    expect((await session.prompt("hello")).text).toBe("Hello, world");
    let pid: number | undefined;
    const text = await AcpClient.withSession(fixtureConfig(), ClientPermissionPolicy.denyAll(), async (s, client) => {
      pid = client.pid;
      return (await s.prompt("hello")).text;
    });
    expect(text).toBe("Hello, world");
    await expectGroupGone(pid!);
    await session.close();
  });

  it("new → prompt → list → close → load (replay) → resume → delete", async () => {
    const client = await startClient();
    expect(client.agentInfo).toMatchObject({ name: "fixture-agent" });
    const session = await client.newSession();
    expect(session.modes?.currentModeId).toBe("ask");
    await session.prompt("hello");

    const listed = await client.listSessions();
    expect(listed.sessions.map((s) => s.sessionId)).toContain(session.sessionId);
    const elsewhere = await client.listSessions({ cwd: "/nowhere" });
    expect(elsewhere.sessions).toEqual([]);

    await session.close();
    expect(client.sessions).toEqual([]);

    const replay: AcpSessionEvent[] = [];
    const loaded = await client.loadSession(session.sessionId, { onEvent: (e) => replay.push(e) });
    expect(replay.map((e) => e.type)).toEqual(["user_message_chunk", "thought_chunk", "message_chunk", "message_chunk", "message_chunk", "usage"]);
    expect(replay[0]).toMatchObject({ type: "user_message_chunk", text: "hello" });
    expect((await loaded.prompt("hello")).text).toBe("Hello, world");
    await loaded.close();

    const resumed = await client.resumeSession(session.sessionId);
    const events: AcpSessionEvent[] = [];
    resumed.onEvent((e) => events.push(e));
    expect((await resumed.prompt("refuse")).stopReason).toBe("refusal");
    expect(events.some((e) => e.type === "message_chunk")).toBe(false); // resume does not replay

    await client.deleteSession(session.sessionId);
    expect((await client.listSessions()).sessions.map((s) => s.sessionId)).not.toContain(session.sessionId);
    await expect(client.loadSession(session.sessionId)).rejects.toMatchObject({ code: -32002 });
  });

  it("set_mode and set_config_option (select and boolean), with the agent's updates applied", async () => {
    const client = await startClient();
    const session = await client.newSession();
    const modeEvent = new Promise<AcpSessionEvent>((resolve) => session.onEvent((e) => e.type === "mode_changed" && resolve(e)));
    await session.setMode("code");
    expect(await modeEvent).toEqual({ type: "mode_changed", modeId: "code" });
    expect(session.modes?.currentModeId).toBe("code");
    await expect(session.setMode("nope")).rejects.toThrow(/unknown mode/);

    const options = await session.setConfigOption("model", "large");
    expect(options.find((o) => o.id === "model")).toMatchObject({ currentValue: "large" });
    const flags = await session.setConfigOption("fast", true);
    expect(flags.find((o) => o.id === "fast")).toMatchObject({ type: "boolean", currentValue: true });
    await expect(session.setConfigOption("missing", "x")).rejects.toThrow(/unknown config option/);
  });

  it("throws CapabilityError naming the capability for everything the agent did not advertise", async () => {
    const client = await startClient(["--minimal"]);
    const cases: [Promise<unknown>, string][] = [
      [client.loadSession("x"), "loadSession"],
      [client.resumeSession("x"), "sessionCapabilities.resume"],
      [client.listSessions(), "sessionCapabilities.list"],
      [client.closeSession("x"), "sessionCapabilities.close"],
      [client.deleteSession("x"), "sessionCapabilities.delete"],
      [client.logout(), "auth.logout"],
      [client.newSession({ additionalDirectories: ["/tmp"] }), "sessionCapabilities.additionalDirectories"],
    ];
    for (const [call, capability] of cases) {
      const error = await call.then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(CapabilityError);
      expect(error).toMatchObject({ capability });
      expect((error as Error).message).toContain(capability);
    }
    const session = await client.newSession();
    await expect(session.prompt([{ type: "image", data: "AAAA", mimeType: "image/png" }])).rejects.toMatchObject({ capability: "promptCapabilities.image" });
    await expect(session.prompt([{ type: "resource", resource: { uri: "file:///a", text: "a" } }])).rejects.toMatchObject({ capability: "promptCapabilities.embeddedContext" });
    // A session without a session/close capability still closes locally.
    await session.close();
  });

  it("validates MCP servers against mcpCapabilities before sending session/new", async () => {
    const client = await startClient();
    const sse = { type: "sse" as const, name: "events", url: "http://127.0.0.1:9/sse", headers: [] };
    await expect(client.newSession({ mcpServers: [sse] })).rejects.toMatchObject({ name: "CapabilityError", capability: "mcpCapabilities.sse" });
    const http = { type: "http" as const, name: "tracker", url: "http://127.0.0.1:9/mcp", headers: [] };
    const stdio = { name: "files", command: "node", args: ["server.js"], env: [] };
    const session = await client.newSession({ mcpServers: [http, stdio] });
    expect((await session.prompt("mcp")).text).toBe("mcp: tracker,files");
    const minimal = await startClient(["--minimal"]);
    await expect(minimal.newSession({ mcpServers: [http] })).rejects.toMatchObject({ capability: "mcpCapabilities.http" });
  });

  it("authenticates with a configured method; without one, session/new says which methods exist", async () => {
    const unauthenticated = await startClient(["--auth"]);
    const error = await unauthenticated.newSession().then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationRequiredError);
    expect((error as Error).message).toContain('"token" (Token)');
    await unauthenticated.authenticate("token");
    expect(await unauthenticated.newSession()).toBeTruthy();

    const configured = await startClient(["--auth"], undefined, { authMethodId: "token" });
    expect((await (await configured.newSession()).prompt("hello")).text).toBe("Hello, world");
    await expect(startClient(["--auth"], undefined, { authMethodId: "password" })).rejects.toBeInstanceOf(AuthenticationRequiredError);
  });

  it("passes additional directories when advertised", async () => {
    const dir = tempDir();
    const client = await startClient();
    const session = await client.newSession({ additionalDirectories: [dir] });
    expect(session.info).toEqual({ sessionId: session.sessionId, cwd: client.config.cwd, additionalDirectories: [dir] });
  });
});
