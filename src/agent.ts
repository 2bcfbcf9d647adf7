// `agentkit-acp/agent`: the ACP protocol adapter (src/acp/agent) and the reference agent that
// `serve` runs (src/serve), which lives in its own layer above the adapter.
export * from "./acp/agent/index.js";
export * from "./serve/index.js";
