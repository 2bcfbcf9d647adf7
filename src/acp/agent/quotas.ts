import { RequestError } from "@agentclientprotocol/sdk/unstable";
import type { Logger } from "../../core/index.js";
import { errorMessage } from "../../core/index.js";
import type { QuotaSlotKind, QuotaStore, QuotaTake } from "../../store/index.js";
import { msUntilNextUtcDay } from "../../store/quotas.js";
import type { QuotaName, QuotaPolicy } from "./quota-limits.js";

export { QUOTA_NAMES, QuotaPolicy, parseQuotas, quotasFromClaim, type QuotaLimits, type QuotaName } from "./quota-limits.js";

/** `data.reason` of the JSON-RPC error for a request over one of the principal's quotas. */
export const QUOTA_EXCEEDED = "quota_exceeded";

/** -32600 with `data.reason: "quota_exceeded"`, the limit, its value and when to retry. */
export function quotaExceeded(principal: string, limit: QuotaName, value: number, retryAfterMs: number): RequestError {
  const seconds = Math.ceil(retryAfterMs / 1000);
  return new RequestError(-32600, `Invalid request: quota exceeded: ${limit} (${value}) for principal ${principal}; retry in ${seconds} s`, {
    reason: QUOTA_EXCEEDED,
    limit,
    value,
    retryAfterMs,
  });
}

/** Told of every refusal (audit, metrics). */
export type QuotaRefusalListener = (principal: string, limit: QuotaName, sessionId: string | undefined) => void;

/** Retry hints where the store cannot know when a slot frees: a turn ends in seconds, a session when its client closes it. */
const SLOT_RETRY_MS: Record<QuotaSlotKind, number> = { turns: 1_000, sessions: 10_000 };

/**
 * The quotas as the runtime asks them: before a session opens and before a prompt runs. A slot
 * taken is given back by the function returned; a refusal throws `quotaExceeded`. A store that
 * fails refuses nothing (logged): quotas protect fairness, not safety, and must not take the
 * service down with the database's hiccup.
 */
export class QuotaGate {
  readonly policy: QuotaPolicy;
  readonly #store: QuotaStore;
  readonly #logger: Logger;
  readonly #onRefusal: QuotaRefusalListener;
  readonly #pending = new Set<Promise<void>>();

  constructor(store: QuotaStore, policy: QuotaPolicy, logger: Logger, onRefusal: QuotaRefusalListener = () => undefined) {
    this.#store = store;
    this.policy = policy;
    this.#logger = logger;
    this.#onRefusal = onRefusal;
  }

  /** Takes a `sessions` slot for the session; resolves with its release. */
  async openSession(principal: string, sessionId: string): Promise<() => Promise<void>> {
    return this.#slot(principal, "sessions", sessionId, sessionId);
  }

  /**
   * Before a prompt runs: tokens of the day, then a `turns` slot, then the prompt rate (so a
   * refused prompt counts against nothing). Resolves with the turn's release.
   */
  async startTurn(principal: string, sessionId: string, turnId: string): Promise<() => Promise<void>> {
    const limits = this.policy.limitsFor(principal);
    const tokens = limits["tokens-per-day"];
    if (tokens !== undefined) {
      // This instance's counts of the turns before are in (a turn's tokens are written as they come).
      await Promise.all([...this.#pending]);
      const used = await this.#safely(() => this.#store.tokensToday(principal), 0);
      if (used >= tokens) this.#refuse(principal, "tokens-per-day", tokens, msUntilNextUtcDay(Date.now()), sessionId);
    }
    const release = await this.#slot(principal, "turns", turnId, sessionId);
    const rate = limits["prompts-per-minute"];
    if (rate !== undefined) {
      const taken = await this.#safely(() => this.#store.countPrompt(principal, rate), { ok: true } as QuotaTake);
      if (!taken.ok) {
        await release();
        this.#refuse(principal, "prompts-per-minute", rate, taken.retryAfterMs ?? 1_000, sessionId);
      }
    }
    return release;
  }

  /** Counts a model's tokens for the principal (asynchronously; `close` waits for them). */
  addTokens(principal: string, tokens: number): void {
    if (tokens <= 0 || this.policy.limitsFor(principal)["tokens-per-day"] === undefined) return;
    const write = this.#safely(() => this.#store.addTokens(principal, tokens), undefined).finally(() => this.#pending.delete(write));
    this.#pending.add(write);
  }

  async close(): Promise<void> {
    await Promise.all([...this.#pending]);
  }

  async #slot(principal: string, kind: QuotaSlotKind, id: string, sessionId: string): Promise<() => Promise<void>> {
    const limit = this.policy.limitsFor(principal)[kind];
    if (limit === undefined) return async () => {};
    const taken = await this.#safely(() => this.#store.acquireSlot(principal, kind, id, limit), undefined);
    if (taken === undefined) return async () => {};
    if (!taken.ok) this.#refuse(principal, kind, limit, taken.retryAfterMs ?? SLOT_RETRY_MS[kind], sessionId);
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      await this.#safely(() => this.#store.releaseSlot(principal, kind, id), undefined);
    };
  }

  #refuse(principal: string, limit: QuotaName, value: number, retryAfterMs: number, sessionId: string | undefined): never {
    this.#onRefusal(principal, limit, sessionId);
    throw quotaExceeded(principal, limit, value, retryAfterMs);
  }

  async #safely<T>(work: () => Promise<T>, fallback: T): Promise<T> {
    try {
      return await work();
    } catch (error) {
      this.#logger.warn("quota store failed; not enforcing this once", { error: errorMessage(error) });
      return fallback;
    }
  }
}
