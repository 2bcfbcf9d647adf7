import { describe, expect, it } from "vitest";
import { raceAbort } from "../../src/core/cancellation.js";

describe("raceAbort", () => {
  it("gives the value when the promise settles first, and leaves no abort listener behind", async () => {
    const controller = new AbortController();
    let listeners = 0;
    const signal = controller.signal;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((...args: Parameters<typeof add>) => (listeners++, add(...args))) as typeof add;
    signal.removeEventListener = ((...args: Parameters<typeof remove>) => (listeners--, remove(...args))) as typeof remove;
    expect(await raceAbort(Promise.resolve(7), signal)).toEqual({ aborted: false, value: 7 });
    expect(listeners).toBe(0);
  });

  it("says aborted as soon as the signal aborts, and a later rejection of the promise stays handled", async () => {
    const controller = new AbortController();
    let reject!: (error: Error) => void;
    const pending = new Promise<number>((_, r) => (reject = r));
    const raced = raceAbort(pending, controller.signal);
    controller.abort();
    expect(await raced).toEqual({ aborted: true });
    reject(new Error("late")); // an unhandled rejection would fail the run
    expect(await raceAbort(Promise.resolve(1), controller.signal)).toEqual({ aborted: true });
  });

  it("passes on a rejection that comes first (non-errors become errors)", async () => {
    await expect(raceAbort(Promise.reject(new Error("boom")), new AbortController().signal)).rejects.toThrow("boom");
    await expect(raceAbort(Promise.reject("text"), new AbortController().signal)).rejects.toThrow("text");
  });
});
