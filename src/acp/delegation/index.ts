// Delegation: ACP agents as tools of our own loop (one process per call, or a persistent session).
export { AcpAgentTool, type AcpAgentLaunch, type AcpAgentToolInput, type AcpAgentToolOptions } from "./agent-tool.js";
export { AcpToolset, type AcpSpecialist, type AcpToolsetDefaults } from "./toolset.js";
export {
  acpClientApprovals,
  type DelegatedPermissionRequest,
  type OuterApprovalHandler,
  type OuterCall,
  type OuterPermissionChannel,
} from "./approvals.js";
export {
  DEFAULT_MAX_DELEGATION_DEPTH,
  DELEGATION_CHAIN_ENV,
  DELEGATION_DEPTH_ENV,
  delegationContextFrom,
  type DelegationContext,
} from "./guard.js";
export type { DelegatedToolCallSummary, DelegationReport } from "./report.js";
