import { describe, expect, it } from "vitest";
import { UnansweredRequests } from "../../../src/acp/agent/input-drain.js";

const bytes = (message: object): Uint8Array => new TextEncoder().encode(`${JSON.stringify(message)}\n`);

describe("UnansweredRequests (what stdin's end waits for)", () => {
  it("tracks requests, not notifications or responses; a result or an error answers; number and string ids stay apart", async () => {
    const owed = new UnansweredRequests();
    owed.observeInput(bytes({ jsonrpc: "2.0", id: 1, method: "session/new", params: {} }));
    owed.observeInput(bytes({ jsonrpc: "2.0", id: "1", method: "session/prompt", params: { sessionId: "s1" } }));
    owed.observeInput(bytes({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s1" } }));
    owed.observeInput(bytes({ jsonrpc: "2.0", id: 9, result: {} })); // the client answering one of ours
    expect(owed.cancelLines().map((line) => JSON.parse(new TextDecoder().decode(line)) as unknown)).toEqual([{ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s1" } }]);
    let drained = false;
    const done = owed.drained(60_000).then(() => (drained = true));
    owed.observeOutput(bytes({ jsonrpc: "2.0", method: "session/update", params: {} }));
    owed.observeOutput(bytes({ jsonrpc: "2.0", id: 7, method: "session/request_permission", params: {} })); // ours, not an answer
    owed.observeOutput(bytes({ jsonrpc: "2.0", id: 1, result: { sessionId: "s1" } }));
    await Promise.resolve();
    expect(drained).toBe(false); // "1" (a string) is still owed
    owed.observeOutput(bytes({ jsonrpc: "2.0", id: "1", error: { code: -32603, message: "x" } }));
    await done;
    expect(owed.cancelLines()).toEqual([]);
  });

  it("a v2 turn (answered when it started) is owed until its reported end: cancelled at the end of input, waited for", async () => {
    const owed = new UnansweredRequests();
    owed.observeInput(bytes({ jsonrpc: "2.0", id: 2, method: "session/prompt", params: { sessionId: "s2" } }));
    owed.turnState("s2", true);
    owed.observeOutput(bytes({ jsonrpc: "2.0", id: 2, result: { messageId: "m" } }));
    owed.turnState("s3", true);
    owed.turnState("s3", false); // ended before the input did
    expect(owed.cancelLines().map((line) => JSON.parse(new TextDecoder().decode(line)) as unknown)).toEqual([{ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s2" } }]);
    let drained = false;
    const done = owed.drained(60_000).then(() => (drained = true));
    owed.turnState("s2", true); // requires_action
    await Promise.resolve();
    expect(drained).toBe(false);
    owed.turnState("s2", false);
    await done;
    expect(owed.cancelLines()).toEqual([]);
  });

  it("no update line is looked at: a state_update on the output owes nothing (the v2 bridge reports turns itself)", async () => {
    const owed = new UnansweredRequests();
    owed.observeInput(bytes({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 2, info: { name: "t", version: "1" } } }));
    owed.observeOutput(bytes({ jsonrpc: "2.0", id: 1, result: { protocolVersion: 2 } }));
    owed.observeOutput(bytes({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s1", update: { sessionUpdate: "state_update", state: "running" } } }));
    expect(owed.cancelLines()).toEqual([]);
    await owed.drained(60_000);
  });

  it("the wait is bounded; with nothing owed it is over at once", async () => {
    await new UnansweredRequests().drained(60_000);
    const owed = new UnansweredRequests();
    owed.observeInput(bytes({ jsonrpc: "2.0", id: 3, method: "session/load", params: {} }));
    const started = Date.now();
    await owed.drained(50);
    expect(Date.now() - started).toBeGreaterThanOrEqual(40);
  });
});
