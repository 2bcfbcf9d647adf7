import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, silentLogger } from "../../src/core/index.js";
import { McpToolSource, ToolRegistry, mcpToolName } from "../../src/tools/index.js";
import type { McpServerConfig, Tool } from "../../src/tools/index.js";
import { mcpFixtureStdioCommand, startMcpFixtureHttpServer } from "../../src/testing/index.js";
import type { McpFixtureHttpServer } from "../../src/testing/index.js";
import { childPidsMatching, isAlive, makeContext, waitFor } from "./support.js";

const opened: McpToolSource[] = [];
async function connect(servers: McpServerConfig[], startupTimeoutMs = 15_000): Promise<McpToolSource> {
  const source = await McpToolSource.connect(servers, { startupTimeoutMs, logger: silentLogger });
  opened.push(source);
  return source;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

function stdio(name: string, options: Parameters<typeof mcpFixtureStdioCommand>[0] = {}): McpServerConfig {
  return { name, transport: "stdio", ...mcpFixtureStdioCommand(options) };
}
function find(source: McpToolSource, name: string): Tool {
  const tool = source.tools.find((t) => t.name === name);
  if (tool === undefined) throw new Error(`no tool ${name} in ${source.tools.map((t) => t.name).join(", ")}`);
  return tool;
}
async function call(source: McpToolSource, name: string, input: unknown, ctx = makeContext(process.cwd())) {
  const tool = find(source, name);
  return tool.execute(tool.parse(input), ctx);
}
async function status(source: McpToolSource, server: string): Promise<{ pid: number; cancelledCalls: number; childPids: number[] }> {
  return JSON.parse((await call(source, `${server}__status`, {})).text) as { pid: number; cancelledCalls: number; childPids: number[] };
}

describe("McpToolSource over stdio", () => {
  it("lists the server's tools, namespaced, and calls them end to end", async () => {
    const source = await connect([stdio("fixture")]);
    expect(source.failures).toEqual([]);
    expect(source.servers).toEqual(["fixture"]);
    expect(source.tools.map((t) => t.name).sort()).toEqual(["fixture__add", "fixture__echo", "fixture__fail", "fixture__slow", "fixture__status"]);

    const echo = find(source, "fixture__echo");
    expect(echo.kind).toBe("other");
    expect(echo.description).toBe("Echo the text back");
    expect(echo.inputSchema).toMatchObject({ type: "object", properties: { text: { type: "string" } }, required: ["text"] });
    const input = echo.parse({ text: "hi" });
    const c = { cwd: "/ws", roots: ["/ws"] };
    expect(echo.target(input, c)).toEqual({ paths: [], server: "fixture" });
    expect(echo.title(input, c)).toBe("fixture: echo");
    expect(() => echo.parse("not an object")).toThrow(/expected a JSON object/);

    expect(await call(source, "fixture__echo", { text: "hello mcp" })).toMatchObject({ text: "hello mcp", isError: false });
    const added = await call(source, "fixture__add", { a: 2, b: 3 });
    expect(added).toMatchObject({ text: "5", isError: false, data: { server: "fixture", tool: "add", structuredContent: { sum: 5 } } });
    expect(await call(source, "fixture__fail", {})).toMatchObject({ text: "fixture failure on purpose", isError: true });
    const invalid = await call(source, "fixture__add", { a: "two" });
    expect(invalid.isError).toBe(true);
  });

  it("passes cancellation to the server and reports the call as cancelled", async () => {
    const source = await connect([stdio("fixture")]);
    const ctx = makeContext(process.cwd());
    const started = new Promise<void>((resolve) => {
      ctx.progress = (p) => {
        if (p.message === "started") resolve();
      };
    });
    const running = call(source, "fixture__slow", { ms: 60_000 }, ctx);
    await started;
    const cancelledAt = performance.now();
    ctx.controller.abort();
    const result = await running;
    expect(performance.now() - cancelledAt).toBeLessThan(200);
    expect(result).toMatchObject({ isError: true, text: "fixture__slow was cancelled" });
    await waitFor(async () => (await status(source, "fixture")).cancelledCalls === 1, "the server to see the cancellation");
  });

  it("close() ends the server and the processes it started", async () => {
    const source = await connect([stdio("parent", { spawnChild: true })]);
    const { pid, childPids } = await status(source, "parent");
    expect(childPids).toHaveLength(1);
    const all = [pid, ...childPids];
    expect(all.every(isAlive)).toBe(true);
    await source.close();
    await waitFor(() => all.every((p) => !isAlive(p)), `pids ${all.join(", ")} to end`);
    const afterClose = await call(source, "parent__echo", { text: "x" });
    expect(afterClose.isError).toBe(true);
  });
});

describe("McpToolSource over HTTP", () => {
  let http: McpFixtureHttpServer;
  beforeAll(async () => {
    http = await startMcpFixtureHttpServer();
  });
  afterAll(async () => {
    await http.close();
  });

  it("calls tools over Streamable HTTP and ends the session on close", async () => {
    const source = await connect([{ name: "remote", transport: "http", url: http.url, headers: { "x-test": "1" } }]);
    expect(source.failures).toEqual([]);
    expect(await call(source, "remote__echo", { text: "over http" })).toMatchObject({ text: "over http", isError: false });
    expect(http.sessionCount()).toBe(1);
    await source.close();
    await waitFor(() => http.sessionCount() === 0, "the HTTP session to end");
  });

  it("calls tools over SSE", async () => {
    const source = await connect([{ name: "legacy", transport: "sse", url: http.sseUrl }]);
    expect(source.failures).toEqual([]);
    expect(await call(source, "legacy__add", { a: 20, b: 22 })).toMatchObject({ text: "42", isError: false });
  });
});

describe("start-up failures", () => {
  it("skips failing and hanging servers; the others still work", async () => {
    const source = await connect([
      stdio("good"),
      stdio("failing", { fail: true }),
      { ...stdio("hanging", { hang: true }), startupTimeoutMs: 1_500 },
      { name: "missing", transport: "stdio", command: "/nonexistent/mcp-server" },
      { name: "refused", transport: "http", url: "http://127.0.0.1:1/mcp" },
    ]);
    expect(source.servers).toEqual(["good"]);
    expect(await call(source, "good__echo", { text: "still works" })).toMatchObject({ text: "still works" });
    const reasons = Object.fromEntries(source.failures.map((f) => [f.server, f.reason]));
    expect(Object.keys(reasons).sort()).toEqual(["failing", "hanging", "missing", "refused"]);
    expect(reasons.failing).toMatch(/fixture failed on purpose/);
    expect(reasons.hanging).toMatch(/did not start within 1500 ms/);
    expect(reasons.missing).toMatch(/ENOENT/);
    expect(reasons.refused).toMatch(/http: http:\/\/127\.0\.0\.1:1\/mcp/);
    // The hanging server never exits by itself: it is gone only because it was ended.
    await waitFor(() => childPidsMatching("mcp-fixture-stdio.js --hang").length === 0, "the hanging server to be ended");
  });

  it("gives up on a hanging server at the start-up bound", async () => {
    const started = performance.now();
    const source = await connect([stdio("hanging", { hang: true })], 1_000);
    const elapsed = performance.now() - started;
    expect(source.failures.map((f) => f.server)).toEqual(["hanging"]);
    expect(elapsed).toBeGreaterThanOrEqual(990);
    expect(elapsed).toBeLessThan(1_000 + 3_000);
    await waitFor(() => childPidsMatching("mcp-fixture-stdio.js --hang").length === 0, "the hanging server to be ended");
  });

  it("refuses duplicate server names, also after sanitizing", async () => {
    await expect(McpToolSource.connect([stdio("a"), stdio("a")], { logger: silentLogger })).rejects.toThrow(ConfigError);
    await expect(McpToolSource.connect([stdio("a"), stdio("a")], { logger: silentLogger })).rejects.toThrow(/two MCP servers are named "a"/);
    await expect(McpToolSource.connect([stdio("my server"), stdio("my_server")], { logger: silentLogger })).rejects.toThrow(/share the tool prefix "my_server__"/);
  });
});

describe("tool names", () => {
  it("are sanitized to [a-zA-Z0-9_-], at most 64 characters, and unique", () => {
    expect(mcpToolName("my server.v2", "do/thing", new Set())).toBe("my_server_v2__do_thing");
    const long = mcpToolName("s".repeat(40), "t".repeat(40), new Set());
    expect(long).toHaveLength(64);
    expect(long).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    const second = mcpToolName("s".repeat(40), "t".repeat(40), new Set([long]));
    expect(second).not.toBe(long);
    expect(second).toHaveLength(64);
    expect(second.endsWith("_2")).toBe(true);
  });

  it("sanitized server names and tools fit a ToolRegistry next to the built-ins", async () => {
    const source = await connect([stdio("my server.v2")]);
    const registry = new ToolRegistry().with(source.tools);
    expect(registry.has("my_server_v2__echo")).toBe(true);
    expect(registry.specs().every((s) => /^[a-zA-Z0-9_-]{1,64}$/.test(s.name))).toBe(true);
  });
});
