import { afterEach, describe, expect, it } from "vitest";
import type { AcpSessionEvent, ClientLifecycleEvent } from "../../../src/acp/client/index.js";
import { AcpClient, AgentConnectionError, ClientPermissionPolicy, TurnInterruptedError } from "../../../src/acp/client/index.js";
import { startListening, type ListeningServe, TOKEN } from "../agent/http-support.js";
import { cleanEnv, writeScript } from "../agent/serve-support.js";
import { tempDir } from "../agent/support.js";
import { runCli } from "../../support/cli.js";
import { sandboxOrSkip } from "../../support/sandbox-engine.js";

const engine = await sandboxOrSkip("the remote client tests (serve --listen)");

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function workspace(): string {
  const dir = tempDir("agentkit-remote-");
  cleanups.push(() => dir.remove());
  return dir.path;
}

/** `startListening`, ended after the test; `process: true` where the test kills the instance. */
function listen(args: string[], cwd: string, options: { listen?: string; process?: true } = {}): ListeningServe {
  const proc = startListening(args, { cwd, ...options });
  cleanups.push(() => proc.kill());
  return proc;
}

async function client(url: string, cwd: string, extra: Partial<Parameters<typeof AcpClient.start>[0]> = {}): Promise<AcpClient> {
  const c = await AcpClient.start({ url, token: TOKEN, cwd, reconnect: { attempts: 40 }, ...extra }, ClientPermissionPolicy.preset("allow-all"));
  cleanups.push(() => c.close());
  return c;
}

function nextLifecycle(c: AcpClient, type: ClientLifecycleEvent["type"]): Promise<ClientLifecycleEvent> {
  return new Promise((resolve) => {
    const off = c.onLifecycle((event) => {
      if (event.type !== type) return;
      off();
      resolve(event);
    });
  });
}

describe.skipIf(!engine.available).each(["http", "ws"] as const)("AcpClient to a served agent over %s", (transport) => {
  it("a dropped connection: the running turn rejects as interrupted, the client reconnects, the session is re-attached with its history", async () => {
    const dir = workspace();
    const first = writeScript(dir, [{ text: "first answer" }, { hang: true, text: "working" }], "a.json");
    const a = listen(["--model", `scripted:${first}`], dir, { process: true });
    const url = (await a.url).replace(/^http/, transport);
    const port = new URL(url).port;
    const c = await client(url, dir);
    expect(c.pid).toBeUndefined();
    const session = await c.newSession();
    expect((await session.prompt("one")).stopReason).toBe("end_turn");

    const events: AcpSessionEvent[] = [];
    const stream = session.stream("two");
    const sawWorking = new Promise<void>((resolve) => {
      void (async () => {
        for await (const event of stream) {
          events.push(event);
          if (event.type === "message_chunk" && event.text === "working") resolve();
        }
      })();
    });
    await sawWorking;
    const exited = nextLifecycle(c, "agent_exited");
    const recovered = nextLifecycle(c, "recovered");
    await a.kill();
    const error = await stream.result.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TurnInterruptedError);
    expect((error as Error).message).toMatch(/the turn was interrupted/);
    expect(events.at(-1)).toMatchObject({ type: "error" });
    expect((await exited as { error: Error }).error).toBeInstanceOf(AgentConnectionError);

    // Another instance on the same address with the same state directory (a restart).
    const second = writeScript(dir, [{ echo: "transcript" }], "b.json");
    listen(["--model", `scripted:${second}`], dir, { listen: `127.0.0.1:${port}` });
    expect(await recovered).toMatchObject({ type: "recovered", sessions: [session.sessionId] });
    const result = await session.prompt("three");
    expect(result.stopReason).toBe("end_turn");
    // The reply lists what the model was sent: the history from before the drop is there.
    expect(result.text).toContain("first answer");
    expect(result.text).toContain("three");
  });
});

describe.skipIf(!engine.available)("prompt --agent URL", () => {
  it.each(["http", "ws"] as const)("runs a turn over %s with the token from AGENTKIT_ACP_TOKEN; a wrong token is a clear error (exit 1)", async (transport) => {
    const dir = workspace();
    const script = writeScript(dir, [{ text: "hello over the network" }]);
    const a = listen(["--model", `scripted:${script}`], dir);
    const url = (await a.url).replace(/^http/, transport);
    const run = (token: string) => runCli(["prompt", "--json", "--agent", url, "--cwd", dir, "hi"], { cwd: dir, env: cleanEnv({ AGENTKIT_ACP_TOKEN: token }) });
    const ok = await run(TOKEN);
    expect(ok.code).toBe(0);
    const last = JSON.parse(ok.stdout.trim().split("\n").at(-1) ?? "{}") as { type?: string; stopReason?: string; result?: { text?: string } };
    expect(last).toMatchObject({ type: "done", stopReason: "end_turn", result: { text: "hello over the network" } });
    const refused = await run("wrong");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`the connection to the ACP agent at ${url} failed: HTTP 401: the bearer token was refused`);
  });

  it("a turn interrupted by the instance's death: the error says so and, piped, names the session to continue with (exit 1)", async () => {
    const dir = workspace();
    const a = listen(["--model", `scripted:${writeScript(dir, [{ hang: true, text: "working" }])}`], dir, { process: true });
    const url = await a.url;
    let killed: Promise<void> | undefined;
    const run = await runCli(["prompt", "--agent", url, "--cwd", dir, "Fix the login bug"], {
      cwd: dir,
      env: cleanEnv({ AGENTKIT_ACP_TOKEN: TOKEN }),
      onStdout: (stdout) => void (stdout.includes("working") && (killed ??= a.kill())),
    });
    await killed;
    expect(run.code).toBe(1);
    const [error, session] = run.stderr.trim().split("\n").slice(-2);
    expect(error).toMatch(/^agentkit-acp prompt: the turn was interrupted: the connection to the ACP agent at \S+ failed: .*; what it did before is kept, its outcome is unknown: continue the session with --session \(below\)$/);
    expect(session).toMatch(/^session: (sess_\w+) \(continue with --session \1\)$/);
  });
});
