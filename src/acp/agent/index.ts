// Agent side of ACP: AcpIntegration, approval resolvers, the headless runtime.
export {};
