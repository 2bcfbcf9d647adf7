// Client side of ACP: spawn and drive any ACP agent.
export { AcpClient, type ClientLifecycleEvent, type SessionOptions } from "./client.js";
export {
  AcpSession,
  type AcpCancellationHandle,
  type PromptInput,
  type PromptOptions,
  type PromptStream,
  type SessionOwner,
} from "./session.js";
export type { AcpAgentConfig, AgentSandbox, AcpElicitationHandler, AcpUrlElicitation, AcpUrlElicitationHandler, AcpReconnectOptions, AcpRecoveryOptions, AcpTimeouts, StderrMode } from "./config.js";
export { AFFINITY_COOKIE, isAgentUrl } from "./remote-url.js";
export { describeCommand } from "./config.js";
export type { AcpInProcessMcpServer, SessionMcpServer } from "./mcp-over-acp.js";
export type {
  AcpSessionEvent,
  ContextUsage,
  DiffContent,
  PermissionAnswered,
  PermissionAsked,
  PromptResult,
  ToolCallState,
} from "./events.js";
export {
  AcpTimeoutError,
  AgentConnectionError,
  TurnInterruptedError,
  AgentExitedError,
  AgentSpawnError,
  AuthenticationRequiredError,
  CapabilityError,
  ClientClosedError,
  PermissionRequiredError,
  ProtocolVersionError,
} from "./errors.js";
export {
  ClientPermissionPolicy,
  type ClientPermissionPolicyOptions,
  type HostPermissionRequest,
  type HostPermissionResult,
  type HostRequestKind,
  type PermissionAction,
  type PermissionAnswer,
  type PermissionChoice,
  type PermissionHandler,
  type PermissionMemory,
  type PermissionPreset,
  type PermissionQuestion,
  type PermissionResolution,
  type ClientPermissionRule,
  type PermissionSubject,
} from "./permissions.js";
export type { FileSystemHostService, HostServices, HostSessionInfo, TerminalHostService } from "./host-services.js";
export { agentLaunch, agentPresets, type AgentPreset, type AgentSandboxNeeds } from "./presets.js";
export { SUPPORTED_PROTOCOL_VERSIONS } from "./link.js";
export * from "./fs-host.js";
export * from "./terminal-host.js";
export type { HostAccessRequest, HostAuditEvent, HostAuthorize, HostObserver, HostRefusalReason, HostRootsOption, HostVerdict } from "./host-common.js";
