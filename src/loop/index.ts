export * from "./types.js";
export { Agent, AgentBuilder, DEFAULT_MAX_TURNS } from "./agent.js";
export { LoopDriver } from "./driver.js";
export { ObserverHub } from "./observers.js";
