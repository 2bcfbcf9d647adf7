// The Timing view's span timeline of one turn: bars by start and duration, nested by parent.
import { h, ms } from "./dom.js";
import { spanOp, type TurnSpans } from "./spans.js";
import type { TraceSpan } from "../types.js";

/** The attributes worth a glance in a bar's tooltip (all of them are in the row's details). */
const SUMMARY = ["gen_ai.request.model", "gen_ai.tool.name", "agentkit.permission.outcome", "agentkit.permission.wait_ms", "agentkit.stop_reason", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "error.type"];

function tooltip(span: TraceSpan): string {
  const parts = SUMMARY.filter((k) => span.attributes[k] !== undefined).map((k) => `${k}=${JSON.stringify(span.attributes[k])}`);
  return [`${span.name} (${span.service})`, ms(span.end - span.start), ...parts, ...(span.statusMessage ? [span.statusMessage] : [])].join(" · ");
}

/** CSP forbids style attributes; CSSOM custom properties are fine. */
function vars(el: HTMLElement, values: Record<string, string>): HTMLElement {
  for (const [k, v] of Object.entries(values)) el.style.setProperty(k, v);
  return el;
}

/**
 * One turn's spans. `sentBy` maps a span id to the message that span sent (its
 * `_meta.traceparent`): such a row links to the message. `open`: the rows whose details are shown.
 */
export function renderTurnSpans(t: TurnSpans, sentBy: Map<string, number>, jump: (seq: number) => void, open: Set<string>): HTMLElement {
  const total = Math.max(t.end - t.start, 0.001);
  const pct = (v: number): string => `${Math.min(100, Math.max(0, v)).toFixed(2)}%`;
  return h(
    "div",
    { class: "spans", "data-traces": t.traceIds.join(" ") },
    h("div", { class: "spans-head" }, `${t.rows.length + t.more} spans · ${ms(total)} · trace `, ...t.traceIds.map((id) => h("code", { class: "trace-id" }, id))),
    ...t.rows.map(({ span, depth }) => {
      const seq = sentBy.get(span.spanId);
      const bar = vars(h("span", { class: "span-bar", title: tooltip(span) }), { "--l": pct(((span.start - t.start) / total) * 100), "--w": pct(((span.end - span.start) / total) * 100) });
      const attributes = Object.entries(span.attributes).map(([k, v]) => `${k} = ${JSON.stringify(v)}`);
      return h(
        "details",
        {
          class: `span-row op-${spanOp(span)} ${span.status === 2 ? "span-error" : ""}`,
          "data-span": span.spanId,
          // Rows are rebuilt as spans arrive: an opened one stays open.
          open: open.has(span.spanId),
          ontoggle: (ev) => void ((ev.target as HTMLDetailsElement).open ? open.add(span.spanId) : open.delete(span.spanId)),
        },
        h(
          "summary",
          {},
          vars(h("span", { class: "span-name", title: span.service }, span.name), { "--depth": String(depth) }),
          h("span", { class: "span-track" }, bar),
          h("span", { class: "span-dur" }, ms(span.end - span.start)),
          seq !== undefined ? h("button", { class: "span-msg", title: "the message this span sent", onclick: (ev) => (ev.preventDefault(), jump(seq)) }, `#${seq}`) : h("span", {}),
        ),
        h("pre", { class: "span-attrs" }, [`service ${span.service} · span ${span.spanId}${span.parentSpanId ? ` · parent ${span.parentSpanId}` : ""}`, ...attributes, ...span.events.map((e) => `event ${e.name} +${ms(e.time - span.start)}`)].join("\n")),
      );
    }),
    t.more > 0 ? h("p", { class: "empty" }, `${t.more} more spans not drawn`) : null,
  );
}
