import * as acp from "@agentclientprotocol/sdk";
import type { Run } from "./run.js";
import { describeOutcome, type CallOutcome, type WireAgent } from "./wire.js";

/**
 * A request before initialize (informational: the rule binds the client). An agent that dies
 * of it gets a fresh launch (so the other checks still run); whether that was the request's
 * fault or a launch that never worked is only known after initialize, so `crashed` is judged later.
 */
export async function checkInitGate(run: Run, agent: WireAgent): Promise<{ agent: WireAgent; crashed?: CallOutcome }> {
  if (!run.wants("init.gate")) return { agent };
  const outcome = await agent.call(acp.methods.agent.session.new, run.newSessionParams(), run.timeoutMs);
  if (outcome.kind === "error") run.pass("init.gate", `session/new before initialize was refused (${describeOutcome(outcome)}; the SDK's gate uses -32600)`);
  else if (outcome.kind === "result") run.fail("init.gate", `session/new before initialize was served (${describeOutcome(outcome)}); allowed, since the rule binds the client`);
  else if (outcome.kind === "timeout") run.fail("init.gate", `session/new before initialize: ${describeOutcome(outcome)}`);
  else return { agent: run.launch(), crashed: outcome };
  return { agent };
}

/** Records init.gate for an agent that ended on the early request, once initialize showed whether it can run at all. */
export function judgeGateCrash(run: Run, crashed: CallOutcome | undefined, initialized: boolean): void {
  if (crashed === undefined) return;
  if (initialized) run.fail("init.gate", `the agent ended on session/new before initialize (${describeOutcome(crashed)}); a fresh launch was used for the other checks`);
  else run.skip("init.gate", "the agent could not be started or initialized (see init.version)");
}

/** initialize → init.version and init.capabilities; true when the agent speaks v1. */
export async function checkInitialize(run: Run, agent: WireAgent): Promise<boolean> {
  const outcome = await run.initialize(agent);
  run.initAnswered = outcome.kind === "result" || outcome.kind === "error";
  if (outcome.kind !== "result" || typeof outcome.value !== "object" || outcome.value === null) {
    run.fail("init.version", `initialize: ${describeOutcome(outcome)}`);
    run.skip("init.capabilities", "initialize did not answer a result");
    run.skip("init.agent-info", "initialize did not answer a result");
    run.blocked = "initialize did not succeed (see init.version)";
    return false;
  }
  const result = outcome.value as Record<string, unknown>;
  run.init = result;
  const problems = capabilityProblems(result);
  if (problems.length === 0) run.pass("init.capabilities", describeCapabilities(run));
  else run.fail("init.capabilities", problems.join("; "));
  const info = result.agentInfo as { name?: unknown; version?: unknown } | null | undefined;
  if (typeof info?.name === "string" && typeof info.version === "string") run.pass("init.agent-info", `${info.name} ${info.version}`);
  else run.fail("init.agent-info", "initialize answered without agentInfo {name, version}");
  if (result.protocolVersion === acp.PROTOCOL_VERSION) {
    run.pass("init.version", `protocolVersion ${acp.PROTOCOL_VERSION}${agentName(result)}`);
    return true;
  }
  run.fail("init.version", `answered protocolVersion ${JSON.stringify(result.protocolVersion)} to a client that asked for ${acp.PROTOCOL_VERSION}; a v1 client has to disconnect`);
  run.blocked = "the agent does not speak ACP v1 (see init.version)";
  return false;
}

/** Unknown method → -32601; invalid params → -32602. */
export async function checkRpcErrors(run: Run, agent: WireAgent): Promise<void> {
  if (run.wants("rpc.unknown-method")) {
    const outcome = await agent.call("_agentkit_check/no_such_method", {}, run.timeoutMs);
    expectCode(run, "rpc.unknown-method", outcome, -32601, "the unknown method _agentkit_check/no_such_method");
  }
  if (run.wants("rpc.invalid-params")) {
    const outcome = await agent.call(acp.methods.agent.session.new, { mcpServers: "not-a-list" }, run.timeoutMs);
    expectCode(run, "rpc.invalid-params", outcome, -32602, "session/new without cwd and with mcpServers: \"not-a-list\"");
  }
}

