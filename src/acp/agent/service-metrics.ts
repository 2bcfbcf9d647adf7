import type { AnyMessage, Stream } from "@agentclientprotocol/sdk";
import type { LoopObserver, ObservedEvent } from "../../core/index.js";
import { observedWritable } from "./observed-writable.js";
import { PrincipalMetrics } from "./principal-metrics.js";

/** Upper bounds (seconds) of the prompt latency histogram: a turn takes from milliseconds to minutes. */
export const PROMPT_LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300] as const;

/** Gauges the metrics page reads when it is scraped. */
export interface ServiceGauges {
  openSessions: number;
  connections: number;
  ready: boolean;
}

/**
 * The counters of `serve --listen`'s `/metrics`: prompts (a tap on each connection's stream
 * sees `session/prompt` requests and their answers), model errors and tokens (a loop observer
 * every session's agent reports to). Rendered in the Prometheus text format.
 */
export class ServiceMetrics implements LoopObserver {
  /** Per-principal counters (bounded labels; see principal-metrics.ts). */
  readonly principals = new PrincipalMetrics();
  #activeTurns = 0;
  readonly #buckets = PROMPT_LATENCY_BUCKETS.map(() => 0);
  #latencyCount = 0;
  #latencySum = 0;
  readonly #prompts = new Map<string, number>();
  #modelErrors = 0;
  readonly #tokens = { input: 0, output: 0 };
  readonly #idleWaiters = new Set<() => void>();

  get activeTurns(): number {
    return this.#activeTurns;
  }

