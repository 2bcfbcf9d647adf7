import type { CheckResult, CheckSeverity, CheckStatus, CheckVerdict, ConformanceReport } from "./types.js";

/** Options of `formatConformanceReport`. */
export interface FormatOptions {
  /** ANSI colours (default false). */
  color?: boolean;
  /** Show the spec reference for passed checks too (default: only for fail/warn). */
  verbose?: boolean;
}

const SYMBOL: Record<CheckStatus, string> = { pass: "✓", fail: "✗", warn: "!", skip: "–" };
const COLOR: Record<CheckStatus, string> = { pass: "32", fail: "31", warn: "33", skip: "90" };
const LEVEL: Record<CheckSeverity, string> = { must: "MUST", should: "SHOULD", info: "info" };
const VERDICT: Record<CheckVerdict, string> = {
  ok: "ok",
  violation: "spec violation",
  recommendation: "recommendation not followed",
  informational: "informational",
  skipped: "skipped",
};

/** What a result means: a failed MUST is a violation, a failed SHOULD a recommendation, info findings and inconclusive results are informational. */
export function verdictOf(severity: CheckSeverity, status: CheckStatus): CheckVerdict {
  if (status === "pass") return "ok";
  if (status === "skip") return "skipped";
  if (status === "warn" || severity === "info") return "informational";
  return severity === "must" ? "violation" : "recommendation";
}

/** The human-readable report: checks grouped, each with ✓/✗/!/–, then violations, recommendations and informational findings listed apart. */
export function formatConformanceReport(report: ConformanceReport, options: FormatOptions = {}): string {
  const paint = (code: string, text: string): string => (options.color ? `\u001b[${code}m${text}\u001b[0m` : text);
  const out: string[] = [];
  const info = report.agent.info;
  out.push(paint("1", "ACP v1 conformance report (agentkit-acp check)"));
  out.push(`agent:  ${report.agent.command}`);
  if (info) out.push(`        ${info.name}${info.version ? ` ${info.version}` : ""}${report.agent.protocolVersion !== undefined ? `, protocolVersion ${JSON.stringify(report.agent.protocolVersion)}` : ""}`);
  out.push(`cwd:    ${report.cwd}`);
  // Agent-supplied text: control characters dropped. Reported, never a verdict.
  if (report.agent.sandbox) out.push(`sandbox: ${printable(report.agent.sandbox)} (as the agent reports it; informational)`);
  out.push(`mode:   ${report.skipPrompts ? "--skip-prompts (no prompt turns were run)" : "full (prompt turns were run; a model-backed agent spent tokens)"}`);
  out.push("levels: MUST = a failure is a spec violation; SHOULD = a failure is a recommendation not followed; info = the spec leaves it open (reported only)");
  const idWidth = Math.max(...report.results.map((r) => r.id.length), 10);
  let group = "";
  for (const result of report.results) {
    if (result.group !== group) {
      group = result.group;
      out.push("", paint("1", group));
    }
    out.push(`  ${paint(COLOR[result.status], SYMBOL[result.status])} ${result.id.padEnd(idWidth)}  ${LEVEL[result.severity].padEnd(6)}  ${result.title}`);
    out.push(...details(result, options.verbose === true).map((line) => paint("90", `      ${line}`)));
  }
  const { summary } = report;
  out.push("");
  const list = (ids: string[]): string => (ids.length > 0 ? ids.join(", ") : "none");
  out.push(`spec violations (failed MUST checks):          ${list(summary.violations)}`);
  out.push(`recommendations not followed (failed SHOULD):  ${list(summary.recommendations)}`);
  out.push(`informational (spec leaves it open, or inconclusive): ${list(summary.informational)}`);
  const counts = `${summary.pass} passed, ${summary.fail} failed, ${summary.warn} warning(s), ${summary.skip} skipped`;
  if (report.ok) out.push(paint("32", `CONFORMANT on every MUST check — ${counts}`));
  else out.push(paint("31", `NOT CONFORMANT — MUST check(s) failed: ${summary.violations.join(", ")} — ${counts}`));
  if (!report.ok && report.stderrTail.length > 0) {
    out.push("", "last lines of the agent's stderr:", ...report.stderrTail.slice(-10).map((l) => `  ${l}`));
  }
  return `${out.join("\n")}\n`;
}

/** Without C0/C1 control characters (no escape sequences from the agent reach the terminal). */
function printable(text: string): string {
  return [...text].filter((c) => (c.codePointAt(0) ?? 0) >= 0x20 && !((c.codePointAt(0) ?? 0) >= 0x7f && (c.codePointAt(0) ?? 0) <= 0x9f)).join("");
}

function details(result: CheckResult, verbose: boolean): string[] {
  if (result.status === "pass" || result.status === "skip") {
    const lines = [`${result.status === "skip" ? "skipped: " : ""}${result.detail}`];
    if (verbose) lines.push(`spec: ${result.spec.section} — ${result.spec.text}`);
    return lines;
  }
  return [
    `${VERDICT[result.verdict]}: ${result.detail}`,
    `spec:     "${result.spec.text}"`,
    `          ${result.spec.url}`,
    ...(result.spec.rating ? [`level:    ${result.spec.rating}`] : []),
    ...(result.fix ? [`fix:      ${result.fix}`] : []),
  ];
}

/** The report as a Markdown document (a table of every result), for publishing next to the JSON. */
export function formatConformanceMarkdown(report: ConformanceReport): string {
  const info = report.agent.info;
  const cell = (text: string): string => text.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
  const { summary } = report;
  const lines = [
    `# ACP v1 conformance report`,
    "",
    `- agent: \`${cell(report.agent.command)}\`${info ? ` (${cell(info.name)}${info.version ? ` ${cell(info.version)}` : ""})` : ""}`,
    `- mode: ${report.skipPrompts ? "`--skip-prompts` (no prompt turns)" : "full (prompt turns run)"}`,
    `- result: ${report.ok ? "**conformant on every MUST check**" : `**not conformant**: ${summary.violations.join(", ")}`} — ${summary.pass} passed, ${summary.fail} failed, ${summary.warn} warning(s), ${summary.skip} skipped`,
    `- spec violations (failed MUST): ${summary.violations.join(", ") || "none"}`,
    `- recommendations not followed (failed SHOULD): ${summary.recommendations.join(", ") || "none"}`,
    `- informational: ${summary.informational.join(", ") || "none"}`,
    "",
    "| check | level | result | meaning | observed | spec |",
    "|---|---|---|---|---|---|",
    ...report.results.map((r) => `| \`${r.id}\` | ${LEVEL[r.severity]} | ${SYMBOL[r.status]} ${r.status} | ${VERDICT[r.verdict]} | ${cell(r.detail)} | [${cell(r.spec.section)}](${r.spec.url}) |`),
    "",
  ];
  return lines.join("\n");
}
