import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterEachTest } from "./after-each.js";
import { startCli, type LiveCli } from "./cli.js";
import { tempDir } from "./temp.js";

const bridgeScript = new URL("../fixtures/socket-bridge.mjs", import.meta.url).pathname;

/** An in-process serve reached through a bridge process (`serveBehindBridge`). */
export interface BridgedServe {
  /** The agent's command and arguments (the bridge), e.g. for `AcpAgentConfig`. */
  command: string;
  args: string[];
  /** The same as one shell-quoted line (`prompt --agent`, `shellLine`). */
  line: string;
  /** How many serves the bridge's connections started (one per agent process). */
  starts(): number;
  /** stderr of every serve started so far. */
  stderr(): string;
}

const open = new Set<{ server: Server; serves: Set<LiveCli> }>();

// After each test (its own afterEach hooks have closed its clients): no listener or serve is left.
afterEachTest(async () => {
  for (const bridge of [...open]) {
    open.delete(bridge);
    bridge.server.close();
    for (const serve of bridge.serves) serve.stdin.end();
    await Promise.all([...bridge.serves].map((serve) => serve.exited.catch(() => undefined)));
  }
});

/**
 * `agentkit-acp serve ARGS` run in this test process (`startCli`), for a client that starts its
 * agent as a process (AcpClient, `prompt --agent`): the agent command is a small node bridge
 * between its stdio and a unix socket, and each connection, that is each agent process the
 * client starts, gets a fresh in-process serve, as it would get a fresh serve process. A bridge
 * costs ~0.04 s of CPU, a serve process ~0.3 s. `env` is serve's environment (its model keys);
 * the bridge's own does not reach it. For tests of what serve says over ACP; what is about
 * serve's process (signals, exit codes, the orphan watchdog) spawns the bin.
 */
export async function serveBehindBridge(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<BridgedServe> {
  const socketPath = join(tempDir("agentkit-bridge-"), "serve.sock");
  const serves = new Set<LiveCli>();
  let starts = 0;
  let stderr = "";
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    starts++;
    const serve = startCli(["serve", ...args], { cwd: options.cwd, env: options.env ?? process.env });
    serves.add(serve);
    socket.pipe(serve.stdin); // the client's EOF ends serve's stdin
    serve.stdout.pipe(socket); // serve's return ends the socket, and so the bridge
    socket.on("error", () => serve.stdin.end()); // the bridge was killed
    void serve.exited.finally(() => {
      stderr += serve.stderr();
      serves.delete(serve);
    });
  });
  open.add({ server, serves });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(socketPath, resolve));
  const bridgeArgs = [bridgeScript, socketPath];
  return {
    command: process.execPath,
    args: bridgeArgs,
    line: [process.execPath, ...bridgeArgs].map((a) => `"${a}"`).join(" "),
    starts: () => starts,
    stderr: () => stderr + [...serves].map((s) => s.stderr()).join(""),
  };
}
