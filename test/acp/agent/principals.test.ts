import { describe, expect, it } from "vitest";
import { BearerTokens, parseTokenFile } from "../../../src/acp/agent/principals.js";

describe("token files and bearer tokens", () => {
  it("reads NAME TOKEN lines (comments and blanks skipped); one bare token is principal default", () => {
    expect(parseTokenFile("# team\n\nalice aaaaaaaaaaaaaaaa1\r\n  bob   bbbbbbbbbbbbbbbb2  \nalice aaaaaaaaaaaaaaaa3\n", "f")).toEqual([
      { principal: "alice", token: "aaaaaaaaaaaaaaaa1" },
      { principal: "bob", token: "bbbbbbbbbbbbbbbb2" },
      { principal: "alice", token: "aaaaaaaaaaaaaaaa3" },
    ]);
    expect(parseTokenFile("# the token\nshort\n", "f")).toEqual([{ principal: "default", token: "short" }]);
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