/** Passes on error `code`; anything else fails (recorded as a warning for an info check). */
export function expectCode(run: Run, id: string, outcome: CallOutcome, code: number, what: string): void {
  if (outcome.kind === "error" && outcome.code === code) run.pass(id, `${what} was answered with ${code}`);
  else if (outcome.kind === "error") run.fail(id, `${what} got ${describeOutcome(outcome)}; expected ${code}`);
  else run.fail(id, `${what} got ${describeOutcome(outcome)}; expected error ${code}`);
}

function agentName(result: Record<string, unknown>): string {
  const info = result.agentInfo as { name?: unknown; version?: unknown } | undefined;
  return typeof info?.name === "string" ? ` (${info.name}${typeof info.version === "string" ? ` ${info.version}` : ""})` : "";
}

function describeCapabilities(run: Run): string {
  const on = [
    "loadSession",
    "promptCapabilities.image",
    "promptCapabilities.audio",
    "promptCapabilities.embeddedContext",
    "mcpCapabilities.http",
    "mcpCapabilities.sse",
    "sessionCapabilities.list",
    "sessionCapabilities.resume",
    "sessionCapabilities.close",
    "sessionCapabilities.delete",
  ].filter((path) => run.advertises(path));
  return on.length > 0 ? `advertises ${on.join(", ")}` : "advertises no optional capability";
}

/** Type problems in an initialize result (the SDK does not validate responses, so the client must). */
export function capabilityProblems(result: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const expect = (ok: boolean, message: string): void => void (ok || problems.push(message));
  const optional = (value: unknown, type: "boolean" | "object" | "string"): boolean =>
    value === undefined || value === null || (type === "object" ? typeof value === "object" && !Array.isArray(value) : typeof value === type);
  expect(Number.isInteger(result.protocolVersion), `protocolVersion must be an integer (got ${JSON.stringify(result.protocolVersion)})`);
  const caps = result.agentCapabilities;
  expect(optional(caps, "object"), "agentCapabilities must be an object");
  if (typeof caps === "object" && caps !== null) {
    const c = caps as Record<string, unknown>;
    expect(optional(c.loadSession, "boolean"), `agentCapabilities.loadSession must be a boolean (got ${JSON.stringify(c.loadSession)})`);
    for (const [group, keys] of [
      ["promptCapabilities", ["image", "audio", "embeddedContext"]],
      ["mcpCapabilities", ["http", "sse"]],
    ] as const) {
      const value = c[group];
      expect(optional(value, "object"), `agentCapabilities.${group} must be an object`);
      for (const key of keys) {
        const flag = (value as Record<string, unknown> | undefined)?.[key];
        expect(optional(flag, "boolean"), `agentCapabilities.${group}.${key} must be a boolean (got ${JSON.stringify(flag)})`);
      }
    }
    const session = c.sessionCapabilities;
    expect(optional(session, "object"), "agentCapabilities.sessionCapabilities must be an object");
    for (const key of ["list", "resume", "close", "delete", "additionalDirectories"]) {
      const value = (session as Record<string, unknown> | undefined)?.[key];
      expect(optional(value, "object"), `agentCapabilities.sessionCapabilities.${key} must be an object ({}) or null (got ${JSON.stringify(value)})`);
    }
  }
  const auth = result.authMethods;
  expect(auth === undefined || Array.isArray(auth), "authMethods must be an array");
  if (Array.isArray(auth)) {
    auth.forEach((m: unknown, i) => {
      const method = m as { id?: unknown; name?: unknown } | null;
      expect(typeof method?.id === "string" && typeof method.name === "string", `authMethods[${i}] needs string id and name`);
    });
  }
  const info = result.agentInfo as { name?: unknown; version?: unknown } | null | undefined;
  expect(info === undefined || info === null || (typeof info.name === "string" && typeof info.version === "string"), "agentInfo needs string name and version");
  return problems;
}
