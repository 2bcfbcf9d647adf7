/** A push-based async iterable: events queue until read; `end()` finishes the iteration. */
export class EventQueue<T> implements AsyncIterable<T> {
  #items: T[] = [];
  /** Index of the next item to read (no Array.shift: a long backlog stays O(1) per read). */
  #head = 0;
  #ended = false;
  #wake: (() => void) | undefined;
  readonly #onReturn: () => void;

  /** `onReturn` runs when the consumer stops early (break / return). */
  constructor(onReturn: () => void = () => {}) {
    this.#onReturn = onReturn;
  }

  push(item: T): void {
    if (this.#ended) return;
    this.#items.push(item);
    this.#notify();
  }

  end(): void {
    this.#ended = true;
    this.#notify();
  }

  #notify(): void {
    this.#wake?.();
    this.#wake = undefined;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: async (): Promise<IteratorResult<T>> => {
        while (this.#head === this.#items.length && !this.#ended) await new Promise<void>((resolve) => (this.#wake = resolve));
        if (this.#head < this.#items.length) {
          const value = this.#items[this.#head++] as T;
          if (this.#head === this.#items.length) [this.#items, this.#head] = [[], 0];
          return { value, done: false };
        }
        return { value: undefined, done: true };
      },
      return: async (): Promise<IteratorResult<T>> => {
        if (!this.#ended) this.#onReturn();
        this.#ended = true;
        [this.#items, this.#head] = [[], 0];
        return { value: undefined, done: true };
      },
    };
  }
}
