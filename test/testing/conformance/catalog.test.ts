import { describe, expect, it } from "vitest";
import { conformanceChecks, verdictOf } from "../../../src/testing/index.js";

// Each check's level follows the RFC 2119 keyword of the sentence it quotes; an info check
// says why the spec leaves the behaviour open. (The quotes were compared with the spec
// repository's docs/protocol/v1/*.mdx when written; see docs/conformance.md.)
describe("conformance catalog", () => {
  it("has unique ids and quotes a sentence with a link for every check", () => {
    expect(new Set(conformanceChecks.map((c) => c.id)).size).toBe(conformanceChecks.length);
    for (const c of conformanceChecks) {
      expect(c.spec.text.length, c.id).toBeGreaterThan(10);
      expect(c.spec.url, c.id).toMatch(/^https:\/\/(agentclientprotocol\.com\/protocol\/(v1|v2\/draft)\/|www\.jsonrpc\.org\/specification#|github\.com\/agentclientprotocol\/agent-client-protocol\/blob\/main\/schema\/schema(\.unstable)?\.json$)/);
      expect(c.fix, c.id).toBeTruthy();
    }
  });

  it("rates must from MUST / MUST NOT / REQUIRED, should from SHOULD, and explains every info level", () => {
    for (const c of conformanceChecks) {
      const quote = c.spec.text;
      if (c.severity === "must") expect(/\bMUST\b|\bREQUIRED\b/.test(quote) || /\*\*MUST\*\*/.test(c.spec.rating ?? ""), `${c.id}: ${quote}`).toBe(true);
      if (c.severity === "should") expect(quote, c.id).toMatch(/\bSHOULD\b|\bshould\b/);
      if (c.severity === "info") expect(c.spec.rating, c.id).toBeTruthy();
    }
  });

  it("the checks the vendors' agents were wrongly failed on are informational or accept any error", () => {
    const level = (id: string): string | undefined => conformanceChecks.find((c) => c.id === id)?.severity;
    for (const id of ["init.gate", "session.relative-cwd", "prompt.image-refused", "prompt.audio-refused", "prompt.embedded-context-refused", "session.unknown-id-code", "exit.stdin-eof"]) expect(level(id), id).toBe("info");
  });

  it("maps level and status to a verdict", () => {
    expect(verdictOf("must", "fail")).toBe("violation");
    expect(verdictOf("should", "fail")).toBe("recommendation");
    expect(verdictOf("info", "fail")).toBe("informational");
    expect(verdictOf("must", "warn")).toBe("informational");
    expect(verdictOf("must", "pass")).toBe("ok");
    expect(verdictOf("should", "skip")).toBe("skipped");
  });
});
