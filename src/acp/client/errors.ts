import { AgentKitError } from "../../core/errors.js";

/** The agent process ended (crash, kill, or exit) while calls were pending or the client was in use. */
export class AgentExitedError extends AgentKitError {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  /** The last lines the agent wrote to stderr (always kept for error reports). */
  readonly stderrTail: string[];
  constructor(exitCode: number | null, signal: NodeJS.Signals | null, stderrTail: string[], detail?: string) {
    const how = signal ? `was killed by ${signal}` : `exited with code ${exitCode ?? "unknown"}`;
    const tail = stderrTail.length > 0 ? `\n--- last agent stderr lines ---\n${stderrTail.join("\n")}` : "";
    super("agent_exited", `the ACP agent process ${how}${detail ? ` (${detail})` : ""}${tail}`);
    this.name = "AgentExitedError";
    this.exitCode = exitCode;
    this.signal = signal;
    this.stderrTail = stderrTail;
  }
}

/** The agent could not be started at all (command not found, not executable …). */
export class AgentSpawnError extends AgentKitError {
  constructor(command: string, cause: unknown) {
    super("agent_spawn", `could not start the ACP agent "${command}": ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "AgentSpawnError";
  }
}

/** A method the agent did not advertise in its capabilities (or session state) was called. */
export class CapabilityError extends AgentKitError {
  /** The capability path that was missing, e.g. `sessionCapabilities.list`. */
  readonly capability: string;
  readonly method: string;
  constructor(method: string, capability: string, detail?: string) {
    super("capability", `the agent does not support ${method}: it did not advertise \`${capability}\`${detail ? ` (${detail})` : ""}`);
    this.name = "CapabilityError";
    this.capability = capability;
    this.method = method;
  }
}

/** The agent answered `initialize` with a protocol version this client does not speak. */
export class ProtocolVersionError extends AgentKitError {
  readonly agentVersion: number | null;
  readonly supported: number[];
  constructor(agentVersion: number | null, supported: number[], hint = "use an agent release that supports ACP v1") {
    super("protocol_version", `the agent speaks ACP protocol version ${agentVersion ?? "unknown"}, but this client supports only version ${supported.join(", ")}; ${hint}`);
    this.name = "ProtocolVersionError";
    this.agentVersion = agentVersion;
    this.supported = supported;
  }
}

/** A request took longer than its configured timeout (the request was cancelled on the wire). */
export class AcpTimeoutError extends AgentKitError {
  readonly method: string;
  readonly timeoutMs: number;
  constructor(method: string, timeoutMs: number) {
    super("timeout", `the agent did not answer ${method} within ${timeoutMs} ms`);
    this.name = "AcpTimeoutError";
    this.method = method;
    this.timeoutMs = timeoutMs;
  }
}

/** The agent requires authentication and none (or no usable method) was configured. */
export class AuthenticationRequiredError extends AgentKitError {
  readonly methods: { id: string; name: string; description?: string | null }[];
  constructor(methods: { id: string; name: string; description?: string | null }[], detail?: string) {
    const list = methods.map((m) => `"${m.id}" (${m.name})`).join(", ") || "none offered";
    super("auth_required", `the agent requires authentication${detail ? ` (${detail})` : ""}; offered methods: ${list}`);
    this.name = "AuthenticationRequiredError";
    this.methods = methods;
  }
}

/** The client (or session) was closed; the call cannot proceed. */
export class ClientClosedError extends AgentKitError {
  constructor(what = "the ACP client is closed") {
    super("closed", what);
    this.name = "ClientClosedError";
  }
}

/**
 * The permission policy's non-interactive fallback is `fail` and a question needed a human:
 * the turn was cancelled and the prompt rejects with this error.
 */
export class PermissionRequiredError extends AgentKitError {
  readonly toolCallId: string | undefined;
  constructor(title: string, toolCallId?: string) {
    super("permission_required", `a permission decision was needed for "${title}" but no interactive handler is available (fallback: fail)`);
    this.name = "PermissionRequiredError";
    this.toolCallId = toolCallId;
  }
}

/** The connection to a remote agent (`url`) failed or dropped: refused, 401, the instance died … */
export class AgentConnectionError extends AgentKitError {
  readonly url: string;
  constructor(url: string, detail: string) {
    super("agent_connection", `the connection to the ACP agent at ${url} ${detail}`);
    this.name = "AgentConnectionError";
    this.url = url;
  }
}

/**
 * The connection dropped while a prompt ran. ACP does not replay what was in flight, so the
 * turn's outcome is unknown here: the client reconnects and re-attaches the session (when it
 * can), and the caller decides whether to prompt again.
 */
export class TurnInterruptedError extends AgentKitError {
  readonly sessionId: string;
  constructor(sessionId: string, cause: Error) {
    super("turn_interrupted", `the turn was interrupted: ${cause.message}; the session is re-attached on reconnect, the turn's outcome is unknown`, { cause });
    this.name = "TurnInterruptedError";
    this.sessionId = sessionId;
  }
}
