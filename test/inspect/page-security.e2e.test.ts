import { writeFileSync, statSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fixtureAgent, InspectProcess, tempDir } from "./support.js";

/** One request with exactly these headers (fetch may not set Host). */
function send(url: URL, method: string, path: string, headers: Record<string, string>, body = ""): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => (text += c.toString("utf8")));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("the inspect page against other users and other web sites", () => {
  it("drive actions need the header token from the page's own origin and host; the trace is the user's only", async () => {
    const trace = join(tempDir(), "t.jsonl");
    writeFileSync(trace, "an older file, readable by all\n", { mode: 0o644 });
    const p = new InspectProcess(["--agent", `${process.execPath} ${fixtureAgent}`, "--cwd", tempDir("inspect-ws-"), "--trace", trace]);
    try {
      const url = new URL(await p.url);
      const token = url.searchParams.get("t") ?? "";
      await p.waitState((s) => s.status.state === "running");
      expect(statSync(trace).mode & 0o777).toBe(0o600);

      const own = { host: url.host, origin: `http://${url.host}`, "content-type": "application/json" };
      const newSession = (headers: Record<string, string>, query = ""): Promise<{ status: number; text: string }> => send(url, "POST", `/api/new${query}`, headers, "{}");
      // A cross-site form or fetch from a page that saw the URL: the token in the query is not enough.
      expect((await newSession({ ...own, origin: "http://evil.example" }, `?t=${token}`)).status).toBe(403);
      expect((await newSession({ host: url.host, "content-type": "application/x-www-form-urlencoded" }, `?t=${token}`)).status).toBe(403);
      // The token in the header, but sent by another page, or to a rebound name.
      expect((await newSession({ ...own, origin: "http://evil.example", "x-inspect-token": token })).status).toBe(403);
      expect((await newSession({ ...own, host: `evil.example:${url.port}`, origin: `http://evil.example:${url.port}`, "x-inspect-token": token })).status).toBe(403);
      expect((await newSession({ ...own, host: "127.0.0.1:1", origin: "http://127.0.0.1:1", "x-inspect-token": token })).status).toBe(403);
      // Reading through a rebound name is refused too (the token in the URL may have leaked to that site).
      expect((await send(url, "GET", `/api/state?t=${token}`, { host: `evil.example:${url.port}` })).status).toBe(403);
      expect((await send(url, "GET", `/api/state?t=${token}`, { host: `localhost:${url.port}` })).status).toBe(200);
      const state = await p.state();
      expect(state.entries.filter((e) => e.method === "session/new")).toEqual([]);

      // What the page itself sends.
      const ok = await newSession({ ...own, "x-inspect-token": token });
      expect(ok.status, ok.text).toBe(200);
      expect(JSON.parse(ok.text)).toMatchObject({ ok: true, result: { sessionId: expect.any(String) } });
      expect((await send(url, "POST", "/api/new", { host: url.host, "x-inspect-token": token }, "{}")).status).toBe(200); // no Origin: not a browser
    } finally {
      expect(await p.stop()).toBe(0);
    }
  });
});
