import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommandSandbox, parseNetAllow } from "../../src/core/index.js";
import { LocalCommandRunner } from "../../src/tools/index.js";
import { tempDir } from "../acp/agent/support.js";
import { sandboxOrSkip } from "../support/sandbox-engine.js";

const engine = await sandboxOrSkip("the sandbox's network bridges", { curl: true });

/**
 * The allow-list bridge in the sandbox (127.0.0.1:3128 → the proxy's Unix socket), both kinds,
 * with real bubblewrap: perl's (the default where perl is) and node's (the fallback). Bodies go
 * both ways through it, the command's exit status is its own, and perl's acceptor is not a child
 * of the command (a command waiting for all its children would wait forever).
 */
describe.skipIf(!engine.available).each(["perl", "node"] as const)("the %s bridge", (kind) => {
  const workspace = tempDir("agentkit-bridge-ws-");
  // Echoes the size of what it received: a body crosses the bridge both ways. Another process:
  // the proxy never reaches its own process's listeners.
  const echo = [
    'const s=require("http").createServer((q,r)=>{let n=0;q.on("data",(c)=>n+=c.length);q.on("end",()=>r.end("got "+n+" bytes for "+q.url+"\\n"))});',
    's.listen(0,"127.0.0.1",()=>console.log(s.address().port));process.stdin.on("end",()=>process.exit(0)).resume();',
  ].join("");
  const server = spawn(process.execPath, ["-e", echo], { stdio: ["pipe", "pipe", "inherit"] });
  let runner: LocalCommandRunner;
  let sandbox: CommandSandbox;
  let port = 0;

  beforeAll(async () => {
    const [line] = (await once(server.stdout, "data")) as [Buffer];
    port = Number(line.toString().trim());
    sandbox = CommandSandbox.create({ netAllow: parseNetAllow([`allow=127.0.0.1:${port}`]), ...(kind === "node" ? { bridge: "node" as const } : {}) });
    runner = new LocalCommandRunner({ drainMs: 0, sandbox: { sandbox, writable: [workspace.path] } });
  });
  afterAll(() => {
    server.stdin.end();
    workspace.remove();
  });
  const run = (command: string) => runner.run({ command, cwd: workspace.path, timeoutMs: 30_000, outputByteLimit: 65_536, signal: new AbortController().signal });

  it("is the one this sandbox says it uses", () => {
    // perl-base is on every Debian-like image; where it is not, node's is used.
    expect(sandbox.bridge).toBe(kind === "perl" && !existsSync("/usr/bin/perl") ? "node" : kind);
  });

  it("carries a 2 MB upload and its answer, and the command's own exit status", async () => {
    const result = await run(`head -c 2000000 /dev/zero > up && curl -sS --max-time 20 --data-binary @up http://127.0.0.1:${port}/up; exit 7`);
    expect(result.output).toContain("got 2000000 bytes for /up");
    expect(result.exitCode).toBe(7);
  });

  it("leaves the command no child of its own", async () => {
    const result = await run("exec cat /proc/self/task/*/children");
    expect(result.exitCode).toBe(0);
    expect(result.output.trim()).toBe("");
  });
});
