import { spawn, spawnSync } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import type { FileSystemHostService, HostSessionInfo, TerminalHostService } from "../../../src/acp/client/index.js";
import { pidAlive } from "../../support/processes.js";
import { agentFixturesDir } from "../../support/fixture-agents.js";
export { pidAlive };

export const agentsDir = agentFixturesDir;

/** A workspace with an approved root (`cwd`), an additional root, and outside places full of traps. */
export interface Layout {
  ws: string;
  cwd: string;
  outside: string;
  evil: string;
  extra: string;
  marker: string;
  cleanup(): void;
}

export function buildLayout(): Layout {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), "host-ws-")));
  const cwd = join(ws, "app");
  const outside = join(ws, "outside");
  const evil = join(ws, "app-evil");
  const extra = join(ws, "extra");
  const marker = `TOP-SECRET-${randomUUID()}`;
  for (const dir of [cwd, outside, evil, extra, join(cwd, "sub")]) mkdirSync(dir, { recursive: true });
  writeFileSync(join(outside, "secret.txt"), `${marker} outside\n`);
  writeFileSync(join(outside, "other.txt"), `${marker} other\n`);
  writeFileSync(join(evil, "secret.txt"), `${marker} evil sibling\n`);
  writeFileSync(join(extra, "extra.txt"), "extra root file\n");
  writeFileSync(join(cwd, "ok.txt"), "inside ok\nline2\nline3\n");
  writeFileSync(join(cwd, "sub", "inner.txt"), "inner\n");
  const link = (target: string, name: string): void => symlinkSync(target, join(cwd, name));
  link(join(outside, "secret.txt"), "link-file");
  link("../outside/secret.txt", "rel-link");
  link(outside, "link-dir");
  link(join(cwd, "chain2"), "chain1");
  link(join(outside, "secret.txt"), "chain2");
  link(join(cwd, "chain-dir2"), "chain-dir1");
  link(outside, "chain-dir2");
  link(join(evil, "secret.txt"), "evil-link");
  link(join(cwd, "loop2"), "loop1");
  link(join(cwd, "loop1"), "loop2");
  link("/dev/zero", "dev-zero");
  link("/etc", "etc-link");
  link(join(outside, "created-by-dangle.txt"), "dangle");
  link("../outside/created-rel.txt", "dangle-rel");
  link(join(outside, "newdir"), "dangle-dir");
  link("ok.txt", "inner-link");
  linkSync(join(outside, "secret.txt"), join(cwd, "hard"));
  const fifo = spawnSync("mkfifo", [join(cwd, "fifo")]);
  if (fifo.status !== 0) throw new Error("mkfifo failed");
  return { ws, cwd, outside, evil, extra, marker, cleanup: () => rmSync(ws, { recursive: true, force: true }) };
}

/** Every entry under `dir`: kind, link target or content hash, size and mtime. */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (path: string, rel: string): void => {
    for (const name of readdirSync(path)) {
      const full = join(path, name);
      const key = rel ? `${rel}/${name}` : name;
      const st = lstatSync(full);
      if (st.isSymbolicLink()) out[key] = `link:${readlinkSync(full)}`;
      else if (st.isDirectory()) {
        out[key] = "dir";
        walk(full, key);
      } else if (st.isFile()) {
        out[key] = `file:${createHash("sha256").update(readFileSync(full)).digest("hex")}:${st.size}:${st.mtimeMs}`;
      } else out[key] = "special";
    }
  };
  walk(dir, "");
  return out;
}

export interface SessionSpec {
  cwd: string;
  additionalDirectories?: string[];
}

export interface AgentRun {
  /** agent_message_chunk text per session id, in arrival order. */
  text: Map<string, string>;
  stopReasons: string[];
  sessions: HostSessionInfo[];
  exitCode: number | null;
}

/**
 * A minimal ACP client written directly on the SDK: spawns `agentFile` on stdio, forwards
 * fs/* and terminal/* to the given host services, opens one session per spec and sends each
 * the prompt text `prompt(session)`. Ends the agent (stdin EOF) and waits for its exit.
 */
