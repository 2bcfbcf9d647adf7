import { spawn, spawnSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { stripControls } from "../../src/cli/terminal-safe.js";
import { startMockAnthropic } from "../../src/testing/index.js";
import { bin, cleanEnv } from "../acp/agent/serve-support.js";
import { Workspace } from "../acp/agent/services-support.js";
import { typeKey } from "../acp/agent/key-page-support.js";
import { runCli } from "../support/cli.js";

// `agentkit-acp prompt` against `serve` with no model key: the key page's URL on the terminal
// (a real pty through util-linux `script`), consent, the human (fetch) pastes the key, the turn
// runs; Ctrl-C while waiting cancels; without a terminal the URL is declined with the reason.

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const hasScript = spawnSync("script", ["--version"]).status === 0;
const plain = (text: string): string => stripControls(text);

async function setup() {
  const mock = await startMockAnthropic({ responses: [{ text: "reply from the model" }] });
  const ws = new Workspace("agentkit-prompt-url-");
  cleanups.push(() => mock.close(), () => ws.cleanup());
  const agent = `"${process.execPath}" "${bin}" serve --no-persist --model anthropic:claude-sonnet-4-5 --base-url ${mock.baseUrl}`;
  return { mock, ws, agent, env: cleanEnv({ NO_COLOR: "1", AGENTKIT_STATE_DIR: ws.stateDir }) };
}

/** `prompt` on a pseudo-terminal: `output` is everything it showed; `type` types into it. */
function onTerminal(args: string[], env: NodeJS.ProcessEnv, cwd: string) {
  // `exec`: script runs the line with $SHELL -c; dash (/bin/sh, used when SHELL is unset as in CI)
  // does not exec a lone command, so it would share the terminal's Ctrl-C and end with 130 itself.
  const line = `exec ${[process.execPath, bin, "prompt", ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ")}`;
  const child = spawn("script", ["-qfec", line, "/dev/null"], { cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
  cleanups.push(() => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // already gone
    }
  });
  let output = "";
  const waiters: Array<() => void> = [];
  child.stdout.on("data", (c: Buffer) => {
    output += c.toString();
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return {
    get output() {
      return plain(output);
    },
    /** Resolves once the terminal shows `text` (bounded by the test's timeout). */
    shows(text: string | RegExp): Promise<string> {
      return new Promise((resolve) => {
        const check = (): void => {
          const match = plain(output).match(text);
          if (match) resolve(match[0]);
          else waiters.push(check);
        };
        check();
      });
    },
    type: (text: string) => child.stdin.write(text),
    exited,
  };
}

const URL_PATTERN = /http:\/\/127\.0\.0\.1:\d+\/key\/[\w-]+/;

describe("prompt shows a URL elicitation (the serve key page)", () => {
  it.skipIf(!hasScript)("on a terminal: the whole URL, consent, waiting, completion; the turn runs with the pasted key", async () => {
    const { mock, ws, agent, env } = await setup();
    const term = onTerminal(["--agent", agent, "--cwd", ws.cwd, "hello"], env, ws.cwd);
    await term.shows("[y/N]");
    const url = await term.shows(URL_PATTERN);
    expect(term.output).toContain("The agent asks you to open a page: The model needs ANTHROPIC_API_KEY");
    term.type("y\r");
    await term.shows("waiting for you to finish on that page");
    await typeKey(url, "sk-typed-in-browser");
    expect(await term.exited).toBe(0);
    expect(term.output).toContain("the agent says the page is done");
    expect(term.output).toContain("reply from the model");
    expect(mock.requests[0]!.headers["x-api-key"]).toBe("sk-typed-in-browser");
  }, 60_000);

  it.skipIf(!hasScript)("Ctrl-C while waiting on the page cancels the turn (exit 3) and closes the page", async () => {
    const { mock, ws, agent, env } = await setup();
    const term = onTerminal(["--agent", agent, "--cwd", ws.cwd, "hello"], env, ws.cwd);
    const url = await term.shows(URL_PATTERN);
    await term.shows("[y/N]");
    term.type("y\r");
    await term.shows("waiting for you to finish on that page");
    term.type("\u0003");
    expect(await term.exited, term.output).toBe(3);
    await expect(fetch(url)).rejects.toThrow();
    expect(mock.requests).toHaveLength(0);
  }, 60_000);

  it("without a terminal: declined, and the reason reaches the user (exit 1)", async () => {
    const { mock, ws, agent, env } = await setup();
    const run = await runCli(["prompt", "--agent", agent, "--cwd", ws.cwd, "hello"], { cwd: ws.cwd, env });
    expect(run.code).toBe(1);
    // Said once, on stderr, without blaming a user nobody asked.
    expect(run.stdout).toBe("");
    expect(run.stderr.match(/Authentication required/g)).toHaveLength(1);
    expect(run.stderr).toContain("(the key page was declined: agentkit-acp prompt runs without a terminal, so there is nobody to show the URL to)");
    expect(run.stderr).not.toContain("the user");
    expect(mock.requests).toHaveLength(0);
  }, 60_000);
});
