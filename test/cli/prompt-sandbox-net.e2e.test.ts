import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockOpenAI, type MockProviderServer, type RecordedRequest } from "../../src/testing/index.js";
import { cleanEnv } from "../acp/agent/serve-support.js";
import { repoRoot, tempDir } from "../acp/client/helpers.js";
import { cliBin, runCliProcess } from "../support/cli.js";
import { sandboxOrSkip } from "../support/sandbox-engine.js";

const engine = await sandboxOrSkip("prompt --sandbox's network tests", { curl: true });

/**
 * `prompt --sandbox`: the agent process's network is its preset's allow-list, through the
 * sandbox's proxy. Our own agent (`self`) reaches its model provider (a loopback mock, opened
 * from the base URL it will call), and the command it runs in prompt's terminal reaches the
 * "registry" `--sandbox-net` names and not another server. A command-line agent has no preset:
 * the same model call is refused in the sandbox, and goes through without it.
 * prompt runs as a process of its own: the proxy never connects to its own process's listeners.
 */

function lastToolText(request: RecordedRequest): string {
  const tool = [...request.messages].reverse().find((m) => m.role === "tool");
  return typeof tool?.content === "string" ? tool.content : JSON.stringify(tool?.content ?? "");
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)));
}

describe.skipIf(!engine.available)("prompt --sandbox: the agent's network is its preset's allow-list", () => {
  const registry = createServer((req, res) => res.end(`registry-ok ${req.url ?? ""}\n`));
  const other = createServer((_req, res) => res.end("other-reached\n"));
  let registryPort = 0;
  let otherPort = 0;
  let mock: MockProviderServer;

  beforeAll(async () => {
    registryPort = await listen(registry);
    otherPort = await listen(other);
    mock = await startMockOpenAI();
  });
  afterAll(async () => {
    registry.close();
    other.close();
    await mock.close();
  });

  it("self reaches its provider through the proxy; its terminal command reaches only the named registry", async () => {
    const workspace = tempDir();
    const command = `curl -sS --max-time 20 http://127.0.0.1:${registryPort}/pkg; curl -sS --max-time 20 http://127.0.0.1:${otherPort}/`;
    const before = mock.requests.length;
    mock.push({ toolCalls: [{ name: "shell", input: { command } }] }, (req) => ({ text: `tool said: ${lastToolText(req)}` }));
    const run = await runCliProcess(["prompt", "--sandbox", "--sandbox-net", `allow=127.0.0.1:${registryPort}`, "--agent", "self", "--model", "openai-compatible:mock", "--cwd", workspace, "--permissions", "allow-all", "go"], {
      cwd: repoRoot,
      env: cleanEnv({ AGENTKIT_BASE_URL: mock.baseUrl }),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(mock.requests.length - before).toBe(2);
    expect(run.stdout).toContain(`registry-ok /pkg`);
    expect(run.stdout).not.toContain("other-reached");
    expect(run.stdout).toMatch(/refused: not in the --sandbox-net allow-list/);
    const mockPort = new URL(mock.baseUrl).port;
    // The provider's host from the base URL self will call, then --sandbox-net's.
    expect(run.stderr).toContain(`network: only 127.0.0.1:${mockPort}, 127.0.0.1:${registryPort} (through the sandbox's proxy)`);
    // The agent inside (serve on stdio) runs its own commands unsandboxed — inside prompt's sandbox;
    // only a report of a sandbox that is on is printed (not a line on every laptop run).
    expect(run.stderr).not.toContain("agent reports:");
  }, 90_000);

  it.each([
    { sandboxed: true, flags: ["--sandbox"] },
    { sandboxed: false, flags: [] as string[] },
  ])("a command-line agent (no preset) with $flags: its model call is refused only in the sandbox", async ({ sandboxed, flags }) => {
    const workspace = tempDir();
    const before = mock.requests.length;
    if (!sandboxed) mock.push({ text: "model reached" });
    const agent = `${process.execPath} ${cliBin} serve --no-persist --log-level warn --model openai-compatible:mock`;
    const run = await runCliProcess(["prompt", ...flags, "--agent", agent, "--cwd", workspace, "go"], { cwd: repoRoot, env: cleanEnv({ AGENTKIT_BASE_URL: mock.baseUrl }) });
    if (sandboxed) {
      expect(run.code).not.toBe(0);
      expect(mock.requests.length).toBe(before);
      expect(run.stderr).toMatch(/could not connect .*ECONNREFUSED/);
    } else {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain("model reached");
    }
  }, 90_000);
});
