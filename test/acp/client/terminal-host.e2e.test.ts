import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { RequestError } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { createTerminalHost, type HostAccessRequest, type TerminalHost, type TerminalHostOptions } from "../../../src/acp/client/index.js";
import { OutputBuffer } from "../../../src/acp/client/terminal-output.js";
import { buildLayout, outputUntil, pidAlive, pidsIn, type Layout } from "./host-support.js";

let layout: Layout | undefined;
const hosts: TerminalHost[] = [];
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.dispose();
  layout?.cleanup();
  layout = undefined;
});

const never = new AbortController().signal;

function setup(options: TerminalHostOptions = {}) {
  layout ??= buildLayout();
  const l = layout;
  const host = createTerminalHost(options);
  hosts.push(host);
  const s1 = { sessionId: "s1", cwd: l.cwd, additionalDirectories: [l.extra] };
  const s2 = { sessionId: "s2", cwd: l.cwd, additionalDirectories: [] };
  const create = (command: string, extra: { args?: string[]; cwd?: string; env?: { name: string; value: string }[]; outputByteLimit?: number } = {}, session = s1) =>
    host.create({ sessionId: session.sessionId, command, ...extra }, session, never).then((r) => r.terminalId);
  const ids = (terminalId: string, session = s1) => ({ sessionId: session.sessionId, terminalId });
  return { l, host, s1, s2, create, ids };
}

async function refused(promise: Promise<unknown>, reason: string): Promise<RequestError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RequestError);
  expect(((error as RequestError).data as { reason?: string }).reason, (error as Error).message).toBe(reason);
  return error as RequestError;
}

describe("OutputBuffer", () => {
  it("keeps the most recent bytes, starting on a character boundary", () => {
    const b = new OutputBuffer(5);
    b.append(Buffer.from("ab€€", "utf8")); // 1 + 1 + 3 + 3 = 8 bytes
    expect(b.truncated).toBe(true);
    expect(b.text(false)).toBe("€"); // dropping 3 bytes cuts into the first €: skip to the next boundary
    const exact = new OutputBuffer(6);
    exact.append(Buffer.from("ab€€", "utf8"));
    expect(exact.text(false)).toBe("€€");
    const c = new OutputBuffer(100);
    c.append(Buffer.from("ok", "utf8"));
    expect(c.truncated).toBe(false);
  });

  it("holds back an incomplete character while running, across chunk boundaries", () => {
    const b = new OutputBuffer(100);
    const euro = Buffer.from("€", "utf8");
    b.append(Buffer.concat([Buffer.from("x"), euro.subarray(0, 1)]));
    expect(b.text(false)).toBe("x");
    b.append(euro.subarray(1));
    expect(b.text(false)).toBe("x€");
    b.append(Buffer.from([0xf0, 0x9d]));
    expect(b.text(false)).toBe("x€");
    expect(b.text(true)).toBe("x€\uFFFD");
  });

  it("many small chunks over the limit stay valid UTF-8", () => {
    const b = new OutputBuffer(10);
    const all = Buffer.from("é€𝄞".repeat(20), "utf8");
    for (const byte of all) b.append(Buffer.from([byte]));
    const text = b.text(false);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(10);
    expect(text).not.toContain("\uFFFD");
    expect("é€𝄞".repeat(20).endsWith(text)).toBe(true);
  });
});