  /** Resolves true once no turn runs, or false after `timeoutMs`. */
  whenIdle(timeoutMs: number): Promise<boolean> {
    if (this.#activeTurns === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (idle: boolean): void => {
        clearTimeout(timer);
        this.#idleWaiters.delete(onIdle);
        resolve(idle);
      };
      const onIdle = (): void => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.#idleWaiters.add(onIdle);
    });
  }

  handleEvent({ event }: ObservedEvent): void {
    if (event.type === "usage") {
      this.#tokens.input += event.usage.inputTokens;
      this.#tokens.output += event.usage.outputTokens;
    } else if (event.type === "run_failed") {
      this.#modelErrors += 1;
    }
  }

  /** A turn began; the returned function ends it with how it ended (a stop reason or "error"). */
  promptStarted(): (outcome: string) => void {
    const started = performance.now();
    this.#activeTurns += 1;
    let done = false;
    return (outcome) => {
      if (done) return;
      done = true;
      this.#activeTurns -= 1;
      const seconds = (performance.now() - started) / 1000;
      this.#latencyCount += 1;
      this.#latencySum += seconds;
      PROMPT_LATENCY_BUCKETS.forEach((bound, i) => {
        if (seconds <= bound) this.#buckets[i] = (this.#buckets[i] ?? 0) + 1;
      });
      this.#prompts.set(outcome, (this.#prompts.get(outcome) ?? 0) + 1);
      if (this.#activeTurns === 0) for (const waiter of [...this.#idleWaiters]) waiter();
    };
  }

  /**
   * The same stream with `session/prompt` requests (client → agent) and their answers timed.
   * Turns still open when the stream ends (or `end()` is called, when the connection closes)
   * are counted as ended with "disconnected".
   */
  tap(stream: Stream, principal?: string): { stream: Stream; end: () => void } {
    const open = new Map<string, (outcome: string) => void>();
    // ACP v2: a prompt's answer only acknowledges it; the turn ends with the session's idle
    // state_update. Acknowledged turns wait here per session, in order.
    const sessionOf = new Map<string, string>();
    const acknowledged = new Map<string, Array<(outcome: string) => void>>();
    // An idle written before the acknowledgement of a prompt still open for the session (a turn
    // with no updates): it ends that turn once the acknowledgement passes.
    const earlyIdle = new Map<string, string[]>();
    const endAll = (): void => {
      for (const end of open.values()) end("disconnected");
      for (const ends of acknowledged.values()) for (const end of ends) end("disconnected");
      open.clear();
      acknowledged.clear();
      sessionOf.clear();
      earlyIdle.clear();
    };
    const inbound = new TransformStream<AnyMessage, AnyMessage>({
      transform: (message, controller) => {
        const m = message as { id?: unknown; method?: unknown; params?: { sessionId?: unknown } };
        if (m.method === "session/prompt" && (typeof m.id === "string" || typeof m.id === "number")) {
          open.set(String(m.id), this.promptStarted());
          if (principal !== undefined) this.principals.prompt(principal);
          if (typeof m.params?.sessionId === "string") sessionOf.set(String(m.id), m.params.sessionId);
        }
        controller.enqueue(message);
      },
      flush: endAll,
    });
    // A turn ends once its answer has been handed to the transport (not merely produced), so
    // a drain that waits for idle turns never closes a connection before the answer is out.
    const outbound = observedWritable(stream.writable, { ended: endAll, written: (message) => {
        const m = message as {
          id?: unknown;
          method?: unknown;
          result?: { stopReason?: unknown; messageId?: unknown };
          error?: unknown;
          params?: { sessionId?: unknown; update?: { sessionUpdate?: unknown; state?: unknown; stopReason?: unknown } };
        };
        if (m.method === undefined && (typeof m.id === "string" || typeof m.id === "number")) {
          const id = String(m.id);
          const end = open.get(id);
          const sessionId = sessionOf.get(id);
          open.delete(id);
          sessionOf.delete(id);
          if (end && m.error === undefined && typeof m.result?.messageId === "string" && sessionId !== undefined) {
            const early = earlyIdle.get(sessionId)?.shift();
            if (early !== undefined) end(early);
            else acknowledged.set(sessionId, [...(acknowledged.get(sessionId) ?? []), end]);
          } else if (end) {
            end(m.error !== undefined ? "error" : typeof m.result?.stopReason === "string" ? m.result.stopReason : "other");
          }
        } else if (m.method === "session/update" && m.params?.update?.sessionUpdate === "state_update" && m.params.update.state === "idle" && typeof m.params.sessionId === "string") {
          const sessionId = m.params.sessionId;
          const stop = typeof m.params.update.stopReason === "string" ? m.params.update.stopReason : "other";
          const ends = acknowledged.get(sessionId);
          const end = ends?.shift();
          if (ends?.length === 0) acknowledged.delete(sessionId);
          if (end) end(stop);
          else if ([...sessionOf.values()].includes(sessionId)) earlyIdle.set(sessionId, [...(earlyIdle.get(sessionId) ?? []), stop]);
        }
      },
    });
    return { stream: { readable: stream.readable.pipeThrough(inbound), writable: outbound }, end: endAll };
  }

  /** The Prometheus text exposition (version 0.0.4). */
  render(gauges: ServiceGauges): string {
    const lines: string[] = [];
    const metric = (name: string, type: string, help: string, samples: Array<[string, number]>): void => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, value] of samples) lines.push(`${name}${labels} ${value}`);
    };
    metric("agentkit_acp_up", "gauge", "1 while the store is reachable (see /readyz).", [["", gauges.ready ? 1 : 0]]);
    metric("agentkit_acp_connections", "gauge", "Open ACP connections (HTTP and WebSocket).", [["", gauges.connections]]);
    metric("agentkit_acp_open_sessions", "gauge", "Sessions open on this instance.", [["", gauges.openSessions]]);
    metric("agentkit_acp_active_turns", "gauge", "Prompts running now.", [["", this.#activeTurns]]);
    metric(
      "agentkit_acp_prompts_total",
      "counter",
      "Prompts answered, by stop reason (error: a JSON-RPC error; disconnected: the connection ended first).",
      [...this.#prompts].sort().map(([outcome, n]) => [`{outcome="${outcome}"}`, n]),
    );
    lines.push("# HELP agentkit_acp_prompt_duration_seconds Time from session/prompt to its answer.", "# TYPE agentkit_acp_prompt_duration_seconds histogram");
    PROMPT_LATENCY_BUCKETS.forEach((bound, i) => lines.push(`agentkit_acp_prompt_duration_seconds_bucket{le="${bound}"} ${this.#buckets[i] ?? 0}`));
    lines.push(
      `agentkit_acp_prompt_duration_seconds_bucket{le="+Inf"} ${this.#latencyCount}`,
      `agentkit_acp_prompt_duration_seconds_sum ${this.#latencySum}`,
      `agentkit_acp_prompt_duration_seconds_count ${this.#latencyCount}`,
    );
    metric("agentkit_acp_model_errors_total", "counter", "Model calls that failed (the turn ended with an error).", [["", this.#modelErrors]]);
    metric("agentkit_acp_tokens_total", "counter", "Tokens the models reported, by direction.", [
      ['{direction="input"}', this.#tokens.input],
      ['{direction="output"}', this.#tokens.output],
    ]);
    lines.push(...this.principals.render());
    return `${lines.join("\n")}\n`;
  }
}
