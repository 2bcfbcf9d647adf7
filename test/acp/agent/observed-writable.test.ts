import { describe, expect, it } from "vitest";
import { observedWritable } from "../../../src/acp/agent/observed-writable.js";

/** A target whose writes wait until released, recording what it took. */
function gatedTarget() {
  const took: string[] = [];
  const gates: Array<() => void> = [];
  let fail: Error | undefined;
  const target = new WritableStream<string>({
    write: (message) => {
      if (fail) throw fail;
      took.push(message);
      return new Promise<void>((resolve) => gates.push(resolve));
    },
  });
  return { target, took, release: () => gates.shift()?.(), failNext: (error: Error) => (fail = error) };
}

describe("observedWritable (the metrics tap's outbound side, without a second WritableStream)", () => {
  it("each message is observed once the target took it, in order; locked while a write is in flight, as the SDK's router expects", async () => {
    const { target, took, release } = gatedTarget();
    const seen: string[] = [];
    const writable = observedWritable(target, { written: (m) => seen.push(m), ended: () => seen.push("<end>") });
    // As the SDK's JSON-RPC connection writes: a writer per message, released after the write.
    const send = async (message: string): Promise<void> => {
      const writer = writable.getWriter();
      try {
        await writer.write(message);
      } finally {
        writer.releaseLock();
      }
    };
    expect(writable.locked).toBe(false);
    const first = send("a");
    await Promise.resolve();
    expect(writable.locked).toBe(true);
    expect(seen).toEqual([]); // not before the target finished taking it
    release();
    await first;
    expect(seen).toEqual(["a"]);
    expect(writable.locked).toBe(false);
    const second = send("b");
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await second;
    await writable.close();
    expect(took).toEqual(["a", "b"]);
    expect(seen).toEqual(["a", "b", "<end>"]);
  });

  it("a failed write rejects, is not observed as written, and ends the observation; abort reaches the target", async () => {
    const { target, failNext } = gatedTarget();
    const seen: string[] = [];
    const writable = observedWritable(target, { written: (m) => seen.push(m), ended: () => seen.push("<end>") });
    failNext(new Error("socket gone"));
    await expect(writable.getWriter().write("x")).rejects.toThrow("socket gone");
    expect(seen).toEqual(["<end>"]);
    const other = gatedTarget();
    const aborted = observedWritable(other.target, { written: () => undefined, ended: () => seen.push("<aborted>") });
    await aborted.getWriter().abort(new Error("bye"));
    expect(seen).toEqual(["<end>", "<aborted>"]);
    await expect(aborted.getWriter().write("y")).rejects.toThrow("bye"); // the target was aborted
    expect(other.took).toEqual([]);
  });
});