describe("terminal host", () => {
  it("more output than outputByteLimit: truncated at the start on a UTF-8 boundary", async () => {
    const t = setup();
    const id = await t.create(process.execPath, { args: ["-e", "for (let i = 0; i < 200; i++) process.stdout.write('é€𝄞'.repeat(50) + '\\n')"], outputByteLimit: 4097 });
    expect(await t.host.waitForExit(t.ids(id), t.s1, never)).toEqual({ exitCode: 0, signal: null });
    const out = await t.host.output(t.ids(id), t.s1);
    expect(out.truncated).toBe(true);
    expect(Buffer.byteLength(out.output)).toBeLessThanOrEqual(4097);
    expect(Buffer.byteLength(out.output)).toBeGreaterThan(4097 - 4);
    expect(out.output).not.toContain("\uFFFD");
    const full = ("é€𝄞".repeat(50) + "\n").repeat(200);
    expect(full.endsWith(out.output)).toBe(true);
  });

  it("a command that never ends: kill → output readable with the signal → release → id invalid", async () => {
    const t = setup();
    const id = await t.create("echo pid=$$; exec sleep 300");
    const running = await outputUntil(t.host, t.s1, id, (o) => o.includes("pid="));
    expect(running.exitStatus).toBeUndefined();
    const pid = pidsIn(running.output)[0]!;
    await t.host.kill(t.ids(id), t.s1);
    expect(pidAlive(pid)).toBe(false);
    const after = await t.host.output(t.ids(id), t.s1);
    expect(after).toEqual({ output: `pid=${pid}\n`, truncated: false, exitStatus: { exitCode: null, signal: "SIGTERM" } });
    await t.host.kill(t.ids(id), t.s1); // again: harmless
    await t.host.release(t.ids(id), t.s1);
    await refused(t.host.output(t.ids(id), t.s1), "unknown_terminal");
    await refused(t.host.waitForExit(t.ids(id), t.s1, never), "unknown_terminal");
    await refused(t.host.release(t.ids(id), t.s1), "unknown_terminal");
  });

  it("a process that ignores SIGTERM is SIGKILLed after the grace period", async () => {
    const t = setup({ killGraceMs: 300 });
    const id = await t.create("trap '' TERM; echo pid=$$; while :; do sleep 1; done");
    const pid = pidsIn((await outputUntil(t.host, t.s1, id, (o) => o.includes("pid="))).output)[0]!;
    await t.host.kill(t.ids(id), t.s1);
    expect(pidAlive(pid)).toBe(false);
    expect((await t.host.output(t.ids(id), t.s1)).exitStatus).toEqual({ exitCode: null, signal: "SIGKILL" });
  });

  it("children in the group are all gone after kill, and after release", async () => {
    const t = setup();
    const line = "sleep 300 & echo pid=$!; sleep 300 & echo pid=$!; echo pid=$$; wait";
    for (const end of ["kill", "release"] as const) {
      const id = await t.create(line);
      const pids = pidsIn((await outputUntil(t.host, t.s1, id, (o) => pidsIn(o).length === 3)).output);
      expect(pids.every(pidAlive)).toBe(true);
      if (end === "kill") await t.host.kill(t.ids(id), t.s1);
      else await t.host.release(t.ids(id), t.s1);
      expect(pids.filter(pidAlive)).toEqual([]);
      if (end === "kill") await t.host.release(t.ids(id), t.s1);
    }
    expect(t.host.count()).toBe(0);
  });

  it("a background child left behind by a finished command is ended on release", async () => {
    const t = setup({ drainMs: 200 });
    const id = await t.create("sleep 300 & echo pid=$!");
    // The leader exits at once; the orphan keeps the pipe open, so exit is reported after the drain bound.
    expect(await t.host.waitForExit(t.ids(id), t.s1, never)).toEqual({ exitCode: 0, signal: null });
    const pid = pidsIn((await t.host.output(t.ids(id), t.s1)).output)[0]!;
    expect(pidAlive(pid)).toBe(true);
    await t.host.release(t.ids(id), t.s1);
    expect(pidAlive(pid)).toBe(false);
  });

  it("releaseSession ends every terminal of that session only; dispose ends the rest", async () => {
    const t = setup();
    const mine = [await t.create("echo pid=$$; exec sleep 300"), await t.create("sleep 300 & echo pid=$!; echo pid=$$; wait")];
    const other = await t.create("echo pid=$$; exec sleep 300", {}, t.s2);
    const minePids = (await Promise.all(mine.map((id) => outputUntil(t.host, t.s1, id, (o) => o.includes("pid="))))).flatMap((o) => pidsIn(o.output));
    const otherPid = pidsIn((await outputUntil(t.host, t.s2, other, (o) => o.includes("pid="))).output)[0]!;
    await outputUntil(t.host, t.s1, mine[1]!, (o) => pidsIn(o).length === 2);
    const allMine = pidsIn((await t.host.output(t.ids(mine[1]!), t.s1)).output).concat(minePids);
    await t.host.releaseSession("s1");
    expect(allMine.filter(pidAlive)).toEqual([]);
    for (const id of mine) await refused(t.host.output(t.ids(id), t.s1), "unknown_terminal");
    expect(pidAlive(otherPid)).toBe(true);
    expect(t.host.count()).toBe(1);
    await t.host.dispose();
    expect(pidAlive(otherPid)).toBe(false);
    await refused(t.create("true", {}, t.s2), "disposed");
  });

  it("terminals are scoped to their session", async () => {
    const t = setup();
    const id = await t.create("exec sleep 300");
    const e = await refused(t.host.output(t.ids(id, t.s2), t.s2), "unknown_terminal");
    expect(e.message).toContain("not a live terminal of this session");
    await refused(t.host.kill(t.ids(id, t.s2), t.s2), "unknown_terminal");
    await refused(t.host.release(t.ids(id, t.s2), t.s2), "unknown_terminal");
    expect(t.host.count("s1")).toBe(1);
    // A params.sessionId that does not match the session the client resolved is refused.
    await refused(t.host.output({ sessionId: "s2", terminalId: id }, t.s1), "invalid_argument");
  });

  it("caps on unreleased terminals per session and overall", async () => {
    const t = setup({ maxTerminalsPerSession: 2, maxTerminals: 3 });
    const a = await t.create("exec sleep 300");
    await t.create("true");
    const perSession = await refused(t.create("true"), "limit_reached");
    expect(perSession.message).toContain("2 terminals");
    await t.create("exec sleep 300", {}, t.s2);
    const s3 = { sessionId: "s3", cwd: t.l.cwd, additionalDirectories: [] };
    const overall = await refused(t.create("true", {}, s3), "limit_reached");
    expect(overall.message).toContain("3 terminals");
    await t.host.release(t.ids(a), t.s1);
    await t.create("true");
  });

  it("cwd: default session cwd; additional roots and trailing slashes ok; outside, missing, relative and symlinked-out refused", async () => {
    const t = setup();
    const pwd = async (cwd?: string) => {
      const id = await t.create("pwd", cwd === undefined ? {} : { cwd });
      await t.host.waitForExit(t.ids(id), t.s1, never);
      const out = (await t.host.output(t.ids(id), t.s1)).output;
      await t.host.release(t.ids(id), t.s1);
      return out.trim();
    };
    expect(await pwd()).toBe(t.l.cwd);
    expect(await pwd(`${t.l.cwd}/sub/`)).toBe(join(t.l.cwd, "sub"));
    expect(await pwd(t.l.extra)).toBe(t.l.extra);
    await refused(t.create("pwd", { cwd: t.l.outside }), "outside_roots");
    await refused(t.create("pwd", { cwd: t.l.evil }), "outside_roots");
    await refused(t.create("pwd", { cwd: join(t.l.cwd, "link-dir") }), "outside_roots");
    await refused(t.create("pwd", { cwd: join(t.l.cwd, "..") }), "outside_roots");
    await refused(t.create("pwd", { cwd: "sub" }), "not_absolute");
    await refused(t.create("pwd", { cwd: join(t.l.cwd, "missing") }), "not_a_directory");
    await refused(t.create("pwd", { cwd: join(t.l.cwd, "ok.txt") }), "not_a_directory");
    mkdirSync(join(t.l.outside, "d"));
    symlinkSync(join(t.l.outside, "d"), join(t.l.cwd, "d-link"));
    await refused(t.create("pwd", { cwd: join(t.l.cwd, "d-link") }), "outside_roots");
    expect(t.host.count()).toBe(0);
  });

  it("env is merged over the base environment; args run without a shell; a bare command line uses sh -c", async () => {
    const t = setup({ baseEnv: { PATH: process.env.PATH, BASE_ONLY: "base", OVERRIDE: "base" } });
    const run = async (command: string, extra: Parameters<typeof t.create>[1] = {}) => {
      const id = await t.create(command, extra);
      const status = await t.host.waitForExit(t.ids(id), t.s1, never);
      const out = (await t.host.output(t.ids(id), t.s1)).output;
      await t.host.release(t.ids(id), t.s1);
      return { status, out };
    };
    const env = await run('printf "%s %s %s %s" "$BASE_ONLY" "$OVERRIDE" "$NEW" "${HOME:-unset}"', {
      env: [
        { name: "OVERRIDE", value: "given" },
        { name: "NEW", value: "a=b c" },
      ],
    });
    expect(env.out).toBe("base given a=b c unset");
    const direct = await run("printf", { args: ["%s", "$HOME; echo injected"] });
    expect(direct.out).toBe("$HOME; echo injected");
    const shell = await run("echo one && echo two; exit 3");
    expect(shell).toEqual({ status: { exitCode: 3, signal: null }, out: "one\ntwo\n" });
    const missing = await run("definitely-not-a-program-xyz");
    expect(missing.status.exitCode).toBe(127);
    await refused(t.create("definitely-not-a-program-xyz", { args: ["x"] }), "spawn_failed");
    await refused(t.create("true", { env: [{ name: "A=B", value: "x" }] }), "invalid_argument");
    await refused(t.create(""), "invalid_argument");
    expect(t.host.count()).toBe(0);
  });

  it("waitForExit honours cancellation and a release while waiting; the terminal survives a cancelled wait", async () => {
    const t = setup();
    const id = await t.create("exec sleep 300");
    const abort = new AbortController();
    const waiting = t.host.waitForExit(t.ids(id), t.s1, abort.signal);
    abort.abort();
    expect(((await waiting.catch((e: unknown) => e)) as RequestError).code).toBe(-32800);
    expect((await t.host.output(t.ids(id), t.s1)).exitStatus).toBeUndefined();
    const second = refused(t.host.waitForExit(t.ids(id), t.s1, never), "unknown_terminal");
    await t.host.release(t.ids(id), t.s1);
    await second;
  });

  it("the authorize gate can deny commands by prefix; the observer sees verdicts", async () => {
    const seen: HostAccessRequest[] = [];
    const events: string[] = [];
    const t = setup({
      authorize: (r) => {
        seen.push(r);
        return r.kind === "terminal" && r.command.startsWith("rm") ? "deny" : "allow";
      },
      onRequest: (e) => events.push(`${e.kind}:${e.verdict}${e.reason ? `:${e.reason}` : ""}`),
    });
    const e = await refused(t.create("rm -rf ./sub"), "denied");
    expect(e.message).toContain("permission policy");
    const id = await t.create("true");
    await t.host.waitForExit(t.ids(id), t.s1, never);
    await t.host.release(t.ids(id), t.s1);
    expect(seen[0]).toMatchObject({ kind: "terminal", command: "rm -rf ./sub", args: [], cwd: t.l.cwd, sessionId: "s1" });
    expect(events).toEqual(["terminal_create:refused:denied", "terminal_create:allowed", "terminal_exit:allowed", "terminal_wait:allowed", "terminal_release:allowed"]);
  });

  it("outputByteLimit 0 keeps nothing but reports truncation; larger limits are clamped to the host maximum", async () => {
    const t = setup({ maxOutputByteLimit: 8 });
    const zero = await t.create("printf hello", { outputByteLimit: 0 });
    await t.host.waitForExit(t.ids(zero), t.s1, never);
    expect(await t.host.output(t.ids(zero), t.s1)).toMatchObject({ output: "", truncated: true });
    const clamped = await t.create("printf 0123456789abcdef", { outputByteLimit: 1_000_000 });
    await t.host.waitForExit(t.ids(clamped), t.s1, never);
    expect(await t.host.output(t.ids(clamped), t.s1)).toMatchObject({ output: "89abcdef", truncated: true });
  });
});
