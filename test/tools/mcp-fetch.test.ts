import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpToolSource } from "../../src/tools/index.js";
import { addressGuardedFetch, publicOnlyFetch } from "../../src/tools/mcp-fetch.js";
import { isNonPublicAddress, silentLogger } from "../../src/core/index.js";
import { startMcpFixtureHttpServer, type McpFixtureHttpServer } from "../../src/testing/index.js";

// The fetch under client-named MCP URLs on `serve --listen`: each connection's address is checked
// and pinned. Loopback servers stand in for internal ones (refused), and, with a check that lets
// loopback through, for public ones (the MCP SDK's transports work over it).

let fixture: McpFixtureHttpServer;
beforeAll(async () => {
  fixture = await startMcpFixtureHttpServer();
});
afterAll(() => fixture.close());

describe("isNonPublicAddress", () => {
  it("loopback, RFC 1918, CGNAT, link-local, ULA, unspecified, multicast and IPv4 inside IPv6 are non-public; public addresses are not", () => {
    for (const a of ["127.0.0.1", "10.1.2.3", "172.31.0.1", "192.168.1.1", "100.64.0.1", "169.254.169.254", "0.0.0.0", "224.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fd00::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:7f00:1", "64:ff9b::a00:1", "2002:c0a8:101::1"]) {
      expect(isNonPublicAddress(a), a).toBe(true);
    }
    for (const a of ["1.1.1.1", "8.8.8.8", "100.128.0.1", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "not-an-address"]) expect(isNonPublicAddress(a), a).toBe(false);
  });
});

describe("publicOnlyFetch / addressGuardedFetch", () => {
  it("a loopback server is never reached, by literal address or by a name resolving to it; the error says why", async () => {
    let requests = 0;
    const server = createServer((_req, res) => {
      requests += 1;
      res.end("internal");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    try {
      for (const url of [`http://127.0.0.1:${port}/`, `http://localhost:${port}/`, `http://[::ffff:127.0.0.1]:${port}/`]) {
        await expect(publicOnlyFetch(url), url).rejects.toMatchObject({ cause: { code: "EADDRNOTPUBLIC" } });
      }
      expect(requests).toBe(0);
      // Through McpToolSource (publicOnly) the failure is our reason, not the server's words.
      const source = await McpToolSource.connect([{ name: "internal", transport: "http", url: `http://localhost:${port}/mcp`, publicOnly: true }], { logger: silentLogger, startupTimeoutMs: 10_000 });
      expect(source.failures[0]?.reason).toContain("its address is not public");
      await source.close();
      expect(requests).toBe(0);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("where the check lets the address through, the MCP SDK's Streamable HTTP and SSE transports work over it (requests, bodies, streams, statuses)", async () => {
    const fetch = addressGuardedFetch(() => false);
    for (const transport of [new StreamableHTTPClientTransport(new URL(fixture.url), { fetch }), new SSEClientTransport(new URL(fixture.sseUrl), { fetch })]) {
      const client = new Client({ name: "t", version: "1" });
      await client.connect(transport);
      const { tools } = await client.listTools();
      expect(tools.length).toBeGreaterThan(0);
      await client.close();
    }
    const missing = await fetch(fixture.url.replace("/mcp", "/nothing-here"), { method: "POST", body: "{}", headers: { "Content-Type": "application/json" } });
    expect(missing.status).toBe(404);
  });
});
