/** Most distinct principal labels on /metrics; later principals are counted under `other`. */
export const MAX_PRINCIPAL_LABELS = 100;

/** The label for principals past the cap. */
export const OTHER_PRINCIPAL = "other";

/**
 * Per-principal counters of `/metrics`. Label cardinality is bounded: the token file's names
 * are labelled first (`reserve`), then any principal seen (JWT subjects) until 100 labels
 * exist; every later principal is counted as `other`. (`other` never names a principal: names
 * in a token file may not be `other`'s label unless reserved first.)
 */
export class PrincipalMetrics {
  readonly #labels = new Set<string>();
  readonly #max: number;
  readonly #prompts = new Map<string, number>();
  readonly #tokens = new Map<string, { input: number; output: number }>();
  readonly #refusals = new Map<string, number>();

  constructor(max = MAX_PRINCIPAL_LABELS) {
    this.#max = max;
  }

  /** Labels these principals (the token file's) before any other takes a place. */
  reserve(principals: Iterable<string>): void {
    for (const p of principals) if (this.#labels.size < this.#max) this.#labels.add(p);
  }

  label(principal: string): string {
    if (this.#labels.has(principal)) return principal;
    if (this.#labels.size < this.#max && principal !== OTHER_PRINCIPAL) {
      this.#labels.add(principal);
      return principal;
    }
    return OTHER_PRINCIPAL;
  }

  prompt(principal: string): void {
    const l = this.label(principal);
    this.#prompts.set(l, (this.#prompts.get(l) ?? 0) + 1);
  }

  tokens(principal: string, input: number, output: number): void {
    const l = this.label(principal);
    const t = this.#tokens.get(l) ?? { input: 0, output: 0 };
    this.#tokens.set(l, { input: t.input + input, output: t.output + output });
  }

  quotaRefused(principal: string, limit: string): void {
    const key = JSON.stringify([this.label(principal), limit]);
    this.#refusals.set(key, (this.#refusals.get(key) ?? 0) + 1);
  }

  /** Prometheus text lines (label values are principal names: `[A-Za-z0-9._@+-]`, nothing to escape). */
  render(): string[] {
    const lines: string[] = [];
    const esc = (v: string): string => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
    lines.push("# HELP agentkit_acp_principal_prompts_total Prompts received, by principal (at most 100 labels; the rest as other).", "# TYPE agentkit_acp_principal_prompts_total counter");
    for (const [p, n] of [...this.#prompts].sort()) lines.push(`agentkit_acp_principal_prompts_total{principal="${esc(p)}"} ${n}`);
    lines.push("# HELP agentkit_acp_principal_tokens_total Tokens the models reported, by principal and direction.", "# TYPE agentkit_acp_principal_tokens_total counter");
    for (const [p, t] of [...this.#tokens].sort()) {
      lines.push(`agentkit_acp_principal_tokens_total{principal="${esc(p)}",direction="input"} ${t.input}`, `agentkit_acp_principal_tokens_total{principal="${esc(p)}",direction="output"} ${t.output}`);
    }
    lines.push("# HELP agentkit_acp_quota_refusals_total Requests refused by a quota, by principal and limit.", "# TYPE agentkit_acp_quota_refusals_total counter");
    for (const [key, n] of [...this.#refusals].sort()) {
      const [p, limit] = JSON.parse(key) as [string, string];
      lines.push(`agentkit_acp_quota_refusals_total{principal="${esc(p)}",limit="${esc(limit)}"} ${n}`);
    }
    return lines;
  }
}
