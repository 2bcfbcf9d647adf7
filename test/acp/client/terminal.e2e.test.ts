import { afterEach, describe, expect, it } from "vitest";
import { createTerminalHost, type HostAuditEvent, type TerminalHost } from "../../../src/acp/client/index.js";
import { buildLayout, driveAgent, pidAlive, pidsIn, reports, type Layout } from "./host-support.js";

interface Step {
  step: string;
  ok: boolean;
  result?: { output?: string; truncated?: boolean; exitStatus?: { exitCode: number | null; signal: string | null }; exitCode?: number | null; signal?: string | null; terminalId?: string; cwd?: string };
  error?: { code: number; message: string; data?: { reason?: string } };
}

let layout: Layout | undefined;
let host: TerminalHost | undefined;
afterEach(async () => {
  await host?.dispose();
  layout?.cleanup();
});

describe("terminal host driven by a fixture agent over stdio", () => {
  it("full lifecycle: byte limit on a UTF-8 boundary, kill keeps output, release frees the id, session close ends the rest", async () => {
    layout = buildLayout();
    const l = layout;
    const audit: HostAuditEvent[] = [];
    host = createTerminalHost({ onRequest: (e) => audit.push(e) });
    const h = host;
    let leftoverPid = 0;
    const run = await driveAgent({
      agentFile: "terminal-agent.mjs",
      terminal: h,
      sessions: [{ cwd: l.cwd }],
      prompt: () => JSON.stringify({ outside: l.outside }),
      afterPrompts: async (sessions, text) => {
        // What a client does on session close: the terminal the agent left running must go.
        const steps = reports<Step>(text.get(sessions[0]!.sessionId));
        leftoverPid = pidsIn(steps.find((s) => s.step === "leftover:running")?.result?.output ?? "")[0] ?? 0;
        expect(leftoverPid).toBeGreaterThan(0);
        expect(pidAlive(leftoverPid)).toBe(true);
        expect(h.count(sessions[0]!.sessionId)).toBe(1);
        await h.releaseSession(sessions[0]!.sessionId);
        expect(pidAlive(leftoverPid)).toBe(false);
        expect(h.count()).toBe(0);
      },
    });
    expect(run.stopReasons).toEqual(["end_turn"]);
    const steps = new Map(reports<Step>(run.text.get(run.sessions[0]!.sessionId)).map((s) => [s.step, s]));

    // 1. The most recent ≤1001 bytes, cut forward to a character boundary: 249 × U+1D11E (4 bytes) + "END".
    expect(steps.get("big:wait")?.result).toMatchObject({ exitCode: 0 });
    const big = steps.get("big:output")!.result!;
    expect(big.truncated).toBe(true);
    expect(big.output).toBe("\u{1D11E}".repeat(249) + "END");
    expect(Buffer.byteLength(big.output!, "utf8")).toBeLessThanOrEqual(1001);
    expect(big.exitStatus).toEqual({ exitCode: 0, signal: null });

    // 2. Never-ending command.
    const forever = steps.get("forever:running")!.result!;
    expect(forever.exitStatus ?? undefined).toBeUndefined();
    const foreverPid = pidsIn(forever.output!)[0]!;
    expect(steps.get("forever:kill")?.ok).toBe(true);
    const afterKill = steps.get("forever:after-kill")!.result!;
    expect(afterKill.output).toContain(`pid=${foreverPid}`);
    expect(afterKill.exitStatus).toEqual({ exitCode: null, signal: "SIGTERM" });
    expect(steps.get("forever:wait")?.result).toEqual({ exitCode: null, signal: "SIGTERM" });
    expect(steps.get("forever:release")?.ok).toBe(true);
    for (const name of ["forever:after-release", "forever:kill-after-release"]) {
      expect(steps.get(name)).toMatchObject({ ok: false, error: { code: -32602, data: { reason: "unknown_terminal" } } });
    }
    expect(pidAlive(foreverPid)).toBe(false);

    // 3. cwd outside the roots; env and default cwd.
    expect(steps.get("outside-cwd")).toMatchObject({ ok: false, error: { code: -32602, data: { reason: "outside_roots" } } });
    expect(steps.get("outside-cwd")?.error?.message).toContain(l.outside);
    expect(steps.get("env:output")?.result?.output).toBe(`value with spaces ✓|${l.cwd}`);

    expect(leftoverPid).toBeGreaterThan(0);
    expect(run.exitCode).toBe(0);
    expect(audit.filter((e) => e.kind === "terminal_create").map((e) => e.verdict)).toEqual(["allowed", "allowed", "refused", "allowed", "allowed"]);
  }, 60_000);
});
