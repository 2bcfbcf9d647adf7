import { acpSchema, ADVERTISED } from "./spec-ref.js";
import type { ConformanceCheck } from "./types.js";

const UNSTABLE = "Unstable (schema.unstable.json): binds only an agent that advertises the capability. " + ADVERTISED;

/**
 * Checks of the unstable ACP v1 methods (schema.unstable.json of @agentclientprotocol/sdk 2.4),
 * each quoting the schema's description of the request it exercises. Each runs only when the
 * agent advertises the method; one not advertised is skipped and named.
 */
export const unstableChecks: readonly ConformanceCheck[] = [
  {
    id: "unstable.session-fork",
    group: "session",
    severity: "must",
    title: "session/fork (when advertised) answers a new session id; an unknown source gets an error",
    spec: acpSchema(
      "schema.unstable.json",
      "ForkSessionRequest",
      "Creates a new session based on the context of an existing one, allowing operations like generating summaries without affecting the original session's history.",
      `${UNSTABLE} The schema names no error code for an unknown source: any error passes, and one other than -32002 (the SDK's "Resource not found") is only mentioned.`,
    ),
    fix: "Answer session/fork with {sessionId} of a new session (not the source's) and an error for an unknown source (RequestError.resourceNotFound, -32002), or stop advertising sessionCapabilities.fork.",
  },
  {
    id: "unstable.session-set-title",
    group: "session",
    severity: "must",
    title: "session/set_title (when advertised) answers the stored title; an empty title gets -32602, an unknown session -32002",
    spec: acpSchema(
      "schema.unstable.json",
      "SetSessionTitleRequest",
      "A session that does not exist gets `-32002`. The Agent responds only after it has stored the title. … The Agent rejects a title that fails its validation, including one that is empty after normalization, with `-32602`.",
      UNSTABLE,
    ),
    fix: "Store the title and answer {title}; validate it (-32602) and answer -32002 for unknown ids, or stop advertising sessionCapabilities.title.",
  },
  {
    id: "unstable.session-status",
    group: "session",
    severity: "must",
    title: "session/status (when advertised) reports open for a live session and -32002 for an unknown one",
    spec: acpSchema(
      "schema.unstable.json",
      "SessionStatusRequest",
      "`session/status` MUST NOT have side effects. The Agent does not load, resume, create, close, or change the session, and does not attach the requesting connection to it. A session the Agent does not know gets `-32002` with the requested `sessionId` in `data`.",
    ),
    fix: "Answer {status: \"open\"} for sessions in memory, \"saved\" for stored ones, and -32002 (RequestError.sessionNotFound) otherwise.",
  },
  {
    id: "unstable.session-archive",
    group: "session",
    severity: "must",
    title: "session/archive (when advertised) hides the session from the default session/list; archived: \"only\" shows it; unarchive brings it back",
    spec: acpSchema(
      "schema.unstable.json",
      "ArchiveSessionRequest",
      "Archiving hides the session from default `session/list` results. It keeps the session ID and saved history. If the session is active, the Agent MUST cancel any ongoing work and free the session's resources as if `session/close` had been called, then archive it. Archiving an archived session succeeds. A session that does not exist gets `-32002`.",
    ),
    fix: "Keep an archived flag per session, filter session/list by the archived parameter (default exclude), and answer -32002 for unknown ids.",
  },
  {
    id: "unstable.auth-status",
    group: "initialize",
    severity: "must",
    title: "auth/status (when advertised) answers a state, never -32000, and the same state twice (no side effects)",
    spec: acpSchema(
      "schema.unstable.json",
      "AuthStatusRequest",
      "Queries the agent's current authentication state without changing it. Agents MUST NOT reject it with `auth_required` (`-32000`), since Clients call it to learn whether authentication is required.",
    ),
    fix: "Answer auth/status with {state} from what is configured, without checking credentials against a server and without -32000; or stop advertising auth.status.",
  },
  {
    id: "unstable.providers-list",
    group: "initialize",
    severity: "must",
    title: "providers/list (when advertised) lists providers with providerId, supported protocols and required",
    spec: acpSchema(
      "schema.unstable.json",
      "ListProvidersResponse",
      "providers: Configurable providers with current routing info suitable for UI display. (ProviderInfo: providerId, supported, required — \"Whether this provider is mandatory and cannot be disabled via `providers/disable`.\")",
      `${UNSTABLE} providers/set and providers/disable are checked by unstable.providers-set / -disable (with --change-state).`,
    ),
    fix: "Answer providers/list with {providers: [{providerId, supported, required, current}]}, or stop advertising providers.",
  },
  {
    id: "mcp.acp",
    group: "mcp",
    severity: "must",
    title: "an MCP server the client serves over the ACP connection (mcpCapabilities.acp advertised) is reached with valid mcp/message requests",
    spec: acpSchema(
      "schema.unstable.json",
      "McpServerAcp",
      "ACP transport configuration for MCP. The MCP server is provided by an ACP component and communicates over the ACP channel using `mcp/message`.",
      `${UNSTABLE} McpCapabilities.acp: "Agent supports \`acp\` MCP servers." The probe is an @modelcontextprotocol/server McpServer served through the SDK's McpOverAcpProvider; it counts a request the MCP SDK answered with a result.`,
    ),
    fix: "Call the server's tools through mcp/message (the SDK's McpOverAcpCaller adds the MCP 2026-07-28 metadata), or stop advertising mcpCapabilities.acp.",
  },
  {
    id: "rpc.cancel-request",
    group: "json-rpc",
    severity: "info",
    title: "a session/new cancelled with $/cancel_request while an MCP server starts is still answered (a result or -32800) within the cancel bound",
    spec: acpSchema(
      "schema.json",
      "CancelRequestNotification",
      "Upon receiving this notification, the receiver: 1. MAY cancel the corresponding request activity and all nested activities 2. MAY send any pending notifications. 3. MUST send one of these responses for the original request: - Valid response with appropriate data (partial results or cancellation marker) - Error response with code `-32800` (Cancelled)",
      "The MUST is to answer the original request at all; the time bound is the check's own, and an agent may ignore `$/` notifications (\"If an agent or client receives notifications starting with '$/' it is free to ignore the notification.\"), so a late answer is reported, not counted against the agent.",
    ),
    fix: "Honour the handler's AbortSignal (the SDK aborts it on $/cancel_request): stop slow work such as MCP server start-up, free what was started, and throw the signal's reason (-32800).",
  },
];
