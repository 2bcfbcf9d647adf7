// The process seam: launching, process groups and ending trees, the /proc reader, the orphan
// watchdog, and what each platform allows. Everything that spawns or signals goes through here.
export * from "./platform.js";
export * from "./proc.js";
export * from "./launch.js";
export * from "./group.js";
export { enableOrphanWatchdog, fenceGroupsWithin } from "./watchdog.js";
