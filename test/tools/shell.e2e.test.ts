import { spawn } from "node:child_process";
import { realpath } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LocalCommandRunner, builtinTools } from "../../src/tools/index.js";
import type { CommandRequest, Tool } from "../../src/tools/index.js";
import { isAlive, makeContext, makeWorkspace, waitFor } from "./support.js";
import type { Workspace } from "./support.js";

let ws: Workspace;
beforeEach(async () => {
  ws = await makeWorkspace();
});
afterEach(async () => {
  await ws.cleanup();
});

function request(command: string, overrides: Partial<CommandRequest> = {}): CommandRequest {
  return { command, cwd: ws.root, timeoutMs: 30_000, outputByteLimit: 64 * 1024, signal: new AbortController().signal, ...overrides };
}

/** Resolves once the streamed output contains `count` lines `pid:<n>`; returns the pids. */
function pidsFromOutput(count: number): { onOutput: (chunk: string) => void; pids: Promise<number[]> } {
  let text = "";
  let resolve: (pids: number[]) => void = () => {};
  const pids = new Promise<number[]>((r) => (resolve = r));
  return {
    onOutput: (chunk) => {
      text += chunk;
      const found = [...text.matchAll(/pid:(\d+)/g)].map((m) => Number(m[1]));
      if (found.length >= count) resolve(found);
    },
    pids,
  };
}

const spawnsChildren = "echo pid:$$; sleep 100 & echo pid:$!; sleep 100 & echo pid:$!; wait";

describe("LocalCommandRunner", () => {
  const runner = new LocalCommandRunner();

  it("returns combined output and the exit code, streaming as it goes", async () => {
    const chunks: string[] = [];
    const result = await runner.run(request("echo out; echo err >&2; exit 3", { onOutput: (c) => chunks.push(c) }));
    expect(result).toMatchObject({ exitCode: 3, signal: null, timedOut: false, truncated: false });
    expect(result.output).toContain("out\n");
    expect(result.output).toContain("err\n");
    expect(chunks.join("")).toBe(result.output);
  });

  it("runs in the given cwd with the environment merged", async () => {
    const result = await runner.run(request("pwd; echo $AGENTKIT_TEST_VAR; echo ${PATH:+has-path}", { cwd: path.join(ws.root, "sub"), env: { AGENTKIT_TEST_VAR: "merged" } }));
    expect(result.output).toBe(`${path.join(ws.root, "sub")}\nmerged\nhas-path\n`);
  });

  it("keeps the last bytes when output exceeds the limit, cut on a UTF-8 character boundary", async () => {
    const emoji = "😀"; // 4 bytes
    const env = { OUT: `start${emoji.repeat(50)}` };
    const result = await runner.run(request('printf "%s" "$OUT"', { env, outputByteLimit: 10 }));
    expect(result.truncated).toBe(true);
    // 10 bytes from the end start inside an emoji: the partial one is dropped, two whole remain.
    expect(result.output).toBe(emoji.repeat(2));
    expect(result.output).not.toContain("\uFFFD");
    const twoByte = await runner.run(request('printf "%s" "$OUT"', { env: { OUT: `a${"é".repeat(100)}` }, outputByteLimit: 11 }));
    expect(twoByte.output).toBe("é".repeat(5));
    const exact = await runner.run(request("printf 0123456789", { outputByteLimit: 10 }));
    expect(exact).toMatchObject({ output: "0123456789", truncated: false });
  });

  it("times out, killing the command and its children", async () => {
    const watch = pidsFromOutput(3);
    const started = Date.now();
    const result = await runner.run(request(spawnsChildren, { timeoutMs: 500, onOutput: watch.onOutput }));
    expect(result.timedOut).toBe(true);
    expect(result.exitCode).toBeNull();
    expect(Date.now() - started).toBeLessThan(5_000);
    const pids = await watch.pids;
    await waitFor(() => pids.every((pid) => !isAlive(pid)), `pids ${pids.join(", ")} to end`);
  });

  // The bounds below are generous for a loaded 2-core machine; each stays well under the
  // kill grace period, so a runner that waited for the group to die would fail them.
  it("on cancel resolves promptly with the output so far and leaves no process behind", async () => {
    const controller = new AbortController();
    const watch = pidsFromOutput(3);
    const running = runner.run(request(spawnsChildren, { signal: controller.signal, onOutput: watch.onOutput }));
    const pids = await watch.pids;
    expect(pids.every(isAlive)).toBe(true);
    const cancelledAt = performance.now();
    controller.abort();
    const result = await running;
    expect(performance.now() - cancelledAt).toBeLessThan(1_000);
    expect(result.output).toContain(`pid:${pids[0]}`);
    expect(result.timedOut).toBe(false);
    await waitFor(() => pids.every((pid) => !isAlive(pid)), `pids ${pids.join(", ")} to end`);
  });

  it("escalates to SIGKILL for children that ignore SIGTERM, still resolving promptly", async () => {
    const quick = new LocalCommandRunner({ killGraceMs: 3_000 });
    const controller = new AbortController();
    const watch = pidsFromOutput(2);
    const running = quick.run(request("trap '' TERM; echo pid:$$; sleep 100 & echo pid:$!; wait", { signal: controller.signal, onOutput: watch.onOutput }));
    const pids = await watch.pids;
    const cancelledAt = performance.now();
    controller.abort();
    await running;
    expect(performance.now() - cancelledAt).toBeLessThan(1_500);
    await waitFor(() => pids.every((pid) => !isAlive(pid)), `pids ${pids.join(", ")} to be killed`);
  });

  it("ends background processes the shell left behind when it exits", async () => {
    const watch = pidsFromOutput(1);
    const result = await runner.run(request("sleep 100 & echo pid:$!", { onOutput: watch.onOutput }));
    expect(result.exitCode).toBe(0);
    const [pid] = await watch.pids;
    await waitFor(() => !isAlive(pid ?? 0), "the background sleep to end");
  });

  it("kills running commands' groups when this process exits", async () => {
    const dist = pathToFileURL(path.resolve("dist/tools/index.js")).href;
    const script = [
      `import { LocalCommandRunner } from ${JSON.stringify(dist)};`,
      "const signal = new AbortController().signal;",
      "void new LocalCommandRunner().run({ command: 'sleep 100 & echo pid:$!; wait', cwd: process.cwd(), timeoutMs: 60000, outputByteLimit: 1000, signal,",
      "  onOutput: (text) => { process.stdout.write(text); if (text.includes('pid:')) process.exit(0); } });",
    ].join("\n");
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(0);
    const pid = Number(/pid:(\d+)/.exec(output)?.[1]);
    expect(pid).toBeGreaterThan(0);
    await waitFor(() => !isAlive(pid), "the command's group to be killed at exit");
  });

  it("does not start when already cancelled, and rejects for a missing cwd", async () => {
    const result = await runner.run(request("echo never", { signal: AbortSignal.abort() }));
    expect(result).toEqual({ output: "", truncated: false, exitCode: null, signal: null, timedOut: false, cancelled: true, durationMs: 0 });
    await expect(runner.run(request("true", { cwd: path.join(ws.root, "missing") }))).rejects.toThrow(/cannot run command in/);
  });
});

