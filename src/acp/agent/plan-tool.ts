import type { PlanEntry, SessionUpdate } from "@agentclientprotocol/sdk";
import { z } from "zod";
import type { ToolResult } from "../../core/index.js";
import type { PermissionRule, Tool } from "../../tools/index.js";
import { defineTool } from "../../tools/index.js";

/** The plan tool's name; its successful calls become ACP `plan` updates. */
export const PLAN_TOOL_NAME = "update_plan";

const entry = z.object({
  content: z.string().min(1).describe("What this step does, in a few words"),
  priority: z.enum(["high", "medium", "low"]).default("medium"),
  status: z.enum(["pending", "in_progress", "completed"]).default("pending"),
});
const input = z.object({
  entries: z.array(entry).describe("The whole plan, every step in order (not just the changed ones)"),
});

/** The plan tool's input, as validated: the whole plan, each entry with its status and priority. */
export type PlanToolInput = z.output<typeof input>;

/**
 * A todo / plan tool (kind `think`): the model sends the whole plan each time; the editor shows
 * it as the session's plan. It changes nothing on disk, so `planToolRule` lets it run without
 * asking in every mode.
 */
export function planTool(): Tool<PlanToolInput> {
  return defineTool({
    name: PLAN_TOOL_NAME,
    description:
      "Record or update your plan for the current task as a list of steps with a status (pending, in_progress, completed) " +
      "and a priority (high, medium, low). Send the whole list every time. Use it for multi-step work and keep it current.",
    kind: "think",
    input,
    title: (i) => `Plan (${i.entries.filter((e) => e.status === "completed").length}/${i.entries.length} done)`,
    execute: async (i): Promise<ToolResult> => {
      const entries = i.entries.map((e) => ({ content: e.content, priority: e.priority, status: e.status }));
      const lines = entries.map((e) => `[${e.status}] ${e.content}`);
      return { text: lines.length > 0 ? `Plan updated:\n${lines.join("\n")}` : "Plan cleared.", isError: false, data: { plan: { entries } } };
    },
  });
}

/** Lets the plan tool run without approval (it only records the plan). Put it before a mode's rules. */
export const planToolRule: PermissionRule = { tool: PLAN_TOOL_NAME, verdict: "allow", reason: "updating the plan changes nothing" };

/** The ACP `plan` update for a plan tool's successful result, or undefined for any other result. */
export function planUpdateFor(toolName: string, result: ToolResult): SessionUpdate | undefined {
  if (toolName !== PLAN_TOOL_NAME || result.isError) return undefined;
  const plan = (result.data as { plan?: { entries?: unknown } } | undefined)?.plan;
  if (!plan || !Array.isArray(plan.entries)) return undefined;
  const entries: PlanEntry[] = [];
  for (const raw of plan.entries as unknown[]) {
    const parsed = entry.safeParse(raw);
    if (parsed.success) entries.push({ content: parsed.data.content, priority: parsed.data.priority, status: parsed.data.status });
  }
  return { sessionUpdate: "plan", entries };
}
