import type {
  AgentCapabilities,
  AgentNotificationHandlersByMethod,
  AgentNotificationMethod,
  AgentRequestHandlersByMethod,
  AgentRequestMethod,
  ClientNotificationMethod,
  ClientRequestMethod,
} from "@agentclientprotocol/sdk/unstable";
import { methods as m } from "@agentclientprotocol/sdk/unstable";
import type * as V2 from "@agentclientprotocol/sdk/experimental/v2/unstable";

/**
 * The one table of ACP methods an agent serves (v1, through the SDK's `/unstable` entrypoint).
 * Each method is declared here once; the rest is derived from it:
 * - the agent registers a method exactly when its handler group gives a handler
 *   (`registerAgentMethods`), and `initialize` advertises the capability of each registered
 *   method (`advertisedCapabilities`): what is advertised is what is served;
 * - the client checks the same capability before sending it (`requireCapability` in acp/client);
 * - both v2 bridges forward the `same`-shape methods from this table and must give a handler for
 *   each `converted` one (a missing one fails the type check; acp/v2/bridge-methods.ts); a v2
 *   method reached from no v1 method fails the type check below.
 *
 * Fields: `capability` — the path in `AgentCapabilities` that advertises it (none: always served
 * or advertised otherwise); `unstable` — only in the SDK's `/unstable` schema; `group` — which
 * part of the agent runtime handles it (connection: runtime-connection.ts; account:
 * account-methods.ts; lifecycle: lifecycle.ts; stored: stored-sessions.ts); `v2` — the v2 draft's
 * method and whether its shapes are the same (forwarded as they are) or converted by each bridge;
 * null: v2 has no such method.
 */
export const AGENT_METHODS = [
  { method: m.agent.initialize, kind: "request", unstable: false, group: "connection", v2: { method: "initialize", shape: "converted" } },
  { method: m.agent.authenticate, kind: "request", unstable: false, group: "account", v2: { method: "auth/login", shape: "same" } },
  { method: m.agent.logout, kind: "request", capability: "auth.logout", unstable: true, group: "account", v2: { method: "auth/logout", shape: "same" } },
  { method: m.agent.auth.status, kind: "request", capability: "auth.status", unstable: true, group: "account", v2: { method: "auth/status", shape: "same" } },
  { method: m.agent.providers.list, kind: "request", capability: "providers", unstable: true, group: "account", v2: { method: "providers/list", shape: "same" } },
  { method: m.agent.providers.set, kind: "request", capability: "providers", unstable: true, group: "account", v2: { method: "providers/set", shape: "same" } },
  { method: m.agent.providers.disable, kind: "request", capability: "providers", unstable: true, group: "account", v2: { method: "providers/disable", shape: "same" } },
  { method: m.agent.session.new, kind: "request", unstable: false, group: "connection", v2: { method: "session/new", shape: "converted" } },
  { method: m.agent.session.load, kind: "request", capability: "loadSession", unstable: false, group: "lifecycle", v2: { method: "session/resume", shape: "converted" } },
  { method: m.agent.session.resume, kind: "request", capability: "sessionCapabilities.resume", unstable: false, group: "lifecycle", v2: { method: "session/resume", shape: "converted" } },
  { method: m.agent.session.list, kind: "request", capability: "sessionCapabilities.list", unstable: false, group: "stored", v2: { method: "session/list", shape: "converted" } },
  { method: m.agent.session.delete, kind: "request", capability: "sessionCapabilities.delete", unstable: false, group: "stored", v2: { method: "session/delete", shape: "converted" } },
  { method: m.agent.session.fork, kind: "request", capability: "sessionCapabilities.fork", unstable: true, group: "stored", v2: { method: "session/fork", shape: "converted" } },
  { method: m.agent.session.setTitle, kind: "request", capability: "sessionCapabilities.title", unstable: true, group: "stored", v2: { method: "session/set_title", shape: "same" } },
  { method: m.agent.session.status, kind: "request", capability: "sessionCapabilities.status", unstable: true, group: "stored", v2: { method: "session/status", shape: "converted" } },
  { method: m.agent.session.archive, kind: "request", capability: "sessionCapabilities.archive", unstable: true, group: "stored", v2: { method: "session/archive", shape: "converted" } },
  { method: m.agent.session.unarchive, kind: "request", capability: "sessionCapabilities.archive", unstable: true, group: "stored", v2: { method: "session/unarchive", shape: "same" } },
  { method: m.agent.session.close, kind: "request", capability: "sessionCapabilities.close", unstable: false, group: "connection", v2: { method: "session/close", shape: "converted" } },
  { method: m.agent.session.setMode, kind: "request", unstable: false, group: "lifecycle", v2: null },
  { method: m.agent.session.setConfigOption, kind: "request", unstable: false, group: "lifecycle", v2: { method: "session/set_config_option", shape: "converted" } },
  { method: m.agent.session.prompt, kind: "request", unstable: false, group: "connection", v2: { method: "session/prompt", shape: "converted" } },
  { method: m.agent.session.cancel, kind: "notification", unstable: false, group: "connection", v2: { method: "session/cancel", shape: "converted" } },
  { method: m.agent.mcp.message, kind: "notification", capability: "mcpCapabilities.acp", unstable: true, group: "connection", v2: { method: "mcp/message", shape: "same" } },
] as const satisfies readonly AgentMethodSpec[];

