import { mkdir, open, readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../core/index.js";
import { createStderrLogger, errorMessage } from "../core/index.js";
import { isErrnoCode, writeFileAtomic } from "./durable-fs.js";
import { fileLocks } from "./keyed-lock.js";
import { newLeaseHolderName } from "./leases.js";
import type { PrincipalQuotaState, QuotaSlotKind, QuotaStore, QuotaTake } from "./quotas.js";
import { QUOTA_SLOT_TTL_MS, emptyQuotaState, quotaState } from "./quotas.js";

/** A lock file older than this was left by a process that died holding it (the work under it takes milliseconds). */
const STALE_LOCK_MS = 10_000;
/** Bound on waiting for another process's lock. */
const LOCK_WAIT_MS = 5_000;

/**
 * Options of `FileQuotaStore`: the state directory (its counters file under a lock file), this instance's holder
 * name, how long an unrenewed slot counts, and the clock.
 */
export interface FileQuotaStoreOptions {
  stateDir: string;
  holder?: string;
  ttlMs?: number;
  clock?: () => number;
  logger?: Logger;
}

/**
 * Quotas in `<stateDir>/quotas/<principal>.json`, shared by every `serve` process on the state
 * directory: each change reads, changes and atomically rewrites the principal's file under a
 * lock file (`O_EXCL`; one left by a crashed process is taken over after 10 s) plus the
 * process's own per-path lock. Slots carry an expiry the holder renews every third of the ttl,
 * so a crashed process's sessions and turns stop counting within the ttl.
 */
export class FileQuotaStore implements QuotaStore {
  readonly holder: string;
  readonly dir: string;
  readonly #ttlMs: number;
  readonly #clock: () => number;
  readonly #logger: Logger;
  /** Principals this process holds slots of (renewed by the timer). */
  readonly #held = new Map<string, number>();
  readonly #timer: NodeJS.Timeout;

  constructor(options: FileQuotaStoreOptions) {
    this.dir = join(options.stateDir, "quotas");
    this.holder = options.holder ?? newLeaseHolderName();
    this.#ttlMs = options.ttlMs ?? QUOTA_SLOT_TTL_MS;
    this.#clock = options.clock ?? Date.now;
    this.#logger = options.logger ?? createStderrLogger();
    this.#timer = setInterval(() => void this.#renew(), Math.floor(this.#ttlMs / 3));
    this.#timer.unref();
  }

  async acquireSlot(principal: string, kind: QuotaSlotKind, id: string, limit: number): Promise<QuotaTake> {
    const taken = await this.#change(principal, (state, now) => quotaState.acquire(state, kind, id, limit, this.holder, now, this.#ttlMs));
    if (taken.ok) this.#held.set(principal, (this.#held.get(principal) ?? 0) + 1);
    return taken.ok ? taken : { ...taken, retryAfterMs: Math.floor(this.#ttlMs / 3) };
  }

  async releaseSlot(principal: string, kind: QuotaSlotKind, id: string): Promise<void> {
    await this.#change(principal, (state) => quotaState.release(state, kind, id));
    const left = (this.#held.get(principal) ?? 1) - 1;
    if (left > 0) this.#held.set(principal, left);
    else this.#held.delete(principal);
  }

  countPrompt(principal: string, limit: number): Promise<QuotaTake> {
    return this.#change(principal, (state, now) => quotaState.countPrompt(state, limit, now));
  }

  async tokensToday(principal: string): Promise<number> {
    return quotaState.tokensToday(await this.#read(principal), this.#clock());
  }

  async addTokens(principal: string, tokens: number): Promise<void> {
    await this.#change(principal, (state, now) => quotaState.addTokens(state, tokens, now));
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
  }

  async #renew(): Promise<void> {
    for (const principal of [...this.#held.keys()]) {
      await this.#change(principal, (state, now) => quotaState.renew(state, this.holder, now, this.#ttlMs)).catch((error: unknown) => {
        this.#logger.warn("quota slots not renewed", { principal, error: errorMessage(error) });
      });
    }
  }

  #path(principal: string): string {
    return join(this.dir, `${encodeURIComponent(principal)}.json`);
  }

  async #read(principal: string): Promise<PrincipalQuotaState> {
    try {
      return { ...emptyQuotaState(), ...(JSON.parse(await readFile(this.#path(principal), "utf8")) as Partial<PrincipalQuotaState>) };
    } catch (error) {
      // Missing: nothing counted yet. Unreadable (a torn write cannot happen: writes are atomic renames): start over.
      if (!isErrnoCode(error, "ENOENT")) this.#logger.warn("quota file unreadable; counting from zero", { principal, error: errorMessage(error) });
      return emptyQuotaState();
    }
  }

  #change<T>(principal: string, change: (state: PrincipalQuotaState, now: number) => T): Promise<T> {
    const path = this.#path(principal);
    return fileLocks.run(path, () =>
      withLockFile(`${path}.lock`, async () => {
        const state = await this.#read(principal);
        const result = change(state, this.#clock());
        await writeFileAtomic(path, JSON.stringify(state));
        return result;
      }),
    );
  }
}

/** Runs `work` holding `lockPath` (created with O_EXCL) against other processes; bounded wait. */
export async function withLockFile<T>(lockPath: string, work: () => Promise<T>): Promise<T> {
  const deadline = performance.now() + LOCK_WAIT_MS;
  for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
    try {
      const handle = await open(lockPath, "wx", 0o600);
      await handle.close();
      break;
    } catch (error) {
      if (isErrnoCode(error, "ENOENT")) {
        await mkdir(join(lockPath, ".."), { recursive: true, mode: 0o700 });
        continue;
      }
      if (!isErrnoCode(error, "EEXIST")) throw error;
      const age = await stat(lockPath).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (age > STALE_LOCK_MS) await rm(lockPath, { force: true });
      else if (performance.now() > deadline) throw new Error(`${lockPath} is held by another process for more than ${LOCK_WAIT_MS} ms`);
      else await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
  try {
    return await work();
  } finally {
    await rm(lockPath, { force: true });
  }
}
