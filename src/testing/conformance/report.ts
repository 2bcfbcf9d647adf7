import type { CheckResult, CheckStatus, ConformanceReport } from "./types.js";

export interface FormatOptions {
  /** ANSI colours (default false). */
  color?: boolean;
  /** Show the spec reference for passed checks too (default: only for fail/warn). */
  verbose?: boolean;
}

const SYMBOL: Record<CheckStatus, string> = { pass: "✓", fail: "✗", warn: "!", skip: "–" };
const COLOR: Record<CheckStatus, string> = { pass: "32", fail: "31", warn: "33", skip: "90" };

/** The human-readable report: checks grouped, each with ✓/✗/!/–, and for problems the spec and the fix. */
export function formatConformanceReport(report: ConformanceReport, options: FormatOptions = {}): string {
  const paint = (code: string, text: string): string => (options.color ? `\u001b[${code}m${text}\u001b[0m` : text);
  const out: string[] = [];
  const info = report.agent.info;
  out.push(paint("1", "ACP v1 conformance report (agentkit-acp check)"));
  out.push(`agent:  ${report.agent.command}`);
  if (info) out.push(`        ${info.name}${info.version ? ` ${info.version}` : ""}${report.agent.protocolVersion !== undefined ? `, protocolVersion ${JSON.stringify(report.agent.protocolVersion)}` : ""}`);
  out.push(`cwd:    ${report.cwd}`);
  out.push(`mode:   ${report.skipPrompts ? "--skip-prompts (no prompt turns were run)" : "full (prompt turns were run; a model-backed agent spent tokens)"}`);
  const idWidth = Math.max(...report.results.map((r) => r.id.length), 10);
  let group = "";
  for (const result of report.results) {
    if (result.group !== group) {
      group = result.group;
      out.push("", paint("1", group));
    }
    const severity = result.severity === "must" ? "MUST  " : result.severity === "should" ? "should" : "info  ";
    out.push(`  ${paint(COLOR[result.status], SYMBOL[result.status])} ${result.id.padEnd(idWidth)}  ${severity}  ${result.title}`);
    out.push(...details(result, options.verbose === true).map((line) => paint("90", `      ${line}`)));
  }
  const { summary } = report;
  out.push("");
  const counts = `${summary.pass} passed, ${summary.fail} failed, ${summary.warn} warning(s), ${summary.skip} skipped`;
  if (report.ok) out.push(paint("32", `CONFORMANT on every MUST check — ${counts}`));
  else out.push(paint("31", `NOT CONFORMANT — MUST check(s) failed: ${summary.mustFailures.join(", ")} — ${counts}`));
  if (!report.ok && report.stderrTail.length > 0) {
    out.push("", "last lines of the agent's stderr:", ...report.stderrTail.slice(-10).map((l) => `  ${l}`));
  }
  return `${out.join("\n")}\n`;
}

function details(result: CheckResult, verbose: boolean): string[] {
  if (result.status === "pass" || result.status === "skip") {
    const lines = [`${result.status === "skip" ? "skipped: " : ""}${result.detail}`];
    if (verbose) lines.push(`spec: ${result.spec.section} — ${result.spec.text}`);
    return lines;
  }
  return [`observed: ${result.detail}`, `spec:     ${result.spec.text}`, `          ${result.spec.url}`, ...(result.fix ? [`fix:      ${result.fix}`] : [])];
}
