import { acp, ADVERTISED, jsonRpc } from "./spec-ref.js";
import type { ConformanceCheck } from "./types.js";

const MCP_RATING =
  "Supporting stdio is a MUST (\"All Agents **MUST** support connecting to MCP servers via stdio\"), but what the check can observe is whether this server was connected, which the spec asks with SHOULD: an agent may decline by policy (Gemini CLI connects no MCP server in a folder the user has not trusted).";

const UNADVERTISED =
  "The rule binds the client; an agent that accepts the block anyway is not wrong. Refusing it with an error (rather than dropping it silently) is the reference behaviour.";

function unadvertised(name: string, capability: string): ConformanceCheck {
  return {
    id: `prompt.${name}-refused`,
    group: "prompt",
    severity: "info",
    title: `how ${name === "image" || name === "audio" ? `an ${name}` : "an embedded resource"} block is handled when ${capability} is not advertised`,
    spec: acp("prompt-turn#1-user-message", "Clients **MUST** restrict types of content according to the [Prompt Capabilities](/protocol/v1/initialization#prompt-capabilities) established during [initialization](/protocol/v1/initialization).", UNADVERTISED),
    fix: "Optional: refuse content you did not advertise with RequestError.invalidParams, so the user learns it was not used.",
    prompts: true,
  };
}

function advertised(name: string, capability: string, definition: string): ConformanceCheck {
  return {
    id: `prompt.${name}`,
    group: "prompt",
    severity: "must",
    title: `${name === "embedded-context" ? "an embedded resource" : `an ${name}`} block is accepted (${capability} advertised)`,
    spec: acp("initialization#prompt-capabilities", definition, ADVERTISED),
    fix: `Either handle these blocks or stop advertising ${capability}.`,
    prompts: true,
  };
}