describe("shell tool", () => {
  const shell = builtinTools().find((t) => t.name === "shell") as Tool;
  const run = (input: unknown, ctx = makeContext(ws.root)) => shell.execute(shell.parse(input), ctx);

  it("reports output and exit code in text and data, streaming progress", async () => {
    const ctx = makeContext(ws.root);
    const ok = await run({ command: "echo hello" }, ctx);
    expect(ok).toMatchObject({ isError: false, text: "hello\n[exit code: 0]" });
    expect(ok.data).toEqual({ exitCode: 0, signal: null, timedOut: false, truncated: false, cancelled: false, durationMs: expect.any(Number) });
    expect(ctx.progressEvents.map((p) => p.text).join("")).toBe("hello\n");
    const failed = await run({ command: "echo nope >&2; exit 2" });
    expect(failed).toMatchObject({ isError: true, text: "nope\n[exit code: 2]" });
  });

  it("runs in a cwd inside the roots and refuses one outside or missing", async () => {
    expect((await run({ command: "pwd", cwd: "sub" })).text).toBe(`${await realpath(path.join(ws.root, "sub"))}\n[exit code: 0]`);
    expect((await run({ command: "pwd", cwd: "missing" })).text).toBe("working directory not found: missing");
    expect((await run({ command: "pwd", cwd: "../app-evil" })).text).toMatch(/outside the approved roots/);
  });

  it("times out (timeout_ms) and notes the truncation of long output", async () => {
    const timedOut = await run({ command: "echo started; sleep 100", timeout_ms: 300 });
    expect(timedOut.isError).toBe(true);
    expect(timedOut.text).toBe("started\n[timed out after 300 ms; the command and its child processes were killed]");
    const limited = builtinTools({ shellOutputByteLimit: 4 }).find((t) => t.name === "shell") as Tool;
    const long = await limited.execute(limited.parse({ command: "printf 0123456789" }), makeContext(ws.root));
    expect(long.text).toBe("[output truncated; showing the last 4 bytes]\n6789\n[exit code: 0]");
  });

  it("caps timeout_ms at shellMaxTimeoutMs", async () => {
    const capped = builtinTools({ shellMaxTimeoutMs: 200 }).find((t) => t.name === "shell") as Tool;
    const result = await capped.execute(capped.parse({ command: "sleep 100", timeout_ms: 100_000 }), makeContext(ws.root));
    expect(result.text).toMatch(/timed out after 200 ms/);
  });

  it("on cancel kills its group and returns a cancelled result", async () => {
    const ctx = makeContext(ws.root);
    let text = "";
    const pids = new Promise<number[]>((resolve) => {
      ctx.progress = (p) => {
        text += p.text ?? "";
        const found = [...text.matchAll(/pid:(\d+)/g)].map((m) => Number(m[1]));
        if (found.length >= 3) resolve(found);
      };
    });
    const running = run({ command: spawnsChildren }, ctx);
    const seen = await pids;
    const cancelledAt = performance.now();
    ctx.controller.abort();
    const result = await running;
    expect(performance.now() - cancelledAt).toBeLessThan(1_000);
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/\[cancelled; the command and its child processes were killed\]$/);
    expect(result.data).toMatchObject({ cancelled: true });
    await waitFor(() => seen.every((pid) => !isAlive(pid)), "the command's processes to end");
  });

  it("describes the call: title and target carry the command", () => {
    const input = shell.parse({ command: "npm test" });
    const c = { cwd: "/ws/app", roots: ["/ws/app"] };
    expect(shell.kind).toBe("execute");
    expect(shell.title(input, c)).toBe("Run `npm test`");
    expect(shell.target(input, c)).toEqual({ paths: ["/ws/app"], command: "npm test" });
    expect(shell.locations(input, c)).toEqual([]);
  });
});
