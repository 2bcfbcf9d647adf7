import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { DurableApprovalMemory, InMemoryApprovalMemory, type AcpApprovalMemory } from "../../../src/acp/agent/index.js";
import { BearerTokens, parseTokenFile } from "../../../src/acp/agent/principals.js";
import type { ApprovalRequest } from "../../../src/core/index.js";
import { InMemoryApprovalMemoryStore } from "../../../src/store/index.js";
import { script } from "../../../src/testing/index.js";
import { initialize, startInMemory } from "./fixtures.js";
import { RecordingClient, memoryPipes, select, tempDir } from "./support.js";

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("token files and bearer tokens", () => {
  it("reads NAME TOKEN lines (comments and blanks skipped); one bare token is principal default", () => {
    expect(parseTokenFile("# team\n\nalice aaaaaaaaaaaaaaaa1\r\n  bob   bbbbbbbbbbbbbbbb2  \nalice aaaaaaaaaaaaaaaa3\n", "f")).toEqual([
      { principal: "alice", token: "aaaaaaaaaaaaaaaa1" },
      { principal: "bob", token: "bbbbbbbbbbbbbbbb2" },
      { principal: "alice", token: "aaaaaaaaaaaaaaaa3" },
    ]);
    expect(parseTokenFile("# the token\nshort\n", "f")).toEqual([{ principal: "default", token: "short" }]);
  });

  it("reads a line's quota= column (existing two-field files stay valid); a bad one names the line", () => {
    expect(parseTokenFile("alice aaaaaaaaaaaaaaaa1 quota=sessions=1,turns=2\nbob bbbbbbbbbbbbbbbb2\n", "f")).toEqual([
      { principal: "alice", token: "aaaaaaaaaaaaaaaa1", quota: { sessions: 1, turns: 2 } },
      { principal: "bob", token: "bbbbbbbbbbbbbbbb2" },
    ]);
    expect(() => parseTokenFile("alice aaaaaaaaaaaaaaaa1 quota=sessions=x\nbob bbbbbbbbbbbbbbbb2\n", "f")).toThrow(/f line 1: quota= takes NAME=VALUE.*got "sessions=x"/);
    expect(() => parseTokenFile("alice aaaaaaaaaaaaaaaa1 quota=foo=1\nbob bbbbbbbbbbbbbbbb2\n", "f")).toThrow(/NAME one of sessions, turns, prompts-per-minute, tokens-per-day/);
  });

  it("names the line of a malformed entry and never quotes a token", () => {
    const cases: Array<[string, RegExp]> = [
      ["alice aaaaaaaaaaaaaaaa1\nbob\n", /f line 2: expected "NAME TOKEN"/],
      ["alice aaaaaaaaaaaaaaaa1 extra\n", /f line 1: expected "NAME TOKEN" \(two fields\), found 3/],
      ["al/ice aaaaaaaaaaaaaaaa1\nbob bbbbbbbbbbbbbbbb2\n", /f line 1: principal name/],
      ["alice short\nbob bbbbbbbbbbbbbbbb2\n", /f line 1: the token of alice is shorter than 16/],
      ["alice aaaaaaaaaaaaaaaa1\nbob aaaaaaaaaaaaaaaa1\n", /f line 2: this token is already on an earlier line/],
      ["# nothing\n\n", /f is empty/],
    ];
    for (const [text, message] of cases) {
      expect(() => parseTokenFile(text, "f")).toThrow(message);
      try {
        parseTokenFile(text, "f");
      } catch (error) {
        expect((error as Error).message).not.toContain("aaaaaaaaaaaaaaaa1");
      }
    }
  });

  it("finds the principal of a token, and none for anything else; replace rotates at once", () => {
    const tokens = new BearerTokens([
      { principal: "alice", token: "aaaaaaaaaaaaaaaa1" },
      { principal: "bob", token: "bbbbbbbbbbbbbbbb2" },
    ]);
    expect([tokens.principalOf("aaaaaaaaaaaaaaaa1"), tokens.principalOf("bbbbbbbbbbbbbbbb2"), tokens.principalOf("aaaaaaaaaaaaaaaa"), tokens.principalOf("")]).toEqual(["alice", "bob", undefined, undefined]);
    tokens.replace([{ principal: "alice", token: "cccccccccccccccc3" }]);
    expect([tokens.principalOf("aaaaaaaaaaaaaaaa1"), tokens.principalOf("cccccccccccccccc3")]).toEqual([undefined, "alice"]);
    expect(tokens.principals()).toEqual(["alice"]);
  });
});