export async function driveAgent(options: {
  agentFile: string;
  fileSystem?: FileSystemHostService;
  terminal?: TerminalHostService;
  sessions: SessionSpec[];
  prompt: (session: HostSessionInfo) => string;
  /** Called after all prompts, before the agent is ended (e.g. session close). */
  afterPrompts?: (sessions: HostSessionInfo[], text: Map<string, string>) => Promise<void>;
}): Promise<AgentRun> {
  const child = spawn(process.execPath, [join(agentsDir, options.agentFile)], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  child.stdin.on("error", () => undefined);
  const known = new Map<string, HostSessionInfo>();
  const session = (id: string): HostSessionInfo => {
    const info = known.get(id);
    if (!info) throw acp.RequestError.sessionNotFound(id);
    return info;
  };
  const text = new Map<string, string>();
  const fsHost = options.fileSystem;
  const term = options.terminal;
  let app = acp.client({ name: "host-test-client" }).onNotification(acp.methods.client.session.update, (ctx) => {
    const u = ctx.params.update;
    if (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text") {
      text.set(ctx.params.sessionId, (text.get(ctx.params.sessionId) ?? "") + u.content.text);
    }
  });
  if (fsHost) {
    app = app
      .onRequest(acp.methods.client.fs.readTextFile, (ctx) => fsHost.readTextFile(ctx.params, session(ctx.params.sessionId), ctx.signal))
      .onRequest(acp.methods.client.fs.writeTextFile, (ctx) => fsHost.writeTextFile(ctx.params, session(ctx.params.sessionId), ctx.signal));
  }
  if (term) {
    app = app
      .onRequest(acp.methods.client.terminal.create, (ctx) => term.create(ctx.params, session(ctx.params.sessionId), ctx.signal))
      .onRequest(acp.methods.client.terminal.output, (ctx) => term.output(ctx.params, session(ctx.params.sessionId)))
      .onRequest(acp.methods.client.terminal.waitForExit, (ctx) => term.waitForExit(ctx.params, session(ctx.params.sessionId), ctx.signal))
      .onRequest(acp.methods.client.terminal.kill, (ctx) => term.kill(ctx.params, session(ctx.params.sessionId)))
      .onRequest(acp.methods.client.terminal.release, (ctx) => term.release(ctx.params, session(ctx.params.sessionId)));
  }
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>);
  const stopReasons: string[] = [];
  const infos: HostSessionInfo[] = [];
  try {
    await app.connectWith(stream, async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {
          fs: { readTextFile: fsHost?.canRead ?? false, writeTextFile: fsHost?.canWrite ?? false },
          terminal: term !== undefined,
        },
      });
      for (const spec of options.sessions) {
        const additionalDirectories = spec.additionalDirectories ?? [];
        const created = await ctx.request(acp.methods.agent.session.new, { cwd: spec.cwd, mcpServers: [], additionalDirectories });
        const info = { sessionId: created.sessionId, cwd: spec.cwd, additionalDirectories };
        known.set(info.sessionId, info);
        infos.push(info);
      }
      for (const info of infos) {
        const res = await ctx.request(acp.methods.agent.session.prompt, { sessionId: info.sessionId, prompt: [{ type: "text", text: options.prompt(info) }] });
        stopReasons.push(res.stopReason);
      }
      await options.afterPrompts?.(infos, text);
    });
  } finally {
    child.stdin.end();
  }
  const deadline = setTimeout(() => child.kill("SIGKILL"), 20_000);
  const exitCode = await exited;
  clearTimeout(deadline);
  return { text, stopReasons, sessions: infos, exitCode };
}

/** The JSON-line reports a fixture agent sent as message chunks. */
export function reports<T>(text: string | undefined): T[] {
  return (text ?? "")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as T);
}


/** The protocol has no output event: ask until `predicate` holds (deadline, not a sleep). */
export async function outputUntil(
  host: TerminalHostService,
  session: HostSessionInfo,
  terminalId: string,
  predicate: (output: string) => boolean,
  ms = 20_000,
): Promise<acp.TerminalOutputResponse> {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await host.output({ sessionId: session.sessionId, terminalId }, session);
    if (predicate(res.output)) return res;
    if (Date.now() > deadline) throw new Error(`output never matched; last: ${JSON.stringify(res.output)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function pidsIn(output: string): number[] {
  return [...output.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));
}
