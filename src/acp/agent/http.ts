// `agentkit-acp/agent/http`: the runtime served over the SDK's HTTP and WebSocket transports.
// A separate entry point so that stdio agents never load the HTTP server and `ws`.
export { ACP_PATH, AcpHttpService, ListenError, type AcpHttpServiceOptions } from "./http-service.js";
export { DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_MESSAGE_BYTES } from "./limits.js";
export { PROMPT_LATENCY_BUCKETS, ServiceMetrics, type ServiceGauges } from "./service-metrics.js";