/**
 * The methods an agent calls on its client, with their v2 shapes (the bridges forward the `same`
 * ones and give a handler for each `converted` one). fs/* and terminal/* have no v2 counterpart:
 * v2 agents run their own tools. Their client capabilities are checked by the agent's
 * `AcpClientHandle`.
 */
export const CLIENT_METHODS = [
  { method: m.client.session.update, kind: "notification", unstable: false, v2: { method: "session/update", shape: "converted" } },
  { method: m.client.session.requestPermission, kind: "request", unstable: false, v2: { method: "session/request_permission", shape: "converted" } },
  { method: m.client.fs.readTextFile, kind: "request", unstable: false, v2: null },
  { method: m.client.fs.writeTextFile, kind: "request", unstable: false, v2: null },
  { method: m.client.terminal.create, kind: "request", unstable: false, v2: null },
  { method: m.client.terminal.output, kind: "request", unstable: false, v2: null },
  { method: m.client.terminal.release, kind: "request", unstable: false, v2: null },
  { method: m.client.terminal.waitForExit, kind: "request", unstable: false, v2: null },
  { method: m.client.terminal.kill, kind: "request", unstable: false, v2: null },
  { method: m.client.mcp.message, kind: "request", unstable: true, v2: { method: "mcp/message", shape: "same" } },
  { method: m.client.elicitation.create, kind: "request", unstable: true, v2: { method: "elicitation/create", shape: "converted" } },
  { method: m.client.elicitation.complete, kind: "notification", unstable: true, v2: { method: "elicitation/complete", shape: "same" } },
  { method: m.client.auth.statusUpdate, kind: "notification", unstable: true, v2: { method: "auth/status_update", shape: "same" } },
] as const satisfies readonly ClientMethodSpec[];

/** v2 agent methods no v1 method stands for (the runtime has no cancellable tool calls or terminals of its own). */
export const V2_ONLY_AGENT_METHODS = ["tool_call/cancel", "terminal/cancel"] as const satisfies readonly V2AgentMethod[];

/** Where a capability sits in `AgentCapabilities`; `loadSession` and `mcpCapabilities.acp` are booleans, the rest objects. */
export type CapabilityPath =
  | "loadSession"
  | "mcpCapabilities.acp"
  | "providers"
  | "auth.logout"
  | "auth.status"
  | `sessionCapabilities.${"resume" | "list" | "delete" | "close" | "fork" | "title" | "status" | "archive"}`;

export type HandlerGroup = "connection" | "account" | "lifecycle" | "stored";

type V2AgentMethod = V2.AgentRequestMethod | V2.AgentNotificationMethod;

export interface AgentMethodSpec {
  method: AgentRequestMethod | AgentNotificationMethod;
  kind: "request" | "notification";
  capability?: CapabilityPath;
  unstable: boolean;
  group: HandlerGroup;
  v2: { method: V2AgentMethod; shape: "same" | "converted" } | null;
}

export interface ClientMethodSpec {
  method: ClientRequestMethod | ClientNotificationMethod;
  kind: "request" | "notification";
  unstable: boolean;
  v2: { method: V2.ClientRequestMethod | V2.ClientNotificationMethod; shape: "same" | "converted" } | null;
}

export type AgentMethodEntry = (typeof AGENT_METHODS)[number];
export type ClientMethodEntry = (typeof CLIENT_METHODS)[number];
export type AgentMethod = AgentMethodEntry["method"];

