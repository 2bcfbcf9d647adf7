/** A byte source fed by `push`, read pull-based, so it ends only after every pushed chunk was read. */
export interface PullStream {
  readonly readable: ReadableStream<Uint8Array>;
  push(chunk: Uint8Array): void;
  /** No more chunks: the stream closes once those pushed before are read. */
  end(): void;
}

export function pullStream(): PullStream {
  const chunks: Uint8Array[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const notify = (): void => {
    wake?.();
    wake = undefined;
  };
  const readable = new ReadableStream<Uint8Array>(
    {
      pull: async (controller) => {
        while (chunks.length === 0 && !ended) await new Promise<void>((resolve) => (wake = resolve));
        const next = chunks.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    },
    { highWaterMark: 0 },
  );
  return {
    readable,
    push(chunk) {
      chunks.push(chunk);
      notify();
    },
    end() {
      ended = true;
      notify();
    },
  };
}
