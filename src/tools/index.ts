export * from "./types.js";
export * from "./define.js";
export * from "./registry.js";
