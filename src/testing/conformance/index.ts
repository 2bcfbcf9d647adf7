// ACP v1 conformance suite: run it against any agent command line (`agentkit-acp check`).
export { runConformance } from "./runner.js";
export { conformanceChecks } from "./catalog.js";
export { formatConformanceMarkdown, formatConformanceReport, verdictOf, type FormatOptions } from "./report.js";
export { DEFAULT_CHECK_TIMEOUT_MS, DEFAULT_PROMPTS } from "./run.js";
export type {
  AgentLaunch,
  CheckGroup,
  CheckResult,
  CheckSeverity,
  CheckStatus,
  CheckVerdict,
  ConformanceCheck,
  ConformanceOptions,
  ConformancePrompts,
  ConformanceReport,
  ConformanceSummary,
  SpecReference,
} from "./types.js";
