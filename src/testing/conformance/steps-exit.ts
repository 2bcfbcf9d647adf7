import { proc } from "../../core/process/proc.js";
import type { Run } from "./run.js";
import { delay, describeExit, describeOutcome, truncate, within, type WireAgent } from "./wire.js";

/** A non-JSON line on stdin: the agent should answer -32700 and keep serving. Returns the agent to go on with. */
export async function checkGarbageInput(run: Run, agent: WireAgent): Promise<WireAgent> {
  if (!run.wants("rpc.garbage-input")) return agent;
  if (agent.exitInfo) {
    run.skip("rpc.garbage-input", `the agent had already ended (${describeExit(agent.exitInfo)})`);
    return agent;
  }
  const from = run.log.nextSeq;
  agent.writeRaw("this line is not JSON {\n");
  const ping = await agent.call("_agentkit_check/after_garbage", {}, run.timeoutMs);
  const parseError = run.log.entries.some((e) => e.seq >= from && e.dir === "in" && e.launch === agent.launch && e.message?.error?.code === -32700);
  if (ping.kind === "error" || ping.kind === "result") {
    if (parseError) run.pass("rpc.garbage-input", "answered -32700 and kept serving");
    else run.warn("rpc.garbage-input", "kept serving, but sent no -32700 Parse error for the malformed line");
    return agent;
  }
  run.fail("rpc.garbage-input", `after a malformed line the next request got ${describeOutcome(ping)}`);
  await agent.kill(run.exitBoundMs);
  // The exit checks need a live agent.
  return (await run.launchReady()) ?? run.launch();
}

/** Close stdin: the agent must exit within the bound and leave no process of its group behind. */
export async function checkExit(run: Run, agent: WireAgent): Promise<void> {
  if (!run.wantsAny("exit.stdin-eof", "exit.process-group")) return;
  if (agent.exitInfo) {
    run.skip("exit.stdin-eof", `the agent had already ended (${describeExit(agent.exitInfo)})`);
    run.skip("exit.process-group", "the agent had already ended");
    return;
  }
  const members = agent.groupMembers();
  const closedAt = Date.now();
  agent.endStdin();
  const exited = await within(agent.leaderExited, run.exitBoundMs);
  if (!exited) {
    run.fail("exit.stdin-eof", `still running ${run.exitBoundMs} ms after stdin was closed`);
    run.skip("exit.process-group", "the agent itself did not exit on stdin EOF (see exit.stdin-eof)");
    await agent.kill(run.exitBoundMs);
    return;
  }
  const exit = await agent.leaderExited;
  run.pass("exit.stdin-eof", `${describeExit(exit)} ${Date.now() - closedAt} ms after stdin was closed`);
  // Children get the same bound to wind down after the leader.
  const deadline = Date.now() + run.exitBoundMs;
  let left = agent.groupMembers();
  while (left.length > 0 && Date.now() < deadline) {
    await delay(50);
    left = agent.groupMembers();
  }
  if (left.length === 0) run.pass("exit.process-group", `no process left in its group (${members.length} while it ran)`);
  else run.fail("exit.process-group", `${left.length} process(es) of its group still run ${run.exitBoundMs} ms after it exited: ${left.map(describePid).join("; ")}`);
  await agent.kill(run.exitBoundMs);
}

/** Checks over everything seen on the wire during the run. */
export function checkWholeRun(run: Run): void {
  const noise = run.log.entries.filter((e) => e.dir === "in" && e.problem !== undefined);
  const lines = run.log.entries.filter((e) => e.dir === "in").length;
  if (noise.length === 0) run.pass("wire.stdout-json", `${lines} line(s) on stdout, all JSON-RPC 2.0`);
  else run.fail("wire.stdout-json", `${noise.length} of ${lines} stdout line(s) are not JSON-RPC: ${noise.slice(0, 3).map((e) => `${JSON.stringify(truncate(e.raw, 80))} (${e.problem})`).join("; ")}`);

  const sent = new Map<string, number>();
  for (const e of run.log.entries) {
    if (e.dir !== "in" || e.message?.method !== "session/update" || e.message.id !== undefined) continue;
    const update = e.message.params?.update as { sessionUpdate?: unknown } | undefined;
    const kind = typeof update?.sessionUpdate === "string" ? update.sessionUpdate : "(no sessionUpdate)";
    sent.set(kind, (sent.get(kind) ?? 0) + 1);
  }
  const accepted = new Map<string, number>();
  for (const agent of run.agents) for (const [kind, n] of agent.acceptedUpdates) accepted.set(kind, (accepted.get(kind) ?? 0) + n);
  const rejected = [...sent].filter(([kind, n]) => (accepted.get(kind) ?? 0) < n).map(([kind, n]) => `${n - (accepted.get(kind) ?? 0)} of ${n} ${kind}`);
  const total = [...sent.values()].reduce((a, b) => a + b, 0);
  if (rejected.length === 0) run.pass("wire.update-schema", `${total} session/update notification(s), all valid v1`);
  else run.fail("wire.update-schema", `rejected by the v1 schema (and dropped by SDK clients): ${rejected.join(", ")}`);

  const calls = run.agents.flatMap((a) => a.unexpectedCalls);
  if (calls.length === 0) run.pass("caps.client-methods", "no call to fs/*, terminal/* or other methods the client did not offer");
  else run.fail("caps.client-methods", `the agent called ${[...new Set(calls)].join(", ")} although the client did not advertise them (no fs, terminal or elicitation capability)`);
}

function describePid(pid: number): string {
  if (pid < 0) return "(unknown pids: the group still exists)";
  const cmdline = proc.commandLine(pid);
  return cmdline === undefined ? `pid ${pid}` : `pid ${pid} ${truncate(cmdline, 100)}`;
}
