import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { context, propagation, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import { chromium, type Browser, type Page } from "playwright-core";
import { SyncContextManager } from "../../src/core/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bin, chromiumArgs, chromiumPath, editScript, fixtureAgent, haveChromium, InspectProcess, startEditor, tempDir } from "./support.js";

// Chromium is an OS package (.ci/run installs it); without it these tests are skipped, saying why.
if (!haveChromium) process.stderr.write(`[inspect browser tests] skipped: ${chromiumPath} not found (apt-get install chromium)\n`);

/** INSPECT_SCREENSHOTS=DIR saves each view (docs/inspect.md's images come from here). */
const shots = process.env.INSPECT_SCREENSHOTS;
async function shot(page: Page, name: string): Promise<void> {
  if (!shots) return;
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: join(shots, `${name}.png`) });
}

const T = 20_000;

describe.skipIf(!haveChromium)("inspect page in Chromium", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, timeout: 30_000 });
  });
  afterAll(async () => {
    await browser?.close();
    // No request of a page failed with an HTTP error (a closed page's reconnects fail otherwise: not counted).
    expect(consoleErrors.filter((e) => /status of [45]\d\d/.test(e))).toEqual([]);
  });

  /** Errors the pages logged in their consoles (a failed request shows here, e.g. a 403 favicon). */
  const consoleErrors: string[] = [];
  async function open(url: string, width = 1366, height = 800): Promise<Page> {
    const page = await browser.newPage({ viewport: { width, height } });
    page.on("console", (m) => void (m.type() === "error" && consoleErrors.push(`${page.url()}: ${m.text()}`)));
    // No external network: every request must go to the inspector itself.
    const origin = new URL(url).origin;
    page.on("request", (r) => {
      if (!r.url().startsWith(origin)) throw new Error(`external request: ${r.url()}`);
    });
    await page.goto(url);
    return page;
  }

  /**
   * The Timing view's span timeline of serve's edit turn: the spans nested by parent (the served
   * session/prompt → invoke_agent → chat / execute_tool → the permission request), each bar
   * within its parent's, all in the editor's trace.
   */
  async function checkTimeline(page: Page, traceId: string): Promise<void> {
    const spans = page.locator(".turn-spans .spans").first();
    await spans.locator(".span-row.op-permission").waitFor({ timeout: T });
    expect((await spans.getAttribute("data-traces"))?.split(" ")).toContain(traceId);
    const rows = await spans.locator(".span-row").evaluateAll((els) =>
      els.map((el) => {
        const name = el.querySelector(".span-name")!;
        const bar = el.querySelector(".span-bar")!.getBoundingClientRect();
        // The nesting is a CSS custom property (the page sets it through the CSSOM).
        const depth = Number(/--depth:\s*(\d+)/.exec(name.getAttribute("style") ?? "")?.[1]);
        const track = el.querySelector(".span-track")!.getBoundingClientRect().width;
        return { op: [...el.classList].find((c) => c.startsWith("op-")), name: name.textContent, depth, left: bar.left, right: bar.right, track };
      }),
    );
    const row = (op: string, name?: string) => rows.find((r) => r.op === op && (name === undefined || r.name === name))!;
    const served = row("op-rpc", "session/prompt");
    const turn = row("op-invoke_agent");
    const tool = row("op-execute_tool");
    const permission = row("op-permission");
    expect(rows.filter((r) => r.op === "op-chat")).toHaveLength(2);
    expect([served.depth, turn.depth, tool.depth, permission.depth]).toEqual([0, 1, 2, 3]);
    expect(rows.filter((r) => r.op === "op-chat").every((r) => r.depth === 2)).toBe(true);
    // Span start times are whole milliseconds (the SDK's Date.now()): within 1 ms, or 2 % of the
    // track where that is more (a fast turn is a few dozen ms: 2 % of it is less than 1 ms).
    const total = /· ([\d.]+) (ms|s) ·/.exec((await spans.locator(".spans-head").textContent()) ?? "");
    const totalMs = total ? Number(total[1]) * (total[2] === "s" ? 1000 : 1) : Number.NaN;
    const slack = Math.max(served.track * 0.02, totalMs > 0 ? served.track / totalMs : 0);
    const inside = (child: { left: number; right: number }, parent: { left: number; right: number }): boolean => child.left >= parent.left - slack && child.right <= parent.right + slack;
    expect(inside(turn, served) && inside(tool, turn) && inside(permission, tool), JSON.stringify({ totalMs, slack, served, turn, tool, permission })).toBe(true);
    expect(tool.right - tool.left).toBeGreaterThan(0);
  }

  it("tap in front of serve: the streamed reply, the tool call with its diff, the permission answer", async () => {
    const dir = tempDir();
    const ws = tempDir("inspect-ws-");
    writeFileSync(join(ws, "a.txt"), "hello\n");
    const scriptPath = join(dir, "script.json");
    writeFileSync(scriptPath, JSON.stringify(editScript));
    const apiKey = "sk-proj-0123456789abcdefghij";
    let traceId = "";
    const { client, url } = await startEditor({
      command: process.execPath,
      args: [bin, "inspect", "--trace", join(dir, "t.jsonl"), "--", process.execPath, bin, "serve", "--model", `scripted:${scriptPath}`],
      cwd: ws,
    });
    try {
      const page = await open(await url);
      await page.locator("#state", { hasText: "running" }).waitFor({ timeout: T });
      // What the browser asks for by itself on each load, without the token: no 403 (it logged an error per load).
      expect(await page.evaluate(() => fetch("/favicon.ico").then((r) => r.status))).toBe(204);
      const session = await client.newSession();
      // The editor traces (in this process): its session/prompt carries _meta.traceparent.
      context.setGlobalContextManager(new SyncContextManager());
      propagation.setGlobalPropagator(new W3CTraceContextPropagator());
      trace.setGlobalTracerProvider(new BasicTracerProvider());
      try {
        await session.prompt(`edit a.txt, the key is ${apiKey}`);
      } finally {
        trace.disable();
        propagation.disable();
        context.disable();
      }
      await page.locator(".msg.agent", { hasText: "Done: the file now says hello world." }).waitFor({ timeout: T });
      // A secret in the prompt: redacted on the page and in the saved trace (the wire is left as it is).
      expect(await page.locator(".msg.user", { hasText: "edit a.txt" }).textContent()).toContain("the key is [redacted]");
      expect(await page.content()).not.toContain(apiKey);
      expect(readFileSync(join(dir, "t.jsonl"), "utf8")).not.toContain(apiKey);
      const tool = page.locator(".tool", { hasText: "a.txt" });
      await expect(tool.locator(".badge").textContent()).resolves.toBe("completed");
      await expect(tool.locator(".d-removed").textContent()).resolves.toContain("- hello");
      await expect(tool.locator(".d-added").textContent()).resolves.toContain("+ hello world");
      await expect(page.locator(".permission .answer").textContent()).resolves.toMatch(/answered: allow_once/);
      await expect(page.locator(".permission .chosen").textContent()).resolves.toMatch(/allow_once/);
      await shot(page, "tap-conversation");
      // Next to the turn's end, a link to its span timeline (once the agent's spans are in).
      await page.locator(".stop .to-timeline").click({ timeout: T });
      await page.locator("#timing tr.turn-spans .span-row.op-invoke_agent").waitFor({ timeout: T });
      await page.keyboard.press("1");
      // Raw list: a row per message; the prompt's answer is paired with its request.
      await page.locator(".row", { hasText: "↩ session/prompt" }).click();
      await page.locator(".detail .pair", { hasText: "request #" }).waitFor();
      await page.keyboard.press("p"); // jump to the pair
      await page.locator(".detail .pair", { hasText: "answer #" }).waitFor();
      // The request's trace id, as its _meta.traceparent says.
      const traceparent = String(JSON.parse((await page.locator(".detail pre.json").textContent()) ?? "{}").params?._meta?.traceparent);
      expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      traceId = traceparent.split("-")[1]!;
      expect(await page.locator(".detail .d-trace .trace-id").textContent()).toBe(traceId);
      await shot(page, "tap-messages");
      // The agent exported its spans to the inspector's OTLP receiver: the turn's timeline, in the editor's trace.
      await page.locator(".detail .d-trace .to-timeline").click({ timeout: T });
      await page.locator("table.timing tbody tr").first().waitFor();
      expect(await page.locator("table.timing tbody tr td").nth(7).textContent()).toBe("end_turn");
      await checkTimeline(page, traceId);
      await shot(page, "timing");
      // The permission question's span links to the message it sent.
      await page.locator(".span-row.op-permission .span-msg").click();
      await page.locator(".detail .d-head", { hasText: "session/request_permission" }).waitFor({ timeout: T });
      const saved = readFileSync(join(dir, "t.jsonl"), "utf8").split("\n").filter((l) => l.includes('"spans"'));
      expect(saved.join("\n")).toContain("invoke_agent");
      const narrow = await open(await url, 420, 820);
      await narrow.locator(".msg.agent", { hasText: "Done" }).waitFor({ timeout: T });
      await shot(narrow, "narrow-conversation");
      await narrow.keyboard.press("2");
      await narrow.locator(".raw-panel .row").first().waitFor({ state: "visible" });
      expect(await narrow.locator(".main-panel").isVisible()).toBe(false);
      await shot(narrow, "narrow-messages");
    } finally {
      await client.close();
    }
    // The saved trace replayed to serve again: the replayed turn's timeline (same trace: the recorded traceparent is sent again)…
    const replayed = join(dir, "replayed.jsonl");
    const r = new InspectProcess(["--replay", join(dir, "t.jsonl"), "--agent", `${process.execPath} ${bin} serve --model scripted:${scriptPath}`, "--cwd", ws, "--trace", replayed]);
    try {
      const page = await open(await r.url);
      await page.locator("#state", { hasText: "ended" }).waitFor({ timeout: 30_000 });
      await page.keyboard.press("3");
      await checkTimeline(page, traceId);
    } finally {
      await r.stop(); // 0 or 1 (the file was edited the first time: the replayed edit differs)
    }
    // …and a view of the replay's trace shows the spans it saved.
    const v = new InspectProcess(["--open", replayed]);
    try {
      const page = await open(await v.url);
      await page.keyboard.press("3");
      await checkTimeline(page, traceId);
    } finally {
      expect(await v.stop()).toBe(0);
    }
  });

  it("drive mode: prompt typed in the page, permission answered by a click, cancel by a click", async () => {
    const ws = tempDir("inspect-ws-");
    const p = new InspectProcess(["--agent", `${process.execPath} ${fixtureAgent}`, "--cwd", ws, "--trace", join(tempDir(), "t.jsonl")]);
    try {
      const page = await open(await p.url);
      await page.locator("#state", { hasText: "running" }).waitFor({ timeout: T });
      await page.locator("#new-session").click();
      await page.locator(".session").first().waitFor({ timeout: T });
      await page.locator("#prompt").fill(`edit ${join(ws, "notes.txt")}`);
      await page.locator("#send").click();
      const allow = page.locator(".ask button", { hasText: "Allow once" });
      await allow.waitFor({ timeout: T });
      // Exactly the options the agent offered.
      expect(await page.locator(".ask button").allTextContents()).toEqual(["Allow once", "Always allow", "Reject", "Always reject"]);
      await shot(page, "drive-permission");
      await allow.click();
      await page.locator(".stop", { hasText: "turn ended: end_turn" }).waitFor({ timeout: T });
      await expect(page.locator(".permission .answer").textContent()).resolves.toMatch(/answered: opt-allow-once/);
      await page.locator(".msg.agent", { hasText: "permission allow_once" }).waitFor();
      await page.locator(".diff .d-added", { hasText: "new line" }).waitFor();
      await page.locator(".plan li", { hasText: "Edit the file" }).waitFor();
      await page.locator("#prompt").fill("slow");
      await page.keyboard.press("Control+Enter");
      await page.locator(".msg.agent", { hasText: "tick 1" }).waitFor({ timeout: T });
      await page.locator("#cancel").click();
      await page.locator(".stop", { hasText: "turn ended: cancelled" }).waitFor({ timeout: T });
      await shot(page, "drive");
      // Switch mode and model through the session's selects.
      await page.locator('select[aria-label="mode"]').selectOption("code");
      await page.locator(".meta", { hasText: "mode → code" }).waitFor({ timeout: T });
      await page.locator('select[aria-label="Model"]').selectOption("large");
      const state = await p.waitState((s) => s.entries.some((e) => e.kind === "response" && e.method === "session/set_config_option"));
      expect(state.entries.some((e) => e.from === "client" && e.method === "session/cancel")).toBe(true);
      expect(state.entries.find((e) => e.kind === "request" && e.method === "session/set_mode")?.message).toMatchObject({ params: { modeId: "code" } });
      expect(state.entries.find((e) => e.kind === "request" && e.method === "session/set_config_option")?.message).toMatchObject({ params: { configId: "model", value: "large" } });
    } finally {
      expect(await p.stop()).toBe(0);
    }
  });

  it("view mode of a saved trace: conversation, messages, keyboard navigation and search; its replay diff", async () => {
    const dir = tempDir();
    const ws = tempDir("inspect-ws-");
    const trace = join(dir, "saved.jsonl");
    const { client } = await startEditor({ command: process.execPath, args: [bin, "inspect", "--trace", trace, "--", process.execPath, fixtureAgent], cwd: ws });
    try {
      const s = await client.newSession();
      await s.prompt("hello");
      await s.prompt(`edit ${join(ws, "notes.txt")}`);
    } finally {
      await client.close();
    }
    const p = new InspectProcess(["--open", trace]);
    try {
      const page = await open(await p.url);
      await page.locator("#state", { hasText: "ended" }).waitFor({ timeout: T });
      await page.locator(".msg.agent", { hasText: "Hello, world" }).waitFor();
      await page.locator(".msg.thought", { hasText: "thinking about greetings" }).waitFor();
      await page.locator(".usage", { hasText: "1,234" }).waitFor();
      await page.locator(".plan li.plan-completed").first().waitFor();
      const total = (await p.state()).entries.length;
      expect(await page.locator(".row").count()).toBe(total);
      await shot(page, "view");
      await page.locator(".list").focus();
      await page.keyboard.press("j");
      await page.keyboard.press("j");
      await page.locator(".detail .d-head", { hasText: "#2" }).waitFor();
      await page.keyboard.press("/");
      await page.keyboard.type("usage_update");
      await expect.poll(() => page.locator(".row").count(), { timeout: T }).toBe(1);
    } finally {
      expect(await p.stop()).toBe(0);
    }
    // Replayed against a different agent: the Replay tab shows what changed.
    const r = new InspectProcess(["--replay", trace, "--agent", `${process.execPath} ${fixtureAgent} --minimal`, "--cwd", ws, "--trace", join(dir, "replayed.jsonl")]);
    try {
      const page = await open(await r.url);
      await page.locator("#state", { hasText: "ended" }).waitFor({ timeout: 30_000 });
      await page.keyboard.press("4");
      await page.locator(".replay-diff .d-removed", { hasText: "loadSession" }).waitFor({ timeout: T });
      await page.locator(".replay-diff .d-added").first().waitFor();
      await shot(page, "replay");
    } finally {
      expect(await r.stop()).toBe(1);
    }
  });

  it("the model's Markdown is rendered, its HTML shown as text", async () => {
    const file = join(tempDir(), "md.jsonl");
    const line = (ts: number, from: string, message: unknown): string => `${JSON.stringify({ ts, from, message })}\n`;
    const text = "**bold** and `code` <img src=x onerror=alert(1)>\n\n- one\n- two\n\n```\n<b>not bold</b>\n```\n[a link](https://example.com/x) [not a link](javascript:alert(1))";
    writeFileSync(
      file,
      `${JSON.stringify({ agentkitInspect: 1, startedAt: 1, mode: "tap", agent: "md-agent", redacted: true })}\n` +
        line(1, "client", { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } }) +
        line(2, "agent", { jsonrpc: "2.0", id: 0, result: { protocolVersion: 1, agentCapabilities: {} } }) +
        line(3, "client", { jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: "/w", mcpServers: [] } }) +
        line(4, "agent", { jsonrpc: "2.0", id: 1, result: { sessionId: "s1" } }) +
        line(5, "client", { jsonrpc: "2.0", id: 2, method: "session/prompt", params: { sessionId: "s1", prompt: [{ type: "text", text: "hi" }] } }) +
        line(6, "agent", { jsonrpc: "2.0", method: "session/update", params: { sessionId: "s1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } } }) +
        line(7, "agent", { jsonrpc: "2.0", id: 2, result: { stopReason: "end_turn" } }),
    );
    const p = new InspectProcess(["--open", file]);
    try {
      const page = await open(await p.url);
      const msg = page.locator(".msg.agent");
      await msg.locator("strong", { hasText: "bold" }).waitFor({ timeout: T });
      expect(await msg.locator(".text > p > code").first().textContent()).toBe("code");
      expect(await msg.locator("li").allTextContents()).toEqual(["one", "two"]);
      expect(await msg.locator("pre code").textContent()).toBe("<b>not bold</b>");
      expect(await msg.locator("a").evaluateAll((as) => as.map((a) => a.getAttribute("href")))).toEqual(["https://example.com/x"]);
      expect(await msg.locator("img, b").count()).toBe(0);
      expect(await msg.textContent()).toContain("<img src=x onerror=alert(1)>");
    } finally {
      expect(await p.stop()).toBe(0);
    }
  });

  it("a flagged invalid message: the rule broken is shown", async () => {
    const file = join(tempDir(), "bad.jsonl");
    const line = (ts: number, from: string, message: unknown): string => `${JSON.stringify({ ts, from, message })}\n`;
    writeFileSync(
      file,
      `${JSON.stringify({ agentkitInspect: 1, startedAt: 1, mode: "tap", agent: "broken-agent", redacted: true })}\n` +
        line(1, "client", { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } }) +
        line(5, "agent", { jsonrpc: "2.0", id: 0, result: { protocolVersion: 1, agentCapabilities: {} } }) +
        line(6, "client", { jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: "/w", mcpServers: [] } }) +
        line(9, "agent", { jsonrpc: "2.0", id: 1, result: { sessionId: "s1" } }) +
        line(10, "client", { jsonrpc: "2.0", id: 2, method: "session/prompt", params: { sessionId: "s1", prompt: [{ type: "text", text: "hi" }] } }) +
        line(20, "agent", { jsonrpc: "2.0", id: 2, result: { stopReason: "finished" } }) +
        line(21, "agent", { jsonrpc: "2.0", method: "session/update", params: { sessionId: "s1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "late" } } } }),
    );
    const p = new InspectProcess(["--open", file]);
    try {
      const page = await open(await p.url);
      await page.locator("button.issues", { hasText: "2 flagged" }).waitFor({ timeout: T });
      await page.locator(".row.flagged").first().click();
      await expect(page.locator(".detail .issue").first().textContent()).resolves.toMatch(/schema: session\/prompt result: stopReason/);
      await page.locator(".row.flagged").nth(1).click();
      await expect(page.locator(".detail .issue").first().textContent()).resolves.toMatch(/order\/update-after-prompt-answer/);
      await page.locator("button.issues").click();
      await expect.poll(() => page.locator(".row").count(), { timeout: T }).toBe(2);
      await shot(page, "flagged");
    } finally {
      expect(await p.stop()).toBe(0);
    }
  });
});
