export * from "./types.js";
export * from "./model-id.js";
export * from "./capabilities.js";
export * from "./create.js";
export * from "./demo.js";
export { toModelMessages, type ConvertOptions } from "./messages.js";
// The AI SDK adapter itself is loaded lazily by createModelAdapter (start-up time); its retry settings are an option of it.
export type { RetryOptions } from "./ai-sdk-adapter.js";
