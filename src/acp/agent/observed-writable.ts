/** What `observedWritable` reports: each message once the target took it, and the end of the stream. */
export interface WritableObserver<T> {
  written(message: T): void;
  /** The target failed a write, or the stream was closed or aborted. */
  ended(): void;
}

/**
 * `target` as the SDK writes to it, with each message observed once written — without a second
 * WritableStream in between. The SDK's JSON-RPC connection takes a writer, writes one message
 * and releases the writer for every message it sends (its protocol router also closes and
 * aborts through a writer): a real WritableStream layer costs a writer with its ready/closed
 * promises plus a queued write per message, on every session/update. This stand-in hands out
 * one reusable writer over a single writer of `target` (held for the stream's life), so a
 * message costs one write of `target`; `locked` is true while a write is in flight, as with a
 * writer held for one.
 */
export function observedWritable<T>(target: WritableStream<T>, observer: WritableObserver<T>): WritableStream<T> {
  const inner = target.getWriter();
  let writing = 0;
  const writer = {
    get closed(): Promise<void> {
      return inner.closed;
    },
    get ready(): Promise<void> {
      return inner.ready;
    },
    get desiredSize(): number | null {
      return inner.desiredSize;
    },
    async write(message: T): Promise<void> {
      writing += 1;
      try {
        await inner.write(message);
      } catch (error) {
        observer.ended();
        throw error;
      } finally {
        writing -= 1;
      }
      observer.written(message);
    },
    async close(): Promise<void> {
      observer.ended();
      await inner.close();
    },
    async abort(reason?: unknown): Promise<void> {
      observer.ended();
      await inner.abort(reason);
    },
    releaseLock(): void {},
  };
  const writable = {
    get locked(): boolean {
      return writing > 0;
    },
    getWriter: () => writer,
    close: () => writer.close(),
    abort: (reason?: unknown) => writer.abort(reason),
  };
  return writable as unknown as WritableStream<T>;
}
