import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, connectServe } from "../acp/agent/serve-support.js";
import { cleanUp, onCleanup, workspace, writeScriptFile } from "../acp/agent/lifecycle/support.js";
import { runCli, runCliProcess } from "../support/cli.js";
import { sandboxOrSkip } from "../support/sandbox-engine.js";

const engine = await sandboxOrSkip("in-process serve --listen");

afterEach(cleanUp);

// Flag checks run serve in-process (exit code and output are the point).
const run = (args: string[], env = cleanEnv()) => runCli(["serve", ...args], { cwd: process.cwd(), env });

describe("serve persistence and mode flags", () => {
  it.each([
    [["--mode", "yolo"], "--mode must be one of ask, auto-edit, read-only"],
    [["--state-dir", " "], "--state-dir needs a directory"],
    [["--protocol", "v3"], '--protocol must be one of v1, v2, auto (got "v3")'],
    [["--sandbox=jail"], '--sandbox must be one of off, workspace (got "jail")'],
    [["--sandbox-limit", "cpu=0"], "--sandbox-limit takes NAME=VALUE with NAME one of cpu, memory, processes, tmp, file"],
    [["--sandbox-limit", "disk=5"], '(got "disk=5")'],
    [["--child-env", "A B"], '--child-env takes variable names such as NODE_OPTIONS,GOPATH (got "A B")'],
  ])("%j → a message on stderr, exit 2, stdout untouched", async (args, message) => {
    const r = await run(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(message);
  });

  it("an unknown provider is found when the models resolve (in the bin): exit 2, stdout untouched", async () => {
    const r = await runCliProcess(["serve", "--models", "nosuchprovider:x"], { cwd: process.cwd(), env: cleanEnv() });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("unknown provider 'nosuchprovider'");
  });

  it("--sandbox asked for on a machine without bubblewrap → exit 2 naming what to install, never a run without it", async () => {
    const r = await runCliProcess(["serve", "--sandbox", "--no-persist"], { cwd: process.cwd(), env: cleanEnv({ PATH: "/nonexistent" }) });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("apt-get install bubblewrap");
  });

  it("a state dir that cannot be made → exit 1 at start-up with the reason", async () => {
    const { root } = workspace();
    const file = join(root, "a-file");
    writeFileSync(file, "");
    const r = await runCliProcess(["serve", "--state-dir", join(file, "state")], { cwd: root, env: cleanEnv() });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/cannot use the state directory: .*ENOTDIR/);
  });

  it.skipIf(!engine.available)("in-process (not the bin): --listen and stdio each serve until stdin ends (exit 0)", async () => {
    const listen = await run(["--no-persist", "--model", "demo", "--listen", "127.0.0.1:0"], cleanEnv({ AGENTKIT_ACP_TOKEN: "test-token-1234567890" })); // stdin: empty, at its end at once
    expect(listen.code, listen.stderr).toBe(0);
    expect(listen.stdout).toBe("");
    expect(listen.stderr).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+\/acp[^]*input ended: cancelling running turns and exiting/);
    const stdio = await run(["--no-persist", "--model", "demo"]); // stdin: empty, at its end at once
    expect(stdio.code, stdio.stderr).toBe(0);
    expect(stdio.stdout).toBe("");
    expect(stdio.stderr).toContain("the ACP connection closed; exiting");
  });

  it("--help lists the flags", async () => {
    const r = await run(["--help"]);
    for (const word of ["--mode", "--models", "--state-dir", "--no-persist", "--no-approval-memory", "--clear-approval-memory", "auto-edit", "read-only", "--protocol v1|v2|auto", "--sandbox[=MODE]", "--sandbox-limit", "--child-env"]) expect(r.stdout).toContain(word);
  });

  it("without --state-dir, AGENTKIT_STATE_DIR decides where sessions go", async () => {
    const { root, ws, state } = workspace();
    const script = writeScriptFile(root, "s.json", { steps: [{ text: "x" }] });
    const env = connectServe(["--model", `scripted:${script}`], { cwd: ws, env: cleanEnv({ AGENTKIT_STATE_DIR: state }) });
    onCleanup(async () => {
      env.connection.close();
      await env.proc.end();
    });
    await env.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await env.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    expect(readdirSync(join(state, "sessions"))).toContain(`${sessionId}.jsonl`);
    expect(existsSync(join(state, "sessions", `${sessionId}.jsonl`))).toBe(true);
  });
});
