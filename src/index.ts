// agentkit-acp: the ACP toolkit for TypeScript. Subpaths: /loop /model /tools /store /agent /client /testing.
export * from "./core/index.js";
// Tracing on demand (docs/tracing.md): loads the OpenTelemetry SDK only when called and configured.
export { startTracing, tracingEnvConfig, type TracingHandle, type TracingOptions } from "./core/tracing-setup.js";
