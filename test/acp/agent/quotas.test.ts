import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/core/index.js";
import { AuditTrail } from "../../../src/acp/agent/audit-trail.js";
import { PrincipalMetrics } from "../../../src/acp/agent/principal-metrics.js";
import { QuotaGate, QuotaPolicy, parseQuotas, quotasFromClaim } from "../../../src/acp/agent/quotas.js";
import type { AuditLog, AuditRecord } from "../../../src/store/index.js";
import { InMemoryAuditLog, InMemoryQuotaStore } from "../../../src/store/index.js";

describe("quota limits", () => {
  it("parses --quota, names what is wrong, and reads a JWT claim as an object or text (an unusable one is ignored)", () => {
    expect(parseQuotas("sessions=20,turns=2,prompts-per-minute=30,tokens-per-day=2000000")).toEqual({ sessions: 20, turns: 2, "prompts-per-minute": 30, "tokens-per-day": 2_000_000 });
    expect(() => parseQuotas("foo")).toThrow(/--quota takes NAME=VALUE.*got "foo"/);
    expect(() => parseQuotas("sessions=-1")).toThrow(/got "sessions=-1"/);
    expect(quotasFromClaim({ sessions: 3, turns: "1" })).toEqual({ sessions: 3, turns: 1 });
    expect(quotasFromClaim("turns=4")).toEqual({ turns: 4 });
    expect(quotasFromClaim({ sessions: "lots" })).toBeUndefined();
    expect(quotasFromClaim(42)).toBeUndefined();
    expect(quotasFromClaim(undefined)).toBeUndefined();
  });

  it("a principal's limits: --quota, replaced name by name by the token file's column, then by its latest JWT claim", () => {
    const policy = new QuotaPolicy({ sessions: 5, turns: 2 });
    policy.setFileOverrides(new Map([["alice", { sessions: 1 }]]));
    policy.noteClaim("bob", { turns: 9 });
    expect(policy.limitsFor("alice")).toEqual({ sessions: 1, turns: 2 });
    expect(policy.limitsFor("bob")).toEqual({ sessions: 5, turns: 9 });
    policy.noteClaim("bob", undefined);
    expect(policy.limitsFor("bob")).toEqual({ sessions: 5, turns: 2 });
  });
});

describe("QuotaGate", () => {
  it("refuses with quota_exceeded, the limit, its value and a retry time; a release frees the slot; refusals are reported", async () => {
    const refused: string[] = [];
    const gate = new QuotaGate(new InMemoryQuotaStore(), new QuotaPolicy({ sessions: 1, turns: 1, "prompts-per-minute": 2 }), silentLogger, (p, limit) => refused.push(`${p}:${limit}`));
    const release = await gate.openSession("alice", "s1");
    await expect(gate.openSession("alice", "s2")).rejects.toMatchObject({ code: -32600, data: { reason: "quota_exceeded", limit: "sessions", value: 1, retryAfterMs: 10_000 } });
    await release();
    await (await gate.openSession("alice", "s2"))();
    const end = await gate.startTurn("alice", "s2", "t1");
    await expect(gate.startTurn("alice", "s2", "t2")).rejects.toMatchObject({ data: { limit: "turns" } });
    await end();
    await (await gate.startTurn("alice", "s2", "t3"))();
    // The refused prompt (turns) counted nothing: two prompts ran, the third is over the rate.
    const rate = gate.startTurn("alice", "s2", "t4");
    await expect(rate).rejects.toMatchObject({ data: { limit: "prompts-per-minute", value: 2 } });
    expect(refused).toEqual(["alice:sessions", "alice:turns", "alice:prompts-per-minute"]);
  });

  it("tokens of the day stop the next prompt, not the turn that used them", async () => {
    const gate = new QuotaGate(new InMemoryQuotaStore(), new QuotaPolicy({ "tokens-per-day": 100 }), silentLogger);
    const end = await gate.startTurn("bob", "s", "t1");
    gate.addTokens("bob", 150);
    await end();
    await expect(gate.startTurn("bob", "s", "t2")).rejects.toMatchObject({ data: { limit: "tokens-per-day", value: 100 } });
    await (await gate.startTurn("carol", "s", "t3"))();
  });
});

describe("PrincipalMetrics", () => {
  it("labels the reserved principals first, then others up to the cap; the rest are counted as other", () => {
    const metrics = new PrincipalMetrics(2);
    metrics.reserve(["alice"]);
    metrics.prompt("jwt-1");
    metrics.prompt("jwt-2");
    metrics.prompt("jwt-3");
    metrics.prompt("alice");
    metrics.quotaRefused("jwt-3", "turns");
    const text = metrics.render().join("\n");
    expect(text).toContain('agentkit_acp_principal_prompts_total{principal="alice"} 1');
    expect(text).toContain('agentkit_acp_principal_prompts_total{principal="jwt-1"} 1');
    expect(text).toContain('agentkit_acp_principal_prompts_total{principal="other"} 2');
    expect(text).toContain('agentkit_acp_quota_refusals_total{principal="other",limit="turns"} 1');
  });
});

describe("AuditTrail", () => {
  it("batches records into few appends, writes everything queued on close, and counts what a full queue dropped", async () => {
    const appends: AuditRecord[][] = [];
    const memory = new InMemoryAuditLog();
    const log: AuditLog = { append: async (r) => void appends.push([...r]), query: (q) => memory.query(q), prune: (b) => memory.prune(b) };
    const trail = new AuditTrail({ log, instance: "i1", logger: silentLogger, flushMs: 60_000, batch: 1_000, maxQueued: 3 });
    for (let i = 0; i < 5; i++) trail.record({ principal: "alice", sessionId: `s${i}`, action: "session/prompt", detail: { long: "x".repeat(300) } });
    expect(appends).toHaveLength(0); // nothing written on the hot path
    await trail.close();
    expect(appends).toHaveLength(1);
    const [batch] = appends;
    expect(batch!.map((r) => r.sessionId ?? r.action)).toEqual(["s2", "s3", "s4", "audit_dropped"]);
    expect(batch!.at(-1)!.detail).toEqual({ records: 2 });
    expect(String(batch![0]!.detail.long)).toHaveLength(257);
  });
});
