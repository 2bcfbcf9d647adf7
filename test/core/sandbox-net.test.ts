import { describe, expect, it } from "vitest";
import { bubblewrapArgs, decideDestination, formatNetAllow, listeningPorts, parseNetAllow, proxyEnvironment, sandboxProxySocket } from "../../src/core/index.js";
import { createServer } from "node:net";

describe("--sandbox-net allow-list parsing", () => {
  it("hosts, ports, wildcards, IPv6; repeatable; empty = nothing", () => {
    expect(parseNetAllow(["allow=registry.npmjs.org:443,*.GitHub.com", "allow=[::1]:8080,10.0.0.5", "allow="])).toEqual([
      { host: "registry.npmjs.org", port: 443 },
      { host: "*.github.com" },
      { host: "::1", port: 8080 },
      { host: "10.0.0.5" },
    ]);
    expect(parseNetAllow(["allow=::1"]).map(formatNetAllow)).toEqual(["[::1]"]);
  });

  it.each(["registry.npmjs.org", "deny=x.org", "allow=x.org:0", "allow=x.org:70000", "allow=http://x.org", "allow=*.10.0.0.1", "allow=a b"])("%s → an error naming the form", (value) => {
    expect(() => parseNetAllow([value])).toThrow(/--sandbox-net/);
  });
});

describe("which destinations the proxy connects", () => {
  const allow = parseNetAllow(["allow=registry.example:443,*.cdn.example,127.0.0.1:4873,localhost:5000,rebind.example"]);
  const resolve = async (host: string): Promise<string[]> => ({ "registry.example": ["93.184.216.34"], "a.cdn.example": ["93.184.216.35"], "evil.cdn.example": ["127.0.0.1"], "rebind.example": ["10.1.2.3"], localhost: ["127.0.0.1"] })[host] ?? [];
  const none = () => new Set<number>();
  const decide = (host: string, port: number, own = none) => decideDestination(allow, host, port, { resolve, ownPorts: own });

  it("allows named hosts on their ports, sub-domains of a wildcard, named loopback addresses", async () => {
    expect(await decide("Registry.Example.", 443)).toEqual({ ok: true, address: "93.184.216.34" });
    expect(await decide("a.cdn.example", 8443)).toEqual({ ok: true, address: "93.184.216.35" });
    expect(await decide("127.0.0.1", 4873)).toEqual({ ok: true, address: "127.0.0.1" });
    expect(await decide("localhost", 5000)).toEqual({ ok: true, address: "127.0.0.1" });
  });

  it("refuses what is not named: another port, the wildcard's own domain, another host", async () => {
    for (const [host, port] of [["registry.example", 80], ["cdn.example", 443], ["other.example", 443], ["127.0.0.1", 4874]] as const) {
      expect(await decide(host, port)).toEqual({ ok: false, reason: "not in the --sandbox-net allow-list" });
    }
  });

  it("a name that resolves to a private or loopback address is refused unless that address is named (DNS rebinding, wildcards)", async () => {
    expect(await decide("evil.cdn.example", 443)).toMatchObject({ ok: false, reason: expect.stringContaining("resolves to 127.0.0.1, a loopback or private address") });
    expect(await decide("rebind.example", 443)).toMatchObject({ ok: false, reason: expect.stringContaining("10.1.2.3") });
  });

  it("this process's own listeners are never reachable, even when named", async () => {
    expect(await decide("127.0.0.1", 4873, () => new Set([4873]))).toMatchObject({ ok: false, reason: expect.stringContaining("own listener") });
    expect(await decide("localhost", 5000, () => new Set([5000]))).toMatchObject({ ok: false });
  });

  it("a name that does not resolve is refused", async () => {
    expect(await decideDestination(parseNetAllow(["allow=nowhere.example"]), "nowhere.example", 443, { resolve, ownPorts: none })).toEqual({ ok: false, reason: "nowhere.example does not resolve" });
  });

  it("listeningPorts finds this process's listening sockets in /proc", async () => {
    const server = createServer();
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    const port = (server.address() as { port: number }).port;
    expect(listeningPorts().has(port)).toBe(true);
    await new Promise((done) => server.close(done));
    expect(listeningPorts().has(port)).toBe(false);
  });
});

describe("the sandbox side of the proxy", () => {
  it("binds the proxy's socket read-only at a fixed path and points HTTP clients at the bridge", () => {
    const env = proxyEnvironment(parseNetAllow(["allow=registry.example"]));
    const args = bubblewrapArgs({ writable: ["/w"], cwd: "/w", tmpBytes: 1, proxy: { socket: "/tmp/agentkit-net-x/net.sock", env } });
    expect(args.join(" ")).toContain(`--ro-bind /tmp/agentkit-net-x/net.sock ${sandboxProxySocket}`);
    expect(args).not.toContain("--share-net");
    expect(args.join(" ")).toContain("--setenv HTTPS_PROXY http://127.0.0.1:3128");
    expect(env.NO_PROXY).toBe("localhost,127.0.0.1,::1");
  });

  it("loopback named in the allow-list goes through the proxy (no NO_PROXY for it)", () => {
    expect(proxyEnvironment(parseNetAllow(["allow=127.0.0.1:4873"])).NO_PROXY).toBe("");
  });
});
