/** Resolves once `condition()` holds, checking after each event-loop turn (no sleeps); rejects after `timeoutMs`. */
export async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setImmediate(resolve));
  }
}
