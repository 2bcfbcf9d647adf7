/** Runs tasks one at a time per key (e.g. per session file); different keys run in parallel. */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    // Forget idle keys so the map does not grow with every session ever touched.
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }
}

/**
 * One lock table per process for file paths, so two store instances on the same state
 * directory still serialize their writes to one file.
 */
export const fileLocks = new KeyedLock();
