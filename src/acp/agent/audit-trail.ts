import type { Logger } from "../../core/index.js";
import { errorMessage } from "../../core/index.js";
import type { AuditLog, AuditRecord } from "../../store/index.js";

/** What a caller records; time and instance are added here. */
export type AuditEntry = Omit<AuditRecord, "at" | "instance" | "detail"> & { detail?: Record<string, unknown> };

/** Where the runtime reports who did what (see `AuditTrail`). */
export interface AcpAuditSink {
  record(entry: AuditEntry): void;
}

export interface AuditTrailOptions {
  log: AuditLog;
  instance: string;
  logger: Logger;
  /** Flush after this long (default 200 ms) … */
  flushMs?: number;
  /** … or once this many wait (default 256). */
  batch?: number;
  /** Most records held while the store is slow or away (default 10 000); past it the oldest are dropped, counted and logged. */
  maxQueued?: number;
}

/** Longest string kept in a record's fields (a client chooses session ids and sends messages). */
const MAX_FIELD = 256;

function clip(value: unknown): unknown {
  return typeof value === "string" && value.length > MAX_FIELD ? `${value.slice(0, MAX_FIELD)}…` : value;
}

/**
 * The audit trail off the hot path: `record` only queues (no I/O, no await); a timer writes a
 * batch (one store append) every `flushMs` or `batch` records, one write at a time. `close`
 * writes everything queued (a clean shutdown loses nothing); a crash loses what was queued —
 * at most `flushMs` of records plus a write in flight.
 */
export class AuditTrail implements AcpAuditSink {
  readonly #options: Required<Omit<AuditTrailOptions, "log" | "instance" | "logger">>;
  readonly #log: AuditLog;
  readonly #instance: string;
  readonly #logger: Logger;
  #queue: AuditRecord[] = [];
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> | undefined;
  #dropped = 0;

  constructor(options: AuditTrailOptions) {
    this.#log = options.log;
    this.#instance = options.instance;
    this.#logger = options.logger;
    this.#options = { flushMs: options.flushMs ?? 200, batch: options.batch ?? 256, maxQueued: options.maxQueued ?? 10_000 };
  }

  record(entry: AuditEntry): void {
    const detail: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(entry.detail ?? {})) if (value !== undefined) detail[key] = clip(value);
    const record: AuditRecord = {
      at: new Date().toISOString(),
      instance: this.#instance,
      principal: entry.principal,
      ...(entry.sessionId !== undefined ? { sessionId: clip(entry.sessionId) as string } : {}),
      action: entry.action,
      detail,
    };
    this.#queue.push(record);
    if (this.#queue.length > this.#options.maxQueued) {
      this.#queue.shift();
      if (this.#dropped++ === 0) this.#logger.warn(`audit records are being dropped: more than ${this.#options.maxQueued} wait for the store`);
    }
    if (this.#queue.length >= this.#options.batch) this.#flushSoon(0);
    else this.#flushSoon(this.#options.flushMs);
  }

  #flushSoon(ms: number): void {
    if (this.#timer !== undefined && ms > 0) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.flush();
    }, ms);
    this.#timer.unref();
  }

  /** Writes what is queued (after a write in progress); failures are logged and the batch kept for the next try. */
  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
    if (this.#queue.length === 0 && this.#dropped === 0) return;
    const batch = this.#queue;
    this.#queue = [];
    if (this.#dropped > 0) {
      batch.push({ at: new Date().toISOString(), instance: this.#instance, principal: "-", action: "audit_dropped", detail: { records: this.#dropped } });
      this.#dropped = 0;
    }
    this.#writing = this.#log.append(batch).then(
      () => undefined,
      (error: unknown) => {
        this.#logger.warn("audit records not written; retrying with the next batch", { records: batch.length, error: errorMessage(error) });
        this.#queue = [...batch, ...this.#queue].slice(-this.#options.maxQueued);
        this.#flushSoon(1_000);
      },
    );
    try {
      await this.#writing;
    } finally {
      this.#writing = undefined;
    }
  }

  /** Writes everything queued (bounded by `timeoutMs`); the timer stops. */
  async close(timeoutMs = 5_000): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const deadline = Date.now() + timeoutMs;
    while ((this.#queue.length > 0 || this.#writing) && Date.now() < deadline) {
      await Promise.race([this.flush(), new Promise((resolve) => setTimeout(resolve, Math.max(1, deadline - Date.now())).unref())]);
    }
    clearTimeout(this.#timer);
    if (this.#queue.length > 0) this.#logger.warn(`${this.#queue.length} audit records could not be written before exit`);
  }
}
