import { mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AcpClient, type AcpAgentConfig, type ClientPermissionPolicy, type HostAuditEvent } from "../../../src/acp/client/index.js";
import type { ScriptFileStep } from "../../../src/testing/scripted-script.js";
import { bin, cleanEnv, serveBehindBridge } from "./serve-support.js";
import { pidAlive } from "../../support/processes.js";
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
 * Our AcpClient driving `agentkit-acp serve` with the given serve arguments (`extra.env` reaches
 * serve). serve runs in-process behind a bridge process (`serveBehindBridge`: each agent process
 * the client starts gets a fresh serve); `process: true` gives the client the bin itself, for a
 * test about serve's process (its pid, signals, a crash).
 */
export async function startServeClient(
  ws: Workspace,
  serveArgs: string[],
  { process: own = false, ...extra }: Partial<AcpAgentConfig> & { process?: boolean } = {},
  policy?: ClientPermissionPolicy,
): Promise<AcpClient> {
  const env = { ...serveEnv(ws), ...extra.env };
  const agent = own ? { command: process.execPath, args: [bin, "serve", ...serveArgs] } : await serveBehindBridge(serveArgs, { cwd: ws.cwd, env });
  return AcpClient.start({ cwd: ws.cwd, inheritEnv: false, stderr: "ignore", ...extra, env, command: agent.command, args: agent.args }, policy);
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
