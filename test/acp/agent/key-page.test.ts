import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { openKeyPage } from "../../../src/acp/agent/key-page.js";

/** A raw request (fetch cannot set Host). */
function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: string; path?: string } = {}): Promise<number> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: options.path ?? u.pathname, method: options.method ?? "GET", headers: options.headers }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

const form = { "content-type": "application/x-www-form-urlencoded" };

describe("the key page (loopback, one-shot)", () => {
  it("answers only its own path and Host, refuses foreign origins, empty and oversized keys, then takes one key and closes", async () => {
    const page = await openKeyPage({ label: "X_KEY for demo", lifetimeMs: 60_000 });
    try {
      const u = new URL(page.url);
      expect(u.hostname).toBe("127.0.0.1");
      // The token with its last character changed (to one it is not: tokens are random).
      const otherLast = u.pathname.endsWith("x") ? "y" : "x";
      expect(await send(page.url, { path: `${u.pathname.slice(0, -1)}${otherLast}` })).toBe(404);
      expect(await send(page.url, { path: "/key/" })).toBe(404);
      expect(await send(page.url, { headers: { host: `evil.test:${u.port}` } })).toBe(404); // DNS rebinding
      expect(await send(page.url)).toBe(200);
      expect(await send(page.url, { method: "PUT" })).toBe(405);
      expect(await send(page.url, { method: "POST", headers: { ...form, origin: "http://evil.test" }, body: "key=stolen" })).toBe(403);
      expect(await send(page.url, { method: "POST", headers: form, body: "key=%20" })).toBe(400);
      expect(await send(page.url, { method: "POST", headers: form, body: `key=${"a".repeat(20_000)}` })).toBe(400);
      expect(await send(page.url, { method: "POST", headers: { ...form, origin: u.origin }, body: "key=%20sk-1%20" })).toBe(200);
      expect(await page.outcome).toEqual({ kind: "secret", secret: "sk-1" });
      await expect(send(page.url)).rejects.toThrow();
    } finally {
      await page.close();
    }
  });

  it("expires after its lifetime; close() before that ends it as closed", async () => {
    const short = await openKeyPage({ label: "k", lifetimeMs: 50 });
    expect(await short.outcome).toEqual({ kind: "expired" });
    await expect(send(short.url)).rejects.toThrow();
    const closed = await openKeyPage({ label: "k", lifetimeMs: 60_000 });
    await closed.close();
    expect(await closed.outcome).toEqual({ kind: "closed" });
  });
});
