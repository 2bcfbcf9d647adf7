import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { ClientPermissionPolicy, PermissionRequiredError, type PermissionAnswer, type PermissionQuestion } from "../../../src/acp/client/index.js";
import { startSession, tempDir } from "./helpers.js";

const ALL: acp.PermissionOption[] = [
  { optionId: "a1", name: "Allow once", kind: "allow_once" },
  { optionId: "a2", name: "Always", kind: "allow_always" },
  { optionId: "r1", name: "Reject", kind: "reject_once" },
  { optionId: "r2", name: "Never", kind: "reject_always" },
];
const ROOT = "/work/project";

function request(toolCall: Partial<acp.ToolCallUpdate>, options = ALL): acp.RequestPermissionRequest {
  return { sessionId: "s1", toolCall: { toolCallId: "c1", ...toolCall }, options };
}
const ctx = () => ({ roots: [ROOT], signal: new AbortController().signal });

describe("ClientPermissionPolicy (decisions by option kind)", () => {
  it("denies everything by default with the agent's reject_once option", async () => {
    const r = await ClientPermissionPolicy.denyAll().resolveToolPermission(request({ title: "Edit", kind: "edit" }), ctx());
    expect(r).toMatchObject({ outcome: { outcome: "selected", optionId: "r1" }, decision: "deny", optionKind: "reject_once", source: "default" });
    const dflt = await new ClientPermissionPolicy().resolveToolPermission(request({ kind: "read" }), ctx());
    expect(dflt.decision).toBe("deny");
  });

  it("never escalates an allow: allow_once without such an option becomes a rejection", async () => {
    const onlyAlways = ALL.filter((o) => o.optionId !== "a1");
    const r = await ClientPermissionPolicy.allowAll().resolveToolPermission(request({ kind: "edit" }, onlyAlways), ctx());
    expect(r).toMatchObject({ outcome: { outcome: "selected", optionId: "r1" }, decision: "deny" });
    expect(r.reason).toMatch(/no allow_once option/);
  });

  it("matches rules by kind, title pattern, path glob and command prefix; first match wins", async () => {
    const policy = new ClientPermissionPolicy({
      rules: [
        { name: "no secrets", path: "**/.env", action: "deny" },
        { name: "reads", kind: ["read", "search"], insideRoots: true, action: "allow" },
        { name: "src edits", kind: "edit", path: "src/**", action: "allow", always: true },
        { name: "git status", command: "git status", action: "allow" },
        { name: "tests", title: "^Run npm test", action: "allow" },
      ],
    });
    const decide = async (call: Partial<acp.ToolCallUpdate>) => (await policy.resolveToolPermission(request(call), ctx())).outcome;
    expect(await decide({ kind: "read", locations: [{ path: `${ROOT}/a.ts` }] })).toEqual({ outcome: "selected", optionId: "a1" });
    expect(await decide({ kind: "read", locations: [{ path: "/etc/passwd" }] })).toEqual({ outcome: "selected", optionId: "r1" });
    expect(await decide({ kind: "read", rawInput: { file_path: "config/.env" } })).toEqual({ outcome: "selected", optionId: "r1" });
    expect(await decide({ kind: "edit", rawInput: { path: "src/x/y.ts" } })).toEqual({ outcome: "selected", optionId: "a2" });
    // Every path of an allow rule must match: one outside src/ makes it fall through to deny.
    expect(await decide({ kind: "edit", locations: [{ path: `${ROOT}/src/a.ts` }, { path: `${ROOT}/package.json` }] })).toEqual({ outcome: "selected", optionId: "r1" });
    expect(await decide({ kind: "execute", rawInput: { command: "git status --short" } })).toEqual({ outcome: "selected", optionId: "a1" });
    expect(await decide({ kind: "execute", rawInput: { command: "git statusx" } })).toEqual({ outcome: "selected", optionId: "r1" });
    expect(await decide({ kind: "execute", rawInput: { command: ["bash", "-lc", "git status"] } })).toEqual({ outcome: "selected", optionId: "a1" });
    expect(await decide({ kind: "execute", title: "Run npm test -- --watch=false" })).toEqual({ outcome: "selected", optionId: "a1" });
  });

  it("asks an async handler, and refuses option ids the agent did not offer", async () => {
    const questions: PermissionQuestion[] = [];
    const policy = ClientPermissionPolicy.custom(async (q) => {
      questions.push(q);
      await new Promise((r) => setTimeout(r, 5));
      return q.title === "invent" ? { optionId: "made-up" } : q.title === "exact" ? { optionId: "r2" } : "allow_once";
    });
    const ok = await policy.resolveToolPermission(request({ title: "Edit", kind: "edit", rawInput: { path: "a.txt" } }), ctx());
    expect(ok).toMatchObject({ outcome: { outcome: "selected", optionId: "a1" }, source: "handler" });
    expect(questions[0]).toMatchObject({ title: "Edit", kind: "edit", paths: [`${ROOT}/a.txt`], options: ALL, source: "tool_call" });
    const invented = await policy.resolveToolPermission(request({ title: "invent" }), ctx());
    expect(invented).toMatchObject({ outcome: { outcome: "selected", optionId: "r1" }, decision: "deny" });
    expect(invented.reason).toMatch(/did not offer/);
    expect((await policy.resolveToolPermission(request({ title: "exact" }), ctx())).outcome).toEqual({ outcome: "selected", optionId: "r2" });
  });

  it("takes an expression-bodied async handler without `as const`; a string that is no answer is a rejection saying so", async () => {
    // Type-checked by `npm run typecheck`: before, this line needed `"allow_once" as const`.
    const policy = ClientPermissionPolicy.custom(async () => "allow_once");
    expect(await policy.resolveToolPermission(request({ title: "Edit" }), ctx())).toMatchObject({ outcome: { outcome: "selected", optionId: "a1" }, decision: "allow" });
    const odd = await ClientPermissionPolicy.custom(async () => "yes please").resolveToolPermission(request({ title: "Edit" }), ctx());
    expect(odd).toMatchObject({ decision: "deny", outcome: { outcome: "selected", optionId: "r1" } });
    expect(odd.reason).toMatch(/answered "yes please", which is no permission answer/);
  });

  it("treats a failing handler as a rejection", async () => {
    const policy = ClientPermissionPolicy.custom(() => {
      throw new Error("dialog crashed");
    });
    const r = await policy.resolveToolPermission(request({ title: "x" }), ctx());
    expect(r).toMatchObject({ decision: "deny", outcome: { outcome: "selected", optionId: "r1" } });
    expect(r.reason).toMatch(/dialog crashed/);
  });

  it("has a non-interactive fallback: deny, or fail (cancel the turn with a typed error)", async () => {
    const deny = await new ClientPermissionPolicy({ default: "ask" }).resolveToolPermission(request({ title: "x" }), ctx());
    expect(deny).toMatchObject({ decision: "deny", source: "fallback", outcome: { outcome: "selected", optionId: "r1" } });
    const fail = await new ClientPermissionPolicy({ default: "ask", fallback: "fail" }).resolveToolPermission(request({ title: "x" }), ctx());
    expect(fail).toMatchObject({ decision: "cancelled", cancelTurn: true, outcome: { outcome: "cancelled" } });
    expect(fail.failure).toBeInstanceOf(PermissionRequiredError);
  });

  it("remembers always answers on the client when asked to", async () => {
    let asked = 0;
    const policy = ClientPermissionPolicy.custom(() => (asked++, "allow_always"), { remember: true });
    const call = { kind: "execute" as const, rawInput: { command: "make test" } };
    expect((await policy.resolveToolPermission(request(call), ctx())).outcome).toEqual({ outcome: "selected", optionId: "a2" });
    const second = await policy.resolveToolPermission(request({ ...call, toolCallId: "other" }), ctx());
    expect(second).toMatchObject({ source: "memory", outcome: { outcome: "selected", optionId: "a2" } });
    expect(asked).toBe(1);
    await policy.resolveToolPermission(request({ kind: "execute", rawInput: { command: "make deploy" } }), ctx());
    expect(asked).toBe(2);
  });

  it("reports a denial that cannot be expressed when no reject option is offered", async () => {
    const allowOnly = ALL.filter((o) => o.kind.startsWith("allow"));
    const r = await ClientPermissionPolicy.denyAll().resolveToolPermission(request({ title: "Edit" }, allowOnly), ctx());
    expect(r).toMatchObject({ outcome: { outcome: "cancelled" }, decision: "deny", noRejectOption: true, cancelTurn: true });
    expect(r.reason).toMatch(/no reject option/);
  });

  it("gates host requests with the same rules (checkHostRequest / hostAuthorizer)", async () => {
    const policy = new ClientPermissionPolicy({
      rules: [
        { kind: "read", insideRoots: true, action: "allow" },
        { kind: "execute", command: ["npm test", "git"], action: "allow" },
      ],
    });
    expect(await policy.checkHostRequest({ kind: "fs_read", path: `${ROOT}/a`, roots: [ROOT] })).toMatchObject({ allowed: true, source: "rule" });
    expect(await policy.checkHostRequest({ kind: "fs_read", path: "/etc/shadow", roots: [ROOT] })).toMatchObject({ allowed: false });
    expect(await policy.checkHostRequest({ kind: "fs_write", path: `${ROOT}/a`, roots: [ROOT] })).toMatchObject({ allowed: false, source: "default" });
    const authorize = policy.hostAuthorizer();
    expect(await authorize({ kind: "terminal", sessionId: "s", command: "git", args: ["log"], roots: [ROOT] })).toBe("allow");
    expect(await authorize({ kind: "terminal", sessionId: "s", command: "rm", args: ["-rf", "/"], roots: [ROOT] })).toBe("deny");
  });

  it("loads a policy from a JSON file and rejects malformed ones", () => {
    const dir = tempDir();
    const good = join(dir, "p.json");
    writeFileSync(good, JSON.stringify({ default: "deny", rules: [{ kind: "read", action: "allow" }], remember: true }));
    expect(ClientPermissionPolicy.fromFile(good)).toBeInstanceOf(ClientPermissionPolicy);
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ rules: [{ kind: "read", action: "maybe" }] }));
    expect(() => ClientPermissionPolicy.fromFile(bad)).toThrow(/action must be allow, deny or ask/);
  });
});

