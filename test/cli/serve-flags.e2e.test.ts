import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { bin, cleanEnv, connectServe } from "../acp/agent/serve-support.js";
import { cleanUp, onCleanup, workspace, writeScriptFile } from "../acp/agent/lifecycle/support.js";

afterEach(cleanUp);

const run = (args: string[], env = cleanEnv()) => spawnSync(process.execPath, [bin, "serve", ...args], { encoding: "utf8", env, input: "", timeout: 30_000 });

describe("serve persistence and mode flags", () => {
  it.each([
    [["--mode", "yolo"], "--mode must be one of ask, auto-edit, read-only"],
    [["--models", "nosuchprovider:x"], "unknown provider 'nosuchprovider'"],
    [["--state-dir", " "], "--state-dir needs a directory"],
    [["--protocol", "v3"], '--protocol must be one of v1, v2, auto (got "v3")'],
  ])("%j → a message on stderr, exit 2, stdout untouched", (args, message) => {
    const r = run(args);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(message);
  });

  it("a state dir that cannot be made → exit 1 at start-up with the reason", () => {
    const { root } = workspace();
    const file = join(root, "a-file");
    writeFileSync(file, "");
    const r = run(["--state-dir", join(file, "state")]);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/cannot use the state directory: .*ENOTDIR/);
  });

  it("--help lists the flags", () => {
    const r = run(["--help"]);
    for (const word of ["--mode", "--models", "--state-dir", "--no-persist", "--no-approval-memory", "--clear-approval-memory", "auto-edit", "read-only", "--protocol v1|v2|auto"]) expect(r.stdout).toContain(word);
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
