export * from "./ids.js";
export * from "./items.js";
export * from "./events.js";
export * from "./approval.js";
export * from "./cancellation.js";
export * from "./errors.js";
export * from "./logger.js";
export * from "./process-group.js";