/** Session, prompt, cancellation, optional capability and MCP checks. */
export const sessionChecks: readonly ConformanceCheck[] = [
  {
    id: "session.new",
    group: "session",
    severity: "must",
    title: "session/new with an absolute cwd answers a session id",
    spec: acp("session-setup#creating-a-session", "The Agent **MUST** respond with a unique [Session ID](#session-id) that identifies this conversation"),
    fix: "Answer session/new with {sessionId} (a non-empty string).",
  },
  {
    id: "session.early-updates",
    group: "session",
    severity: "info",
    title: "no session/update for a session before its session/new answer",
    spec: acp(
      "session-setup#creating-a-session",
      "The Agent **MUST** respond with a unique [Session ID](#session-id) that identifies this conversation",
      "No sentence orders updates before the session/new response, but the client learns the session id from that response: earlier updates for it cannot be routed and are usually lost.",
    ),
    fix: "Send start-up updates (available_commands_update …) after the session/new response, e.g. from setImmediate after returning.",
  },
  {
    id: "session.relative-cwd",
    group: "session",
    severity: "info",
    title: "how session/new with a relative cwd is handled",
    spec: acp(
      "session-setup#working-directory",
      "**MUST** be an absolute path",
      "The rule binds the client, which sends the cwd; an agent that accepts a relative one is not wrong. Refusing it (instead of resolving it against the agent's own directory) is the reference behaviour.",
    ),
    fix: "Optional: refuse a relative cwd with RequestError.invalidParams instead of resolving it against the agent's own directory.",
  },
  {
    id: "session.unknown-id",
    group: "session",
    severity: "must",
    title: "a prompt for an unknown session id is refused with a JSON-RPC error",
    spec: jsonRpc(
      "response_object",
      "This member is REQUIRED on error.",
      "A session/prompt for a session the agent never created cannot be processed, so its response carries the JSON-RPC error member. The spec fixes no error code: any code passes (see session.unknown-id-code).",
    ),
    fix: "Answer a request for an unknown session with a JSON-RPC error (e.g. acp.RequestError.resourceNotFound) instead of a result.",
  },
  {
    id: "session.unknown-id-code",
    group: "session",
    severity: "info",
    title: "the error code for an unknown session id (the SDK uses -32002)",
    spec: acp(
      "schema#errorcode",
      "**Resource not found**: A given resource, such as a file, was not found.",
      "The schema defines -32002 but no sentence says to use it for an unknown session; the code is reported for information only.",
    ),
    fix: "Optional: use acp.RequestError.resourceNotFound(sessionId) (-32002), which clients can tell apart from internal errors.",
  },
  {
    id: "prompt.stop-reason",
    group: "prompt",
    severity: "must",
    title: "a text prompt ends with a v1 stop reason",
    spec: acp("prompt-turn#4-check-for-completion", "If there are no pending tool calls, the turn ends and the Agent **MUST** respond to the original `session/prompt` request with a `StopReason`"),
    fix: "Answer session/prompt with one of the v1 stop reasons; report failures as JSON-RPC errors, not invented stop reasons.",
    prompts: true,
  },
  {
    id: "prompt.update-order",
    group: "prompt",
    severity: "must",
    title: "every session/update of a turn arrives before the prompt response",
    spec: acp(
      "prompt-turn#cancellation",
      "The Agent **MAY** send `session/update` notifications with content or tool call updates after receiving the `session/cancel` notification, but it **MUST** ensure that it does so before responding to the `session/prompt` request.",
      "The response ends the turn (prompt-turn#4-check-for-completion); turn content after it cannot belong to the turn. Late session-level updates (commands, modes, usage) only warn.",
    ),
    fix: "Await every notify() of the turn (and flush queued updates) before returning the session/prompt result.",
    prompts: true,
  },
  {
    id: "prompt.resource-link",
    group: "prompt",
    severity: "must",
    title: "a resource_link block is accepted",
    spec: acp("initialization#prompt-capabilities", "As a baseline, all Agents **MUST** support `ContentBlock::Text` and `ContentBlock::ResourceLink` in `session/prompt` requests."),
    fix: "Accept resource_link blocks (e.g. read the file, or pass the link to the model as text).",
    prompts: true,
  },
  advertised("image", "promptCapabilities.image", "The prompt may include `ContentBlock::Image`"),
  unadvertised("image", "promptCapabilities.image"),
  advertised("audio", "promptCapabilities.audio", "The prompt may include `ContentBlock::Audio`"),
  unadvertised("audio", "promptCapabilities.audio"),
  advertised("embedded-context", "promptCapabilities.embeddedContext", "The prompt may include `ContentBlock::Resource`"),
  unadvertised("embedded-context", "promptCapabilities.embeddedContext"),
  {
    id: "cancel.turn",
    group: "cancel",
    severity: "must",
    title: "session/cancel during a turn ends it with stopReason cancelled",
    spec: acp("prompt-turn#cancellation", "After all ongoing operations have been successfully aborted and pending updates have been sent, the Agent **MUST** respond to the original `session/prompt` request with the `cancelled` [stop reason](#stop-reasons)."),
    fix: "On session/cancel abort the model call and tools, then answer the pending session/prompt with {stopReason: \"cancelled\"} (not an error).",
    prompts: true,
  },
  {
    id: "cancel.next-prompt",
    group: "cancel",
    severity: "must",
    title: "after a cancelled turn the next prompt in the session works",
    spec: acp(
      "initialization#session-capabilities",
      "As a baseline, all Agents **MUST** support `session/new`, `session/prompt`, `session/cancel`, and `session/update`.",
      "Cancelling ends the turn, not the session: a session that refuses prompts after a cancel no longer supports session/prompt.",
    ),
    fix: "Reset per-turn state (locks, abort controllers, pending tool calls) when a turn is cancelled.",
    prompts: true,
  },
  {
    id: "cancel.permission",
    group: "cancel",
    severity: "must",
    title: "session/cancel while a permission request is pending ends the turn cancelled",
    spec: acp(
      "prompt-turn#cancellation",
      "After all ongoing operations have been successfully aborted and pending updates have been sent, the Agent **MUST** respond to the original `session/prompt` request with the `cancelled` [stop reason](#stop-reasons).",
      "The check sends session/cancel while the agent waits on session/request_permission, then answers that request `cancelled`, as \"The Client **MUST** respond to all pending `session/request_permission` requests with the `cancelled` outcome.\" An agent that reads the answer as a rejection and carries on breaks the MUST.",
    ),
    fix: "Treat session/cancel (and a {outcome: \"cancelled\"} permission answer) as cancellation: skip the tool, stop the model and answer the prompt with stopReason cancelled.",
    prompts: true,
  },
  {
    id: "caps.load-session",
    group: "capabilities",
    severity: "must",
    title: "session/load replays the history before responding (loadSession advertised)",
    spec: acp("session-setup#loading-sessions", "When **all** the conversation entries have been streamed to the Client, the Agent **MUST** respond to the original `session/load` request."),
    fix: "In session/load, await every replayed update before returning; load sessions written by an earlier process.",
  },
  {
    id: "caps.session-list",
    group: "capabilities",
    severity: "must",
    title: "session/list answers well-formed sessions (sessionCapabilities.list advertised)",
    spec: acp(
      "session-list#listing-sessions",
      "The Agent **MUST** respond with a list of sessions and optional pagination metadata",
      "Entries are checked against the schema (sessionId, absolute cwd); the cwd filter is the parameter's definition: \"Only sessions with a matching `cwd` are returned.\"",
    ),
    fix: "Return {sessions: [{sessionId, cwd}]} with absolute cwds, filtered by the cwd param.",
  },
  {
    id: "caps.session-resume",
    group: "capabilities",
    severity: "must",
    title: "session/resume answers without replaying history (sessionCapabilities.resume advertised)",
    spec: acp("session-setup#resuming-sessions", "Unlike `session/load`, the Agent **MUST NOT** replay the conversation history via `session/update` notifications before responding."),
    fix: "Answer session/resume without sending the conversation as session/update notifications.",
  },
  {
    id: "caps.session-close",
    group: "capabilities",
    severity: "must",
    title: "session/close is answered (sessionCapabilities.close advertised)",
    spec: acp(
      "session-setup#closing-sessions",
      "On success, the Agent responds with an empty result object",
      `${ADVERTISED} Whether a later prompt for the closed session is refused is only reported: "Agents MAY return an error if the session does not exist or is not currently active."`,
    ),
    fix: "Answer session/close with {} after cancelling the session's work and freeing its resources.",
  },
  {
    id: "caps.session-delete",
    group: "capabilities",
    severity: "must",
    title: "session/delete removes the session from session/list (sessionCapabilities.delete advertised)",
    spec: acp("session-delete#semantics", "Deleted sessions no longer appear in future `session/list` results.", ADVERTISED),
    fix: "Remove the deleted session from storage so that session/list no longer returns it.",
  },
  {
    id: "caps.client-methods",
    group: "capabilities",
    severity: "must",
    title: "the agent calls only client methods the client advertised",
    spec: acp(
      "file-system#checking-support",
      "If `readTextFile` or `writeTextFile` is `false` or not present, the Agent **MUST NOT** attempt to call the corresponding filesystem method.",
      "Likewise for terminals: \"If `terminal` is `false` or not present, the Agent **MUST NOT** attempt to call any terminal methods.\"",
    ),
    fix: "Check clientCapabilities.fs / .terminal from initialize before calling fs/* or terminal/*; fall back to local operations.",
  },
  {
    id: "mcp.stdio",
    group: "mcp",
    severity: "should",
    title: "a stdio MCP server from session/new is started",
    spec: acp("session-setup#mcp-servers", "Agents **SHOULD** connect to all MCP servers specified by the Client.", MCP_RATING),
    fix: "Start the stdio MCP servers given in session/new (command, args, env) and connect to them as an MCP client.",
  },
  {
    id: "mcp.http",
    group: "mcp",
    severity: "should",
    title: "an HTTP MCP server from session/new is connected (mcpCapabilities.http advertised)",
    spec: acp("session-setup#mcp-servers", "Agents **SHOULD** connect to all MCP servers specified by the Client.", MCP_RATING),
    fix: "Connect to type \"http\" MCP servers (Streamable HTTP) or stop advertising mcpCapabilities.http.",
  },
  {
    id: "mcp.sse",
    group: "mcp",
    severity: "should",
    title: "an SSE MCP server from session/new is connected (mcpCapabilities.sse advertised)",
    spec: acp("session-setup#mcp-servers", "Agents **SHOULD** connect to all MCP servers specified by the Client.", MCP_RATING),
    fix: "Connect to type \"sse\" MCP servers or stop advertising mcpCapabilities.sse.",
  },
];
