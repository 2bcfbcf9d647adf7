/**
 * Per-principal usage counters shared by every instance on one store (`serve --quota`): slots
 * (open sessions, running turns), a sliding minute of prompts, and tokens per UTC day. The
 * limits themselves are the caller's; the store only counts and answers atomically.
 */

/** What is held while it lasts: a session open on some instance, a turn running on one. */
export type QuotaSlotKind = "sessions" | "turns";

/** The outcome of taking something: refused with what is in use and, when known, when to retry. */
export type QuotaTake = { ok: true } | { ok: false; used: number; retryAfterMs?: number };

/** The window of the prompt-rate quota. */
export const PROMPT_WINDOW_MS = 60_000;

/**
 * How long a slot lasts without renewal by its holder (file and PostgreSQL stores): a crashed
 * instance's sessions and turns stop counting after this. Holders renew every third of it.
 */
export const QUOTA_SLOT_TTL_MS = 30_000;

/**
 * Per-principal quota counters shared by the instances of a store: open sessions and running prompts as slots held by
 * an instance (expiring if it dies), prompts per window and tokens per day as counts.
 */
export interface QuotaStore {
  /** This instance's name on the slots it holds. */
  readonly holder: string;
  /** Takes slot `id` of `kind` unless the principal holds `limit` others already (re-taking one it holds is fine). */
  acquireSlot(principal: string, kind: QuotaSlotKind, id: string, limit: number): Promise<QuotaTake>;
  releaseSlot(principal: string, kind: QuotaSlotKind, id: string): Promise<void>;
  /** Counts one prompt unless `limit` were counted in the last minute (then retry when the oldest leaves the window). */
  countPrompt(principal: string, limit: number): Promise<QuotaTake>;
  /** Model tokens counted for the principal on the current UTC day. */
  tokensToday(principal: string): Promise<number>;
  addTokens(principal: string, tokens: number): Promise<void>;
  /** Stops renewing; slots still held expire (or are released by the caller first). */
  close(): Promise<void>;
}

/** The current UTC day, `YYYY-MM-DD`. */
export function utcDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** Milliseconds until the next UTC midnight (when a per-day quota starts again). */
export function msUntilNextUtcDay(now: number): number {
  const next = new Date(now);
  next.setUTCHours(24, 0, 0, 0);
  return next.getTime() - now;
}

/** One principal's counters as the file and memory stores keep them. */
export interface PrincipalQuotaState {
  /** kind → slot id → holder and expiry (epoch ms). */
  slots: Partial<Record<QuotaSlotKind, Record<string, { holder: string; expiresAt: number }>>>;
  /** Times (epoch ms) of the prompts of the last minute. */
  prompts: number[];
  tokens: { day: string; used: number };
}

export function emptyQuotaState(): PrincipalQuotaState {
  return { slots: {}, prompts: [], tokens: { day: "", used: 0 } };
}

/** The state operations of the file and memory stores (one principal's state, changed under its lock). */
export const quotaState = {
  acquire(state: PrincipalQuotaState, kind: QuotaSlotKind, id: string, limit: number, holder: string, now: number, ttlMs: number): QuotaTake {
    const slots = (state.slots[kind] ??= {});
    for (const [other, slot] of Object.entries(slots)) if (slot.expiresAt <= now) delete slots[other];
    const used = Object.keys(slots).filter((other) => other !== id).length;
    if (used >= limit) return { ok: false, used };
    slots[id] = { holder, expiresAt: now + ttlMs };
    return { ok: true };
  },
  release(state: PrincipalQuotaState, kind: QuotaSlotKind, id: string): void {
    delete state.slots[kind]?.[id];
  },
  renew(state: PrincipalQuotaState, holder: string, now: number, ttlMs: number): number {
    let held = 0;
    for (const slots of Object.values(state.slots)) {
      for (const slot of Object.values(slots)) {
        if (slot.holder !== holder) continue;
        slot.expiresAt = now + ttlMs;
        held++;
      }
    }
    return held;
  },
  countPrompt(state: PrincipalQuotaState, limit: number, now: number): QuotaTake {
    state.prompts = state.prompts.filter((at) => at > now - PROMPT_WINDOW_MS);
    if (state.prompts.length >= limit) return { ok: false, used: state.prompts.length, retryAfterMs: Math.max(1, state.prompts[0]! + PROMPT_WINDOW_MS - now) };
    state.prompts.push(now);
    return { ok: true };
  },
  tokensToday(state: PrincipalQuotaState, now: number): number {
    return state.tokens.day === utcDay(now) ? state.tokens.used : 0;
  },
  addTokens(state: PrincipalQuotaState, tokens: number, now: number): void {
    const day = utcDay(now);
    state.tokens = { day, used: (state.tokens.day === day ? state.tokens.used : 0) + tokens };
  },
};

/** Quotas of one process (`--no-persist`, tests): no expiry needed, nothing outlives the process. */
export class InMemoryQuotaStore implements QuotaStore {
  readonly holder = "memory";
  readonly #states = new Map<string, PrincipalQuotaState>();
  readonly #clock: () => number;

  constructor(options: { clock?: () => number } = {}) {
    this.#clock = options.clock ?? Date.now;
  }

  #state(principal: string): PrincipalQuotaState {
    let state = this.#states.get(principal);
    if (!state) this.#states.set(principal, (state = emptyQuotaState()));
    return state;
  }

  async acquireSlot(principal: string, kind: QuotaSlotKind, id: string, limit: number): Promise<QuotaTake> {
    return quotaState.acquire(this.#state(principal), kind, id, limit, this.holder, this.#clock(), Number.POSITIVE_INFINITY);
  }

  async releaseSlot(principal: string, kind: QuotaSlotKind, id: string): Promise<void> {
    quotaState.release(this.#state(principal), kind, id);
  }

  async countPrompt(principal: string, limit: number): Promise<QuotaTake> {
    return quotaState.countPrompt(this.#state(principal), limit, this.#clock());
  }

  async tokensToday(principal: string): Promise<number> {
    return quotaState.tokensToday(this.#state(principal), this.#clock());
  }

  async addTokens(principal: string, tokens: number): Promise<void> {
    quotaState.addTokens(this.#state(principal), tokens, this.#clock());
  }

  async close(): Promise<void> {}
}
