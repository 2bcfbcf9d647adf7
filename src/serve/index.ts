// The reference agent (`agentkit-acp serve`): its system prompt, tools, model choice, store
// choice and defaults, built on the protocol adapter in acp/agent. Public as `agentkit-acp/serve`
// and, as before, through `agentkit-acp/agent`.
export { createServeRuntime, serveModels, SERVE_DEFAULTS } from "./runtime.js";
export type {
  ApproveMode,
  ClientMcpPolicy,
  ServeModelInputs,
  ServeModelResolver,
  ServeModels,
  ServeModelSource,
  ServeRuntime,
  ServeRuntimeOptions,
  ServeSessionServices,
  ServeState,
  ServeStateOptions,
} from "./runtime.js";
