import { mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AcpClient, type AcpAgentConfig, type ClientPermissionPolicy, type HostAuditEvent } from "../../../src/acp/client/index.js";
import type { ScriptFileStep } from "../../../src/testing/scripted-script.js";
import { bin, cleanEnv } from "./serve-support.js";
import { pidAlive } from "../../support/processes.js";
import { serveBehindBridge } from "../../support/serve-bridge.js";
export { pidAlive };

export { bin, cleanEnv };

/** A temporary workspace (realpath'd, so paths compare exactly); removed by `cleanup()`. */
export class Workspace {
  readonly root: string;
  readonly cwd: string;
  readonly stateDir: string;

  constructor(prefix = "agentkit-services-") {
    this.root = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
    this.cwd = join(this.root, "ws");
    this.stateDir = join(this.root, "state");
    mkdirSync(this.cwd);
  }

  file(name: string, content: string): string {
    const path = join(this.cwd, name);
    writeFileSync(path, content);
    return path;
  }

  read(name: string): string {
    return readFileSync(join(this.cwd, name), "utf8");
  }

  script(steps: ScriptFileStep[], name = "script.json"): string {
    const path = join(this.root, name);
    writeFileSync(path, JSON.stringify({ steps }));
    return path;
  }

  cleanup(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** Env for serve: no provider keys, and a private state directory. */
export function serveEnv(ws: Workspace, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(cleanEnv({ AGENTKIT_STATE_DIR: ws.stateDir, ...extra }))) if (v !== undefined) env[k] = v;
  return env;
}

/**
 * Our AcpClient driving `agentkit-acp serve` with the given serve arguments, serve in-process
 * behind a bridge process (`serveBehindBridge`: each agent process the client starts gets a
 * fresh serve); `extra.env` reaches serve.
 */
export async function startServeClient(
  ws: Workspace,
  serveArgs: string[],
  extra: Partial<AcpAgentConfig> = {},
  policy?: ClientPermissionPolicy,
): Promise<AcpClient> {
  const agent = await serveBehindBridge(serveArgs, { cwd: ws.cwd, env: { ...serveEnv(ws), ...extra.env } });
  return startServeClientProcess(ws, serveArgs, { ...extra, command: agent.command, args: agent.args }, policy);
}

/** `startServeClient` with serve a process of its own, for a test about the process (its pid, signals, a crash). */
export async function startServeClientProcess(
  ws: Workspace,
  serveArgs: string[],
  extra: Partial<AcpAgentConfig> = {},
  policy?: ClientPermissionPolicy,
): Promise<AcpClient> {
  return AcpClient.start(
    {
      command: process.execPath,
      args: [bin, "serve", ...serveArgs],
      cwd: ws.cwd,
      env: serveEnv(ws),
      inheritEnv: false,
      stderr: "ignore",
      ...extra,
    },
    policy,
  );
}

/** Collects host audit events (the hosts' `onRequest`). */
export class Audit {
  readonly events: HostAuditEvent[] = [];
  readonly hook = (event: HostAuditEvent): void => {
    this.events.push(event);
  };
  kinds(): string[] {
    return this.events.map((e) => e.kind);
  }
}


/** Polls a condition of the outside world (process tables) until it holds or `ms` passes. */
export async function eventually(predicate: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Pids of live processes whose environment holds `NAME=value` (this user's processes only). */
export function pidsWithEnv(name: string, value: string): number[] {
  const needle = `${name}=${value}`;
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const env = readFileSync(`/proc/${entry}/environ`, "utf8").split("\0");
      if (env.includes(needle) && pidAlive(Number(entry))) pids.push(Number(entry));
    } catch {
      // gone, or not ours
    }
  }
  return pids;
}