describe("permission policy over stdio", () => {
  it("deny-all: the agent receives its reject option and reports the tool call failed", async () => {
    const session = await startSession();
    const result = await session.prompt("edit /tmp/denied.txt");
    expect(result.text).toBe("permission reject_once");
    expect(result.toolCalls[0]?.status).toBe("failed");
    expect(result.permissions[0]).toMatchObject({ decision: "deny", optionKind: "reject_once", source: "default" });
  });

  it("rules: a command prefix allows `run git status` but not `run rm -rf`", async () => {
    const session = await startSession([], new ClientPermissionPolicy({ rules: [{ command: "git status", action: "allow" }] }));
    expect((await session.prompt("run git status --short")).text).toBe("permission allow_once");
    expect((await session.prompt("run rm -rf /")).text).toBe("permission reject_once");
  });

  it("custom async handler sees the merged tool call and picks allow_always", async () => {
    const seen: PermissionQuestion[] = [];
    const session = await startSession([], ClientPermissionPolicy.custom(async (q): Promise<PermissionAnswer> => (seen.push(q), "allow_always")));
    expect((await session.prompt("read /tmp/some-file.txt")).text).toBe("permission allow_always");
    expect(seen[0]).toMatchObject({ kind: "read", title: "Read /tmp/some-file.txt", paths: ["/tmp/some-file.txt"] });
  });

  it("fallback fail: the turn is cancelled and prompt() rejects with PermissionRequiredError", async () => {
    const session = await startSession([], new ClientPermissionPolicy({ default: "ask", fallback: "fail" }));
    await expect(session.prompt("edit /tmp/x.txt")).rejects.toBeInstanceOf(PermissionRequiredError);
    expect((await session.prompt("hello")).text).toBe("Hello, world");
  });

  it("no reject option: the denial is reported, answered cancelled, and the turn ends cancelled", async () => {
    const session = await startSession(["--no-reject"]);
    const result = await session.prompt("edit /tmp/x.txt");
    expect(result.stopReason).toBe("cancelled");
    expect(result.permissions[0]).toMatchObject({ decision: "deny", noRejectOption: true, outcome: { outcome: "cancelled" } });
    expect(result.permissions[0]?.reason).toMatch(/offered no reject option/);
    expect((await session.prompt("hello")).stopReason).toBe("end_turn");
  });
});
