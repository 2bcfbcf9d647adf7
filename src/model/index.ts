export * from "./types.js";
export * from "./spec.js";
export * from "./capabilities.js";
export * from "./create.js";
export * from "./demo.js";
export { toModelMessages, type ConvertOptions } from "./messages.js";
export { toModelError, type ErrorContext, type MappedError } from "./errors.js";
export { AiSdkModelAdapter, type AiSdkAdapterConfig, type RetryOptions } from "./ai-sdk-adapter.js";
export { routeSdkWarnings } from "./sdk-warnings.js";
