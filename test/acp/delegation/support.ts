import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { afterEachTest } from "../../support/after-each.js";
import type { AcpAgentLaunch } from "../../../src/acp/delegation/index.js";
import { livePidsInGroup } from "../../../src/core/process/group.js";
import type { ScriptFileStep } from "../../../src/testing/scripted-script.js";
import type { AgentEvent, CancellationController, ObservedEvent, ToolProgress, TurnResult } from "../../../src/core/index.js";
import { approve } from "../../../src/core/index.js";
import { Agent, type LoopDriver } from "../../../src/loop/index.js";
import type { ScriptStep } from "../../../src/testing/index.js";
import { ScriptedModel } from "../../../src/testing/index.js";
import type { Tool } from "../../../src/tools/index.js";
import { RulePermissionPolicy, ToolRegistry } from "../../../src/tools/index.js";
import { agentFixture } from "../../support/fixture-agents.js";

export const bin = new URL("../../../bin/agentkit-acp.js", import.meta.url).pathname;
export const fixtureAgent = agentFixture("fixture-agent.mjs");

const groups = new Set<number>();
const cleanups: Array<() => Promise<void>> = [];

export { tempDir } from "../../support/temp.js";

export function writeScript(dir: string, steps: ScriptFileStep[], name = "script.json"): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ steps }));
  return path;
}

/** This process's env without provider keys or delegation state, so the delegate is a clean root hop. */
export function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  for (const key of ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "AGENTKIT_API_KEY", "AGENTKIT_MODEL", "AGENTKIT_BASE_URL", "AGENTKIT_DELEGATION_DEPTH", "AGENTKIT_DELEGATION_CHAIN"]) {
    delete env[key];
  }
  return env;
}

/** `agentkit-acp serve` with these extra args, as a delegate launch config. */
export function serveLaunch(args: string[]): AcpAgentLaunch {
  return { command: process.execPath, args: [bin, "serve", "--log-level", "warn", ...args], env: cleanEnv(), inheritEnv: false };
}

export function trackGroup(pid: unknown): void {
  if (typeof pid === "number") groups.add(pid);
}

export function onCleanup(fn: () => Promise<void>): void {
  cleanups.push(fn);
}

/** Polls until the process group is empty (deadline generous for a busy machine). */
export async function expectGroupGone(pgid: number, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (livePidsInGroup(pgid).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  expect(livePidsInGroup(pgid), `processes left in group ${pgid}`).toEqual([]);
}

afterEachTest(async () => {
  for (const fn of cleanups.splice(0)) await fn().catch(() => undefined);
  for (const pgid of [...groups]) await expectGroupGone(pgid);
  groups.clear();
});

/** Progress events of the outer tool calls, and the pids the delegates reported. */
export class OuterEvents {
  readonly events: AgentEvent[] = [];
  readonly #waiters: Array<() => void> = [];

  readonly observer = {
    handleEvent: ({ event }: ObservedEvent): void => {
      this.events.push(event);
      if (event.type === "tool_execution_progress") trackGroup(startedPid(event.progress));
      for (const w of [...this.#waiters]) w();
    },
  };

  progress(callId?: string): ToolProgress[] {
    return this.events.flatMap((e) => (e.type === "tool_execution_progress" && (callId === undefined || e.callId === callId) ? [e.progress] : []));
  }

  progressText(callId?: string): string {
    return this.progress(callId)
      .map((p) => p.text ?? "")
      .join("");
  }

  /** Pids of delegate processes, in start order. */
  pids(): number[] {
    return this.progress().flatMap((p) => {
      const pid = startedPid(p);
      return pid === undefined ? [] : [pid];
    });
  }

  waitFor(predicate: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs);
      const check = (): void => {
        if (!predicate()) return;
        clearTimeout(timer);
        this.#waiters.splice(this.#waiters.indexOf(check), 1);
        resolve();
      };
      this.#waiters.push(check);
    });
  }
}

function startedPid(progress: ToolProgress): number | undefined {
  const data = progress.data as { type?: string; pid?: unknown } | undefined;
  return data?.type === "started" && typeof data.pid === "number" ? data.pid : undefined;
}

export interface OuterAgent {
  driver: LoopDriver;
  model: ScriptedModel;
  events: OuterEvents;
}

/** A loop agent with a scripted model and these tools; every tool call is allowed by policy. */
export function outerAgent(tools: Tool[], steps: ScriptStep[], options: { cwd: string; cancellation?: CancellationController }): OuterAgent {
  const model = new ScriptedModel(steps);
  const events = new OuterEvents();
  const builder = Agent.builder()
    .model(model)
    .tools(new ToolRegistry(tools))
    .permissions(new RulePermissionPolicy({ rules: [], fallback: { verdict: "allow", reason: "test" } }))
    .observer(events.observer);
  if (options.cancellation) builder.cancellation(options.cancellation.handle());
  const driver = builder.build().start({ cwd: options.cwd });
  return { driver, model, events };
}

/** Sends one user message and drives the turn to its end (approvals, if any, are approved). */
export async function runTurn(driver: LoopDriver, text: string): Promise<TurnResult> {
  driver.submitInput([{ id: `u-${Date.now()}`, role: "user", parts: [{ type: "text", text }], createdAt: new Date().toISOString() }]);
  for (;;) {
    const step = await driver.next();
    if (step.type === "finished") return step.result;
    if (step.interrupt.type === "approval_request") driver.resolveApproval(step.interrupt.request.callId, approve());
    if (step.interrupt.type === "awaiting_input") throw new Error("the turn went idle without finishing");
  }
}

/** The tool results the outer model was sent in its requests (what it read). */
export function toolResultsSeen(model: ScriptedModel): Array<{ toolName: string; text: string; isError: boolean; data: unknown }> {
  const last = model.requests.at(-1);
  return (last?.items ?? []).flatMap((item) =>
    item.parts.flatMap((p) => (p.type === "tool_result" ? [{ toolName: p.toolName, text: p.result.text, isError: p.result.isError, data: p.result.data }] : [])),
  );
}
