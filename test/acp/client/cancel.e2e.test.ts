import { describe, expect, it } from "vitest";
import { AcpTimeoutError, ClientPermissionPolicy, type AcpSessionEvent } from "../../../src/acp/client/index.js";
import { startClient, startSession } from "./helpers.js";

/** Resolves on the first event that satisfies `test`. */
function waitFor(session: { onEvent(l: (e: AcpSessionEvent) => void): () => void }, test: (e: AcpSessionEvent) => boolean): Promise<AcpSessionEvent> {
  return new Promise((resolve) => {
    const off = session.onEvent((e) => {
      if (test(e)) {
        off();
        resolve(e);
      }
    });
  });
}

describe("cancellation", () => {
  it("cancels during streaming within 200 ms from another task; the next prompt works", async () => {
    const session = await startSession();
    const handle = session.cancellationHandle();
    const stream = session.stream("slow");
    let ticks = 0;
    let cancelledAt = 0;
    for await (const event of stream) {
      if (event.type === "message_chunk" && ++ticks === 3) {
        cancelledAt = performance.now();
        // A task that only holds the handle.
        setTimeout(() => void handle.cancel(), 0);
      }
      if (event.type === "done") {
        expect(event.stopReason).toBe("cancelled");
        expect(performance.now() - cancelledAt).toBeLessThan(200);
      }
    }
    const result = await stream.result;
    expect(result.stopReason).toBe("cancelled");
    expect(result.text).toMatch(/^tick 0 tick 1 tick 2 /);
    expect((await session.prompt("hello")).stopReason).toBe("end_turn");
  });

  it("answers a pending permission request `cancelled` and ends the turn cancelled within 200 ms", async () => {
    let handlerSignal: AbortSignal | undefined;
    const never = ClientPermissionPolicy.custom((_q, signal) => {
      handlerSignal = signal;
      return new Promise(() => {});
    });
    const session = await startSession([], never);
    const asked = waitFor(session, (e) => e.type === "permission_requested");
    const pending = session.prompt("edit /tmp/never.txt");
    await asked;
    const t0 = performance.now();
    await session.cancel();
    const result = await pending;
    expect(performance.now() - t0).toBeLessThan(200);
    expect(result.stopReason).toBe("cancelled");
    expect(result.permissions[0]).toMatchObject({ decision: "cancelled", outcome: { outcome: "cancelled" }, source: "cancel" });
    expect(handlerSignal?.aborted).toBe(true);
    expect((await session.prompt("hello")).text).toBe("Hello, world");
  });

  it("fences a handle to its own prompt: a late cancel never hits the next prompt", async () => {
    const session = await startSession();
    const first = session.prompt("hello");
    const handle = session.cancellationHandle();
    expect((await first).stopReason).toBe("end_turn");
    const second = session.prompt("slow");
    await handle.cancel(); // late: belongs to the finished first prompt
    const ticks = await waitFor(session, (e) => e.type === "message_chunk" && e.text.startsWith("tick 5"));
    expect(ticks.type).toBe("message_chunk");
    await session.cancel();
    expect((await second).stopReason).toBe("cancelled");
  });

  it("a handle taken while idle belongs to the next prompt and cancels it before it starts", async () => {
    const session = await startSession();
    const handle = session.cancellationHandle();
    await handle.cancel();
    expect((await session.prompt("slow")).stopReason).toBe("cancelled");
    expect((await session.prompt("hello")).stopReason).toBe("end_turn");
  });

  it("an AbortSignal passed to prompt() cancels that prompt", async () => {
    const session = await startSession();
    const abort = new AbortController();
    const started = waitFor(session, (e) => e.type === "message_chunk");
    const pending = session.prompt("slow", { signal: abort.signal });
    await started;
    abort.abort();
    expect((await pending).stopReason).toBe("cancelled");
  });

  it("breaking out of a stream cancels its turn", async () => {
    const session = await startSession();
    const stream = session.stream("slow");
    for await (const event of stream) if (event.type === "message_chunk") break;
    expect((await stream.result).stopReason).toBe("cancelled");
  });

  it("cancels long requests with $/cancel_request (signal) and times them out", async () => {
    const client = await startClient(["--slow-list"], undefined, { timeouts: { requestMs: 60_000 } });
    const abort = new AbortController();
    const listing = client.listSessions({ signal: abort.signal });
    setTimeout(() => abort.abort(), 50);
    await expect(listing).rejects.toMatchObject({ name: "AbortError" });
    await expect(client.request("session/list", {}, { timeoutMs: 100 })).rejects.toBeInstanceOf(AcpTimeoutError);
    // The agent saw the cancellation and is still usable.
    const session = await client.newSession();
    expect(session.client).toBe(client); // a session reaches its client
    const stats = JSON.parse((await session.prompt("stats")).text) as { listCancelled: boolean };
    expect(stats.listCancelled).toBe(true);
  });
});
