// agentkit-acp: the ACP toolkit for TypeScript. Subpaths: /loop /model /tools /store /agent /client /testing.
export * from "./core/index.js";