// "Always allow" is per principal. serve --listen with several principals needs --workspace-root,
// so over the CLI two principals never share a cwd (and the cwd is part of the key anyway); the
// principal scoping is shown here, with one directory and the same tool call for both.
describe("remembered approvals are per principal", () => {
  const request: ApprovalRequest = {
    sessionId: "s1",
    callId: "call_1",
    toolName: "write_file",
    title: "write a.txt",
    kind: "edit",
    input: { path: "a.txt", content: "x" },
    locations: [],
    target: { paths: ["a.txt"] },
    roots: ["/ws/shared"],
    reason: "edits need approval",
  };
  const memories: Array<[string, () => AcpApprovalMemory]> = [
    ["InMemoryApprovalMemory", () => new InMemoryApprovalMemory()],
    ["DurableApprovalMemory", () => new DurableApprovalMemory(new InMemoryApprovalMemoryStore())],
  ];
  for (const [name, make] of memories) {
    it(`${name}: alice's "always" answers the same request for alice only, not for bob or the default principal`, async () => {
      const memory = make();
      await memory.remember(request, { type: "allow_always" }, "alice");
      await memory.remember(request, { type: "reject_always", reason: "not here" }, "carol");
      expect(await memory.lookup({ ...request, callId: "call_2", sessionId: "s2" }, "alice")).toEqual({ type: "allow_always" });
      expect(await memory.lookup(request, "bob")).toBeUndefined();
      expect(await memory.lookup(request)).toBeUndefined();
      expect(await memory.lookup(request, "carol")).toEqual({ type: "reject_always", reason: "not here" });
    });
  }

  it("one runtime, alice and bob in the same directory: alice is not asked again, bob still is", async () => {
    const write = (callId: string) => [script.toolCall("write_file", { path: "a.txt", content: `${callId}\n` }, { callId }), script.text("done")];
    const env = startInMemory({ scripts: [write("a1"), write("a2"), write("b1")], memory: new InMemoryApprovalMemory() });
    const dir = tempDir("agentkit-principals-");
    cleanups.push(() => dir.remove(), () => env.close());
    const connect = (principal: string) => {
      const pipes = memoryPipes();
      const served = env.runtime.serve(pipes.agent, { principal });
      const client = new RecordingClient();
      const connection = client.connect(pipes.client);
      cleanups.push(async () => {
        await pipes.closeClientSide();
        connection.close();
        await served.closed;
      });
      return { client, agent: connection.agent };
    };
    const turn = async (who: ReturnType<typeof connect>) => {
      const { sessionId } = await who.agent.request(acp.methods.agent.session.new, { cwd: dir.path, mcpServers: [] });
      return (await who.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "write it" }] })).stopReason;
    };
    const alice = connect("alice");
    const bob = connect("bob");
    await initialize(alice.agent);
    await initialize(bob.agent);
    alice.client.answer = () => select("allow_always");
    expect(await turn(alice)).toBe("end_turn");
    expect(await turn(alice)).toBe("end_turn");
    expect(alice.client.permissionRequests).toHaveLength(1);
    expect(readFileSync(join(dir.path, "a.txt"), "utf8")).toBe("a2\n");

    bob.client.answer = () => select("reject_once");
    expect(await turn(bob)).toBe("end_turn");
    expect(bob.client.permissionRequests).toHaveLength(1);
    expect(readFileSync(join(dir.path, "a.txt"), "utf8")).toBe("a2\n");
  });
});
