/**
 * agentkit-acp: the Agent Client Protocol toolkit for TypeScript. The package root holds the
 * shared types and errors, cancellation, logging, the command sandbox, the platform contract
 * and tracing; the rest is in subpaths: `/loop`, `/model`, `/tools`, `/store`,
 * `/store/postgres`, `/agent`, `/agent/http`, `/client`, `/delegation`, `/testing`.
 *
 * @packageDocumentation
 */
export { newId, type ItemId, type PartId, type SessionId, type ToolCallId } from "./core/ids.js";
export { textOf, type FileDiff, type Item, type ItemRole, type LoopSnapshot, type Part, type ToolKind, type ToolLocation, type ToolResult, type Usage } from "./core/items.js";
export type {
  AgentEvent,
  Delta,
  FinishReason,
  LoopObserver,
  ObservedEvent,
  PartKind,
  ToolProgress,
  TranscriptEvent,
  TranscriptObserver,
  TurnResult,
} from "./core/events.js";
export { approve, approveWithPatchedInput, deny, type ApprovalDecision, type ApprovalRequest, type PermissionTarget } from "./core/approval.js";
export { CancellationController, CancelledError, isAbortError, type CancellationHandle } from "./core/cancellation.js";
export { AgentKitError, ConfigError, StateError, errorMessage } from "./core/errors.js";
export { createStderrLogger, silentLogger, type LogLevel, type Logger } from "./core/logger.js";
export { childEnvironment } from "./core/child-env.js";
export {
  CommandSandbox,
  SandboxUnavailableError,
  defaultSandboxLimits,
  sandboxModes,
  type SandboxDescription,
  type SandboxLimits,
  type SandboxMode,
  type SandboxOptions,
  type SandboxedCommand,
  type WrapOptions,
} from "./core/sandbox.js";
export { verifySandbox } from "./core/sandbox-probe.js";
export { PlatformFeatureError, SUPPORTED_PLATFORMS, platformLimits, platformTraits, type PlatformTraits } from "./core/process/platform.js";
export { enableOrphanWatchdog } from "./core/process/watchdog.js";
// Tracing on demand (docs/tracing.md): loads the OpenTelemetry SDK only when called and configured.
export { startTracing, tracingEnvConfig, type TracingHandle, type TracingOptions } from "./core/tracing-setup.js";
