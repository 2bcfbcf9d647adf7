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

  it("a v2 turn (answered when it started) is owed until its idle state_update: cancelled at the end of input, waited for", async () => {
    const owed = new UnansweredRequests();
    const state = (sessionId: string, value: string): Uint8Array => bytes({ jsonrpc: "2.0", method: "session/update", params: { sessionId, update: { sessionUpdate: "state_update", state: value } } });
    owed.observeInput(bytes({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 2, info: { name: "t", version: "1" } } }));
    owed.observeOutput(bytes({ jsonrpc: "2.0", id: 1, result: { protocolVersion: 2 } }));
    owed.observeInput(bytes({ jsonrpc: "2.0", id: 2, method: "session/prompt", params: { sessionId: "s2" } }));
    owed.observeOutput(state("s2", "running"));
    owed.observeOutput(bytes({ jsonrpc: "2.0", id: 2, result: { messageId: "m" } }));
    owed.observeOutput(state("s3", "running"));
    owed.observeOutput(state("s3", "idle")); // ended before the input did
    owed.observeOutput(bytes({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s2", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "state_update" } } } }));
    expect(owed.cancelLines().map((line) => JSON.parse(new TextDecoder().decode(line)) as unknown)).toEqual([{ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s2" } }]);
    let drained = false;
    const done = owed.drained(60_000).then(() => (drained = true));
    owed.observeOutput(state("s2", "requires_action"));
    await Promise.resolve();
    expect(drained).toBe(false);
    owed.observeOutput(state("s2", "idle"));
    await done;
    expect(owed.cancelLines()).toEqual([]);
  });

  it("a state_update in another layout than the SDK's (keys reordered, a quote in the session id) is still seen", async () => {
    const owed = new UnansweredRequests();
    owed.observeInput(bytes({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 2, info: { name: "t", version: "1" } } }));
    owed.observeOutput(bytes({ jsonrpc: "2.0", method: "session/update", params: { _meta: {}, sessionId: "a", update: { sessionUpdate: "state_update", state: "running" } } }));
    owed.observeOutput(bytes({ jsonrpc: "2.0", method: "session/update", params: { sessionId: 'b"q', update: { sessionUpdate: "state_update", state: "running" } } }));
    owed.observeOutput(bytes({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "c", update: { state: "running", sessionUpdate: "state_update" } } }));
    owed.observeOutput(bytes({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "d", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "x" } } } }));
    const cancelled = owed.cancelLines().map((line) => (JSON.parse(new TextDecoder().decode(line)) as { params: { sessionId: string } }).params.sessionId);
    expect(cancelled.sort()).toEqual(["a", 'b"q', "c"]);
  });

  it("among a turn's streamed chunks (the SDK's layout), every state_update is seen wherever it falls", () => {
    const owed = new UnansweredRequests();
    owed.observeInput(bytes({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 2, info: { name: "t", version: "1" } } }));
    const chunk = (sessionId: string) => bytes({ jsonrpc: "2.0", method: "session/update", params: { sessionId, update: { sessionUpdate: "agent_message_chunk", messageId: "m", content: { text: "state_update", type: "text" } } } });
    const state = (sessionId: string, value: string) => bytes({ jsonrpc: "2.0", method: "session/update", params: { sessionId, update: { sessionUpdate: "state_update", state: value } } });
    const owedSessions = () => owed.cancelLines().map((line) => (JSON.parse(new TextDecoder().decode(line)) as { params: { sessionId: string } }).params.sessionId);
    for (let i = 0; i < 130; i++) owed.observeOutput(chunk("sess_1"));
    owed.observeOutput(state("sess_1", "running"));
    for (let i = 0; i < 77; i++) owed.observeOutput(chunk("sess_1"));
    owed.observeOutput(state("sess_22", "running"));
    expect(owedSessions()).toEqual(["sess_1", "sess_22"]);
    for (let i = 0; i < 5; i++) owed.observeOutput(chunk("sess_22"));
    owed.observeOutput(state("sess_1", "idle"));
    expect(owedSessions()).toEqual(["sess_22"]);
  });

  it("over v1 no update is looked at: a state_update-shaped line owes nothing", async () => {
    const owed = new UnansweredRequests();
    owed.observeInput(bytes({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } }));
    owed.observeOutput(bytes({ jsonrpc: "2.0", id: 1, result: { protocolVersion: 1 } }));
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
