import { connectionChecks } from "./checks-connection.js";
import { sessionChecks } from "./checks-session.js";
import { unstableChecks } from "./checks-unstable.js";
import { unstableStateChecks } from "./checks-unstable-state.js";
import type { CheckGroup, ConformanceCheck } from "./types.js";

/** Report order of the groups; a check list added for a new area slots in by its group. */
const GROUP_ORDER: readonly CheckGroup[] = ["initialize", "json-rpc", "session", "prompt", "cancel", "capabilities", "mcp", "process"];

/**
 * Every check of the conformance suite, grouped in report order. Each check quotes the sentence
 * of the ACP v1 docs (docs/protocol/v1/*.mdx of the spec repository), of the v1 JSON schema (the
 * unstable methods, which have no docs page yet) or of JSON-RPC 2.0 it enforces, and its level follows that sentence (see `CheckSeverity`). To add checks: a new
 * `checks-*.ts` list (concatenated here) and a step that records them (called from runner.ts).
 */
export const conformanceChecks: readonly ConformanceCheck[] = [...connectionChecks, ...sessionChecks, ...unstableChecks, ...unstableStateChecks]
  .map((check, index) => ({ check, index }))
  .sort((a, b) => GROUP_ORDER.indexOf(a.check.group) - GROUP_ORDER.indexOf(b.check.group) || a.index - b.index)
  .map(({ check }) => check);
