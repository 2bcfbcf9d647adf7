import { afterEach, describe, expect, it } from "vitest";
import { Analyzer, PageServer } from "../../src/inspect/index.js";

let server: PageServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const start = async (token?: string): Promise<PageServer> =>
  (server = await PageServer.start({ analyzer: new Analyzer(), status: { mode: "view", agent: "a", state: "ended" }, ...(token ? { token } : {}) }));

describe("the inspect page server", () => {
  it("closedByUser: resolves once an open page was closed (not before a page was open)", async () => {
    const s = await start();
    let closed = false;
    const done = s.closedByUser(20).then(() => (closed = true));
    const abort = new AbortController();
    const res = await fetch(new URL(`/events?t=${s.token}`, s.url), { signal: abort.signal });
    const reader = res.body!.getReader();
    await reader.read(); // the hello event: the page is open
    expect(closed).toBe(false);
    abort.abort();
    await done;
    expect(closed).toBe(true);
  });

  it("keeps a token it is given (a page handed over keeps its URL); refuses a short one", async () => {
    const s = await start("a-token-of-twenty-chars");
    expect(s.url).toMatch(/\?t=a-token-of-twenty-chars$/);
    expect((await fetch(new URL("/api/state?t=a-token-of-twenty-chars", s.url))).status).toBe(200);
    await expect(start("short")).rejects.toThrow(/16 or more/);
    server = s;
  });
});
