import type { Writable } from "node:stream";

/** Where serve's guarded ndjson stream writes its bytes (see line-guard.ts): called directly, not through a second WritableStream. */
export interface ByteSink {
  /** Resolves at once unless the output reports backpressure; order is preserved. */
  write(chunk: Uint8Array): void | Promise<void>;
  close(): Promise<void>;
  abort(reason: unknown): void;
}

/**
 * A sink over a Node stream (stdout) that batches writes while output is busy: a
 * streaming turn produces hundreds of small JSON-RPC lines per network read, and one syscall
 * each (stdout pipes are synchronous on Linux) was the largest per-update cost. The first line
 * after a quiet moment goes out at once; lines that follow in the same event-loop turn are
 * joined and written when the turn ends or `batchBytes` have gathered, so batching adds no
 * latency beyond that. Writes resolve at once unless the stream reports backpressure; order is
 * preserved.
 */
export function batchedSink(output: Writable, batchBytes = 16_384): ByteSink {
  let chunks: Uint8Array[] = [];
  let queued = 0;
  let scheduled = false;
  let draining = false;
  let failure: unknown;
  let waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];

  const settle = (): void => {
    if (failure === undefined && draining) return;
    const ready = waiters;
    waiters = [];
    for (const w of ready) {
      if (failure === undefined) w.resolve();
      else w.reject(failure);
    }
  };
  const fail = (error: unknown): void => {
    failure ??= error;
    chunks = [];
    queued = 0;
    settle();
  };
  const endOfTurn = (): void => {
    scheduled = false;
    flush();
  };
  const flush = (): void => {
    if (chunks.length === 0 || failure !== undefined) return;
    const data = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, queued);
    chunks = [];
    queued = 0;
    if (!output.write(data, (error) => error && fail(error))) {
      draining = true;
      output.once("drain", () => {
        draining = false;
        settle();
      });
    }
    settle();
  };
  output.on("error", fail);

  return {
    write(chunk) {
      if (failure !== undefined) throw failure;
      chunks.push(chunk);
      queued += chunk.length;
      if (!scheduled) {
        // Quiet until now: write this one at once; batch what follows in this turn.
        scheduled = true;
        setImmediate(endOfTurn);
        flush();
      } else if (queued >= batchBytes) flush();
      if (!draining) return;
      return new Promise<void>((resolve, reject) => waiters.push({ resolve, reject }));
    },
    close() {
      flush();
      return new Promise<void>((resolve, reject) => {
        output.end((error?: Error | null) => (error ? reject(error) : resolve()));
      });
    },
    abort(reason) {
      fail(reason);
      output.destroy(reason instanceof Error ? reason : undefined);
    },
  };
}