// Every method the SDK's v1 agent can serve is in the table (a new SDK method fails the type check here).
type Unlisted = Exclude<AgentRequestMethod | AgentNotificationMethod, AgentMethod>;
const everyV1MethodListed: [Unlisted] extends [never] ? true : Unlisted = true;
type UnlistedClient = Exclude<ClientRequestMethod | ClientNotificationMethod, ClientMethodEntry["method"]>;
const everyClientMethodListed: [UnlistedClient] extends [never] ? true : UnlistedClient = true;
// …and every v2 method is reached from a v1 one, or said to be v2-only.
type Unreached = Exclude<V2AgentMethod, NonNullable<AgentMethodEntry["v2"]>["method"] | (typeof V2_ONLY_AGENT_METHODS)[number]>;
const everyV2MethodReached: [Unreached] extends [never] ? true : Unreached = true;
type UnreachedClient = Exclude<V2.ClientRequestMethod | V2.ClientNotificationMethod, NonNullable<ClientMethodEntry["v2"]>["method"]>;
const everyV2ClientMethodReached: [UnreachedClient] extends [never] ? true : UnreachedClient = true;
void [everyV1MethodListed, everyClientMethodListed, everyV2MethodReached, everyV2ClientMethodReached];

/** The handler the SDK's agent app takes for `M`. */
export type AgentHandler<M extends AgentMethod> = M extends AgentRequestMethod
  ? AgentRequestHandlersByMethod[M]
  : M extends AgentNotificationMethod
    ? AgentNotificationHandlersByMethod[M]
    : never;

/** The handlers one group may give: only for its own methods (another group's fails the type check). */
export type GroupHandlers<G extends HandlerGroup> = { [M in Extract<AgentMethodEntry, { group: G }>["method"]]?: AgentHandler<M> };

export type AgentHandlerGroups = { [G in HandlerGroup]: GroupHandlers<G> };

/** The part of the SDK's AgentApp the registration uses (so a traced app passes too). */
interface RegisteringApp {
  onRequest(method: string, handler: (context: never) => unknown): unknown;
  onNotification(method: string, handler: (context: never) => unknown): unknown;
}

/**
 * Registers, in table order, each method whose group gives a handler (a method without one
 * stays -32601). Returns the methods registered: `advertisedCapabilities` advertises exactly those.
 */
export function registerAgentMethods<A>(app: A, groups: AgentHandlerGroups): ReadonlySet<AgentMethod> {
  const target = app as unknown as RegisteringApp;
  const served = new Set<AgentMethod>();
  for (const entry of AGENT_METHODS) {
    const handler = (groups[entry.group] as Partial<Record<AgentMethod, (context: never) => unknown>>)[entry.method];
    if (!handler) continue;
    if (entry.kind === "request") target.onRequest(entry.method, handler);
    else target.onNotification(entry.method, handler);
    served.add(entry.method);
  }
  return served;
}

/** The capabilities of the served methods (`loadSession` false when not served); the caller adds the rest. */
export function advertisedCapabilities(served: ReadonlySet<AgentMethod>): AgentCapabilities & { loadSession: boolean } {
  const caps: Record<string, unknown> = { loadSession: false };
  for (const entry of AGENT_METHODS) {
    if (!("capability" in entry) || !served.has(entry.method)) continue;
    const path = entry.capability.split(".");
    const leaf = path.pop()!;
    let node = caps;
    for (const key of path) node = (node[key] ??= {}) as Record<string, unknown>;
    node[leaf] = entry.capability === "loadSession" || entry.capability === "mcpCapabilities.acp" ? true : {};
  }
  return caps as AgentCapabilities & { loadSession: boolean };
}

/** The capability that gates `method`, if any. */
export function capabilityOf(method: string): CapabilityPath | undefined {
  const entry = AGENT_METHODS.find((e) => e.method === method);
  return entry && "capability" in entry ? entry.capability : undefined;
}

/** Whether `caps` advertises `path` (`true` for the booleans, any value but null for the objects). */
export function hasCapability(caps: AgentCapabilities | undefined, path: CapabilityPath): boolean {
  let node: unknown = caps;
  for (const key of path.split(".")) node = node === null || typeof node !== "object" ? undefined : (node as Record<string, unknown>)[key];
  return path === "loadSession" || path === "mcpCapabilities.acp" ? node === true : node != null;
}
