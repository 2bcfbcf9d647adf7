import type { ElicitationPropertySchema, ElicitationSchema } from "@agentclientprotocol/sdk";
import { z } from "zod";
import type { ToolResult } from "../../core/index.js";
import type { PermissionRule, Tool } from "../../tools/index.js";
import { defineTool } from "../../tools/index.js";
import type { AcpClientHandle } from "./client-handle.js";

/** The built-in tool that asks the human a structured question through `elicitation/create`. */
export const ASK_USER_TOOL_NAME = "ask_user";

const field = z.object({
  name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).describe("Key of the answer (letters, digits, _)"),
  type: z.enum(["string", "number", "integer", "boolean", "choice"]).default("string"),
  title: z.string().optional().describe("Label shown to the user"),
  description: z.string().optional(),
  options: z.array(z.string()).optional().describe("The allowed answers, for type choice"),
  required: z.boolean().default(true),
});
const input = z.object({
  question: z.string().min(1).describe("What you ask the user, in one or two sentences"),
  fields: z.array(field).min(1).max(10).describe("The answers you need, one per field"),
});

/** The `ask_user` tool's input, as validated: a question and the fields of the form the client shows. */
export type AskUserInput = z.output<typeof input>;

function propertyFor(f: AskUserInput["fields"][number]): ElicitationPropertySchema {
  const label = { ...(f.title ? { title: f.title } : {}), ...(f.description ? { description: f.description } : {}) };
  if (f.type === "choice") return { type: "string", enum: f.options ?? [], ...label };
  return { type: f.type, ...label } as ElicitationPropertySchema;
}

/** The form's schema (ACP restricted JSON Schema: flat object of primitive properties). */
function askUserSchema(i: AskUserInput): ElicitationSchema {
  return {
    type: "object",
    properties: Object.fromEntries(i.fields.map((f) => [f.name, propertyFor(f)])),
    required: i.fields.filter((f) => f.required).map((f) => f.name),
  };
}

/**
 * `ask_user`: the model asks the human a question with a small form; the client shows it
 * (`elicitation/create`, form mode) and the answers come back as the tool result. Offer it only
 * when the client advertises `elicitation.form`. A decline or cancel is a result, not an error
 * the model should retry. `askUserRule` lets it run without a permission question (asking is the
 * interaction).
 */
export function askUserTool(client: AcpClientHandle, acpSessionId: string): Tool<AskUserInput> {
  return defineTool({
    name: ASK_USER_TOOL_NAME,
    description:
      "Ask the user a question and get structured answers (a small form). Use it when you need a decision or " +
      "information only the user has; do not use it for things you can find out yourself.",
    kind: "other",
    input,
    title: (i) => `Ask: ${i.question}`,
    execute: async (i, ctx): Promise<ToolResult> => {
      if (i.fields.some((f) => f.type === "choice" && (f.options ?? []).length === 0)) {
        return { text: "a choice field needs options", isError: true };
      }
      const answer = await client.elicit({ mode: "form", message: i.question, requestedSchema: askUserSchema(i), sessionId: acpSessionId, toolCallId: ctx.callId }, ctx.signal);
      const reason = typeof answer._meta?.reason === "string" ? ` (${answer._meta.reason})` : "";
      if (answer.action === "accept") {
        const content = "content" in answer && answer.content ? answer.content : {};
        return { text: `The user answered: ${JSON.stringify(content)}`, isError: false, data: { answers: content } };
      }
      if (answer.action === "decline") return { text: `The user declined to answer${reason}. Go on without it or ask differently.`, isError: false };
      return { text: `The user dismissed the question${reason}.`, isError: false };
    },
  });
}

/** Lets `ask_user` run without a permission question. Put it before a mode's rules. */
export const askUserRule: PermissionRule = { tool: ASK_USER_TOOL_NAME, verdict: "allow", reason: "asking the user is itself the interaction" };
