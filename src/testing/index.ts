// Published fakes for tests and demos. Each area appends its export here.
export * from "./scripted-model.js";
export * from "./mock-providers.js";
export * from "./mcp-fixture-server.js";
export * from "./conformance/index.js";
export * from "./memory-pair.js";
