import { z } from "zod";
import type { ToolLocation, ToolResult } from "../core/index.js";
import { AgentKitError } from "../core/index.js";
import type { JsonSchema } from "../model/types.js";
import type { Tool, ToolDefinition } from "./types.js";

/** Thrown by `tool.parse` when the model's input does not fit the schema. */
export class ToolInputError extends AgentKitError {
  constructor(toolName: string, detail: string) {
    super("tool_input", `invalid input for ${toolName}: ${detail}`);
    this.name = "ToolInputError";
  }
}

/** A failed tool result: failures and denials are data fed back to the model, not exceptions. */
export function errorResult(text: string, data?: unknown): ToolResult {
  return data === undefined ? { text, isError: true } : { text, isError: true, data };
}

export function toJsonSchema(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;
  delete json.$schema;
  return json;
}

/** Builds a Tool from a zod input schema. */
export function defineTool<S extends z.ZodType>(definition: ToolDefinition<S>): Tool<z.output<S>> {
  const inputSchema = toJsonSchema(definition.input);
  return {
    name: definition.name,
    description: definition.description,
    kind: definition.kind,
    inputSchema,
    parse(input: unknown): z.output<S> {
      const parsed = definition.input.safeParse(input);
      if (!parsed.success) throw new ToolInputError(definition.name, z.prettifyError(parsed.error));
      return parsed.data;
    },
    title: (input, context) => definition.title?.(input, context) ?? definition.name,
    locations: (input, context): ToolLocation[] => definition.locations?.(input, context) ?? [],
    target: (input, context) => definition.target?.(input, context) ?? { paths: [] },
    execute: definition.execute,
  };
}
