/** A push-based async iterable: events queue until read; `end()` finishes the iteration. */
export class EventQueue<T> implements AsyncIterable<T> {
  readonly #items: T[] = [];
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
        while (this.#items.length === 0 && !this.#ended) await new Promise<void>((resolve) => (this.#wake = resolve));
        if (this.#items.length > 0) return { value: this.#items.shift() as T, done: false };
        return { value: undefined, done: true };
      },
      return: async (): Promise<IteratorResult<T>> => {
        if (!this.#ended) this.#onReturn();
        this.#ended = true;
        this.#items.length = 0;
        return { value: undefined, done: true };
      },
    };
  }
}
