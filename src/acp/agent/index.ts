// Agent side of ACP: AcpIntegration (the shared observer), approvals, the headless runtime.
export * from "./approval.js";
export * from "./approval-memory.js";
export { AcpClientHandle } from "./client-handle.js";
export { UpdateMapper, approvalToolCall, toolResultUpdate } from "./mapping.js";
export { TEXT_ONLY, TurnGate, promptToItems } from "./input.js";
export type { AcceptedContent, BusyPolicy, TurnLease } from "./input.js";
export { AcpSessionHandle } from "./session.js";
export type { AcpSessionBinding } from "./session.js";
export { decideApproval, driveTurn, promptResponseFor } from "./turn.js";
export type { TurnDriver } from "./turn.js";
export { AcpInputPort, AcpIntegration, AcpIntegrationBuilder, AcpSessionRegistry, sessionNotFound } from "./integration.js";
export { AcpHeadlessRuntime, AcpHeadlessRuntimeBuilder } from "./runtime.js";
export type { AcpServedConnection } from "./runtime.js";
export type { AcpAgentFactory, AcpAgentFactoryContext, AcpAgentFactoryResult, AcpSessionAgent } from "./factory.js";
export { SUPPORTED_PROTOCOL_VERSION } from "./runtime-connection.js";
