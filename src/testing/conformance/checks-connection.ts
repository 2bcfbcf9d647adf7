import { acp, jsonRpc } from "./spec-ref.js";
import type { ConformanceCheck } from "./types.js";

/** Connection-level checks: initialize, JSON-RPC handling, the stdio wire, process exit. */
export const connectionChecks: readonly ConformanceCheck[] = [
  {
    id: "init.gate",
    group: "initialize",
    severity: "info",
    title: "a request before initialize is refused with an error",
    spec: acp(
      "initialization",
      "Before a Session can be created, Clients **MUST** initialize the connection by calling the `initialize` method",
      "The rule binds the client: what an agent does with an early request is left open. The SDK's initialize gate answers -32600, which is the reference behaviour.",
    ),
    fix: "Optional: register an initialize handler with the SDK (it gates other requests), or refuse requests that arrive before initialize.",
  },
  {
    id: "init.version",
    group: "initialize",
    severity: "must",
    title: "initialize answers protocolVersion 1 to a v1 client",
    spec: acp("initialization#protocol-version-negotiation", "If the Agent supports the requested version, it **MUST** respond with the same version. Otherwise, the Agent **MUST** respond with the latest version it supports."),
    fix: "Answer initialize within the timeout with protocolVersion: 1 (acp.PROTOCOL_VERSION) when the client asks for 1.",
  },
  {
    id: "init.capabilities",
    group: "initialize",
    severity: "must",
    title: "initialize result is well-formed (agentCapabilities, authMethods, agentInfo)",
    spec: acp(
      "initialization",
      "The Agent **MUST** respond with the chosen [protocol version](#protocol-version) and the [capabilities](#agent-capabilities) it supports.",
      "Checked against the InitializeResponse schema: booleans for loadSession and the prompt/MCP flags, objects or null for sessionCapabilities entries, authMethods [{id, name}].",
    ),
    fix: "Return capability flags with the schema's types: booleans for loadSession/prompt/mcp flags, objects ({}) or null for sessionCapabilities entries.",
  },
  {
    id: "init.agent-info",
    group: "initialize",
    severity: "should",
    title: "initialize names the agent (agentInfo name and version)",
    spec: acp("initialization", "It **SHOULD** also provide a name and version to the Client as well"),
    fix: "Return agentInfo: {name, version} (and optionally title) from initialize; editors show it.",
  },
  {
    id: "rpc.unknown-method",
    group: "json-rpc",
    severity: "should",
    title: "an unknown method is answered with -32601",
    spec: acp("extensibility#custom-requests", "If the receiving end doesn't recognize the custom method name, it should respond with the standard \"Method not found\" error"),
    fix: "Answer requests you do not handle with RequestError.methodNotFound (the SDK does this when no handler or \"*\" fallback claims the method).",
  },
  {
    id: "rpc.invalid-params",
    group: "json-rpc",
    severity: "info",
    title: "a request with invalid params is answered with -32602",
    spec: jsonRpc(
      "error_object",
      "-32602 | Invalid params | Invalid method parameter(s).",
      "JSON-RPC 2.0 defines the code but does not oblige a server to use it; the SDK's schema validation answers -32602, the reference behaviour.",
    ),
    fix: "Validate params (the SDK's handlers do) and answer RequestError.invalidParams instead of an internal error.",
  },
  {
    id: "rpc.garbage-input",
    group: "json-rpc",
    severity: "info",
    title: "a line that is not JSON gets -32700 and the agent keeps serving",
    spec: acp(
      "transports#stdio",
      "The client **MUST NOT** write anything to the agent's `stdin` that is not a valid ACP message.",
      "The rule binds the client, so an agent's handling of a broken line is robustness, not conformance. JSON-RPC 2.0 defines -32700 Parse error; the SDK's ndJsonStream answers it and keeps reading.",
    ),
    fix: "Read stdin with the SDK's ndJsonStream (it answers -32700 and continues); never exit or throw on a malformed line.",
  },
  {
    id: "wire.stdout-json",
    group: "json-rpc",
    severity: "must",
    title: "stdout carries only JSON-RPC messages",
    spec: acp("transports#stdio", "The agent **MUST NOT** write anything to its `stdout` that is not a valid ACP message."),
    fix: "Send every log, banner and console.log to stderr (e.g. console.log = console.error); check dependencies that print to stdout.",
  },
  {
    id: "wire.update-schema",
    group: "json-rpc",
    severity: "must",
    title: "every session/update matches the v1 schema",
    spec: acp(
      "initialization#protocol-version",
      "Clients and Agents **MUST** agree on a protocol version and act according to its specification.",
      "Each session/update is validated with the SDK's v1 schema; SDK clients drop invalid ones. Custom data belongs in _meta: \"Implementations **MUST NOT** add any custom fields at the root of a type that's part of the specification.\" (extensibility)",
    ),
    fix: "Build updates from the SDK's types (acp.SessionUpdate); put custom data in _meta, never in new root fields or unknown kinds.",
  },
  {
    id: "exit.stdin-eof",
    group: "process",
    severity: "info",
    title: "the agent exits promptly when stdin closes",
    spec: acp(
      "transports#stdio",
      "Client->>Agent Process: Close stdin, terminate subprocess",
      "The stdio sequence shows the client closing stdin and then terminating the process; no sentence obliges the agent to exit by itself. Exiting on EOF spares clients the kill and is the reference behaviour.",
    ),
    fix: "After the SDK connection closes (await connection.closed), stop MCP servers and terminals and exit the process.",
  },
  {
    id: "exit.process-group",
    group: "process",
    severity: "info",
    title: "no process of the agent's group outlives it",
    spec: acp(
      "transports#stdio",
      "The client launches the agent as a subprocess.",
      "The spec says nothing about the agent's own children; orphans keep files and ports busy, so ending them with the agent is the reference behaviour.",
    ),
    fix: "Kill or await child processes (MCP servers, tool shells) before exiting; spawn long-lived helpers so they end with the agent.",
  },
];
