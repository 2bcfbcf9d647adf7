import * as acp from "@agentclientprotocol/sdk";
import { CLIENT_INFO, type Run } from "./run.js";
import { describeOutcome } from "./wire.js";

/**
 * On a fresh launch, initialize asking for protocol version 2 → init.v2-negotiation; when the
 * agent answers 2, v2.initialize (the v2 shape, and a v2 session/new). The request carries the v1
 * fields too, so a v1-only agent is judged on the version it answers, not on v2 params it cannot read.
 */
export async function checkProtocolV2(run: Run): Promise<void> {
  if (!run.wants("init.v2-negotiation") && !run.wants("v2.initialize")) return;
  const agent = run.launch();
  try {
    const outcome = await agent.call(
      acp.methods.agent.initialize,
      { protocolVersion: 2, info: CLIENT_INFO, capabilities: {}, clientInfo: CLIENT_INFO, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false } },
      run.timeoutMs,
    );
    if (outcome.kind !== "result" || typeof outcome.value !== "object" || outcome.value === null) {
      run.fail("init.v2-negotiation", `initialize asking for protocolVersion 2: ${describeOutcome(outcome)}; an agent that does not speak 2 answers its latest version (1)`);
      run.skip("v2.initialize", "initialize asking for protocolVersion 2 did not answer a result");
      return;
    }
    const result = outcome.value as Record<string, unknown>;
    const version = result.protocolVersion;
    if (version === 1) {
      run.pass("init.v2-negotiation", "answered protocolVersion 1: the agent speaks v1 only");
      run.skip("v2.initialize", "the agent answered protocol version 1 (no v2 offered)");
      return;
    }
    if (version !== 2) {
      run.fail("init.v2-negotiation", `answered protocolVersion ${JSON.stringify(version)} to a client that asked for 2 (expected 2, or 1 from a v1-only agent)`);
      run.skip("v2.initialize", "the agent did not answer protocol version 2");
      return;
    }
    run.pass("init.v2-negotiation", "answered protocolVersion 2: the agent speaks the v2 draft");
    if (!run.wants("v2.initialize")) return;
    const problems = v2InitializeProblems(result);
    if (problems.length > 0) {
      run.fail("v2.initialize", problems.join("; "));
      return;
    }
    const methodId = run.authMethod;
    if (methodId !== undefined) {
      const login = await agent.call("auth/login", { methodId }, run.timeoutMs);
      if (login.kind !== "result") {
        run.fail("v2.initialize", `auth/login {methodId: "${methodId}"}: ${describeOutcome(login)}`);
        return;
      }
    }
    const opened = await agent.call(acp.methods.agent.session.new, { cwd: run.cwd }, run.timeoutMs);
    const sessionId = opened.kind === "result" ? (opened.value as { sessionId?: unknown } | null)?.sessionId : undefined;
    if (typeof sessionId === "string" && sessionId.length > 0) run.pass("v2.initialize", `info ${describeInfo(result)}; session/new {cwd} answered a sessionId`);
    else run.fail("v2.initialize", `v2 session/new {cwd}: ${opened.kind === "result" ? `answered ${JSON.stringify(opened.value)} without a sessionId` : describeOutcome(opened)}`);
  } finally {
    await agent.kill(run.exitBoundMs);
  }
}

function v2InitializeProblems(result: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const info = result.info as { name?: unknown; version?: unknown } | null | undefined;
  if (typeof info?.name !== "string" || typeof info.version !== "string") problems.push("a v2 initialize result needs info {name, version} (agentInfo is v1)");
  const caps = result.capabilities;
  if (caps !== undefined && (typeof caps !== "object" || caps === null || Array.isArray(caps))) problems.push("capabilities must be an object");
  if ("agentCapabilities" in result) problems.push("agentCapabilities is the v1 field; v2 calls it capabilities");
  const auth = result.authMethods;
  if (auth !== undefined && !Array.isArray(auth)) problems.push("authMethods must be an array");
  if (Array.isArray(auth)) {
    auth.forEach((m: unknown, i) => {
      const method = m as { methodId?: unknown; name?: unknown } | null;
      if (typeof method?.methodId !== "string" || typeof method.name !== "string") problems.push(`authMethods[${i}] needs string methodId and name (v2)`);
    });
  }
  return problems;
}

function describeInfo(result: Record<string, unknown>): string {
  const info = result.info as { name: string; version: string };
  return `${info.name} ${info.version}`;
}
