// Client side of ACP: spawn and drive any ACP agent.
export {};
export type { FileSystemHostService, TerminalHostService, HostServices, HostSessionInfo } from "./host-services.js";
export * from "./fs-host.js";
export * from "./terminal-host.js";
export type { HostAccessRequest, HostAuditEvent, HostAuthorize, HostObserver, HostRefusalReason, HostRootsOption, HostVerdict } from "./host-common.js";
