import { createInterface } from "node:readline";
import type * as acp from "@agentclientprotocol/sdk";
import type { AcpElicitationHandler } from "../acp/client/index.js";
import { oneAtATime } from "./prompt-url.js";
import { sanitizeDeep } from "./terminal-safe.js";

type Property = NonNullable<acp.ElicitationSchema["properties"]>[string];
type Value = string | number | boolean | string[];

/** Without a terminal nobody can answer: every form is declined, saying why. */
export const declineForms: AcpElicitationHandler = async () => ({
  action: "decline",
  _meta: { reason: "agentkit-acp prompt runs without a terminal to ask on, so questions are declined" },
});

/**
 * Agent questions (`elicitation/create`, form mode) asked field by field on stdin/stderr, one
 * form at a time. `/decline` or `/cancel` at any field ends the form that way.
 */
export function terminalForm(input: NodeJS.ReadableStream, output: NodeJS.WritableStream, onInterrupt: () => void, terminal = true, ask = oneAtATime()): AcpElicitationHandler {
  return (request, signal) => ask(() => askForm(request, signal, input, output, onInterrupt, terminal));
}

async function askForm(
  asked: acp.CreateElicitationRequest,
  signal: AbortSignal,
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
  onInterrupt: () => void,
  terminal: boolean,
): Promise<acp.CreateElicitationResponse> {
  // The message, titles, descriptions and choices are the agent's text: shown without control characters.
  const request = sanitizeDeep(asked);
  if (signal.aborted || request.mode !== "form") return { action: "cancel" };
  const schema = (request as { requestedSchema?: acp.ElicitationSchema }).requestedSchema ?? {};
  const required = new Set(schema.required ?? []);
  output.write(`\n\u001b[1m? The agent asks:\u001b[0m ${request.message}\n  (answer each field; /decline or /cancel to refuse)\n`);
  const rl = createInterface({ input, output, terminal });
  rl.on("SIGINT", onInterrupt);
  const ask = (prompt: string): Promise<string | undefined> =>
    new Promise((resolve) => {
      const onAbort = (): void => resolve(undefined);
      signal.addEventListener("abort", onAbort, { once: true });
      rl.question(prompt, (answer) => {
        signal.removeEventListener("abort", onAbort);
        resolve(answer);
      });
    });
  const content: Record<string, Value> = {};
  try {
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      const label = property.title ?? name;
      if (property.description) output.write(`  ${property.description}\n`);
      const choices = choicesOf(property);
      choices?.forEach((c, i) => output.write(`    ${i + 1}) ${c}\n`));
      for (;;) {
        const reply = await ask(`  ${label}${hint(property, required.has(name))}: `);
        if (reply === undefined) {
          output.write("\n(question withdrawn by the agent)\n");
          return { action: "cancel" };
        }
        const text = reply.trim();
        if (text === "/decline") return { action: "decline" };
        if (text === "/cancel") return { action: "cancel" };
        if (text === "" && !required.has(name)) break;
        const value = parse(property, text, choices);
        if (value !== undefined) {
          content[name] = value;
          break;
        }
        output.write(`  Please give ${expected(property, choices)}.\n`);
      }
    }
    return { action: "accept", content };
  } finally {
    rl.close();
  }
}

function choicesOf(property: Property): string[] | undefined {
  const p = property as { enum?: unknown; oneOf?: unknown };
  if (Array.isArray(p.enum)) return p.enum.filter((v): v is string => typeof v === "string");
  if (Array.isArray(p.oneOf)) return p.oneOf.flatMap((o: { const?: unknown }) => (typeof o?.const === "string" ? [o.const] : []));
  return undefined;
}

function hint(property: Property, required: boolean): string {
  const type = (property as { type?: string }).type;
  const kind = type === "boolean" ? " (y/n)" : type === "number" || type === "integer" ? ` (${type})` : "";
  return `${kind}${required ? "" : " [optional]"}`;
}

function expected(property: Property, choices: string[] | undefined): string {
  if (choices) return `a number from 1 to ${choices.length}`;
  const type = (property as { type?: string }).type;
  return type === "boolean" ? "y or n" : type === "number" || type === "integer" ? `a${type === "integer" ? "n integer" : " number"}` : "an answer";
}

function parse(property: Property, text: string, choices: string[] | undefined): Value | undefined {
  if (text === "") return undefined;
  if (choices) return choices[Number(text) - 1] ?? (choices.includes(text) ? text : undefined);
  switch ((property as { type?: string }).type) {
    case "boolean":
      return /^(y|yes|true)$/i.test(text) ? true : /^(n|no|false)$/i.test(text) ? false : undefined;
    case "number":
      return Number.isFinite(Number(text)) ? Number(text) : undefined;
    case "integer":
      return Number.isInteger(Number(text)) ? Number(text) : undefined;
    default:
      return text;
  }
}
