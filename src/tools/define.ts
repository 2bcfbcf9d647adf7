import { createRequire } from "node:module";
import { z } from "zod";
import type { ToolLocation, ToolResult } from "../core/index.js";
import { AgentKitError, ConfigError } from "../core/index.js";
import type { JsonSchema } from "../model/types.js";
import type { InferOutput, StandardIssue, StandardSchemaV1 } from "./standard-schema.js";
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

/** Builds a Tool from any Standard Schema (zod 3 ≥3.24, zod 4, valibot, arktype, …). */
export function defineTool<S extends StandardSchemaV1>(definition: ToolDefinition<S>): Tool<InferOutput<S>> {
  const standard = standardProps(definition.name, definition.input);
  const inputSchema = definition.inputJSONSchema ?? cachedJsonSchema(definition.name, definition.input);
  return {
    name: definition.name,
    description: definition.description,
    kind: definition.kind,
    inputSchema,
    parse(input: unknown): InferOutput<S> {
      const result = standard.validate(input);
      if (result instanceof Promise) {
        throw new ToolInputError(definition.name, "the schema validates asynchronously; defineTool needs a synchronous schema");
      }
      if (result.issues) throw new ToolInputError(definition.name, formatIssues(result.issues));
      return result.value as InferOutput<S>;
    },
    title: (input, context) => definition.title?.(input, context) ?? definition.name,
    locations: (input, context): ToolLocation[] => definition.locations?.(input, context) ?? [],
    target: (input, context) => definition.target?.(input, context) ?? { paths: [] },
    execute: definition.execute,
  };
}

function standardProps(name: string, schema: StandardSchemaV1): StandardSchemaV1["~standard"] {
  const props = (schema as Partial<StandardSchemaV1> | null)?.["~standard"];
  if (typeof props?.validate !== "function") {
    throw new ConfigError(
      `defineTool("${name}"): input must be a Standard Schema (zod ≥3.24, zod 4, valibot ≥1, arktype ≥2 …); ` +
        `for an older zod 3, upgrade it (npm install zod@^3.25)`,
    );
  }
  return props;
}

// A schema object derives the same JSON Schema every time, and deriving costs (zod: ~0.3 ms a
// tool): the built-in tools are defined again for every session from module-level schemas.
const derived = new WeakMap<object, JsonSchema>();

/** deriveJsonSchema once per schema object; each tool gets its own copy (callers may adjust theirs). */
function cachedJsonSchema(name: string, schema: StandardSchemaV1): JsonSchema {
  let json = derived.get(schema);
  if (json === undefined) {
    json = deriveJsonSchema(name, schema);
    derived.set(schema, json);
  }
  return structuredClone(json);
}

/** The JSON Schema the model sees: zod 4 natively, then Standard JSON Schema, then zod 3 via the AI SDK. */
function deriveJsonSchema(name: string, schema: StandardSchemaV1): JsonSchema {
  const props = schema["~standard"];
  try {
    let json: JsonSchema | undefined;
    if ("_zod" in schema) json = toJsonSchema(schema as unknown as z.ZodType);
    else if (props.jsonSchema) json = props.jsonSchema.input({ target: "draft-2020-12" }) as JsonSchema;
    else if (props.vendor === "zod") json = zod3JsonSchema(schema);
    if (json) {
      delete json.$schema;
      return json;
    }
  } catch (error) {
    throw cannotConvert(name, props.vendor, error instanceof Error ? error.message : String(error));
  }
  throw cannotConvert(name, props.vendor, "the library offers no Standard JSON Schema converter");
}

function cannotConvert(name: string, vendor: string, why: string): ConfigError {
  return new ConfigError(
    `defineTool("${name}"): cannot derive a JSON Schema for the model from this ${vendor} schema (${why}); ` +
      `pass one explicitly as inputJSONSchema, e.g. the output of your library's JSON Schema converter`,
  );
}

type ZodSchemaHelper = (schema: unknown) => { jsonSchema: unknown };

/** zod 3 has no JSON Schema of its own: the AI SDK's converter, loaded only when a zod 3 schema appears. */
function zod3JsonSchema(schema: StandardSchemaV1): JsonSchema {
  const { zodSchema } = createRequire(import.meta.url)("@ai-sdk/provider-utils") as { zodSchema: ZodSchemaHelper };
  const json = zodSchema(schema).jsonSchema;
  if (json === null || typeof json !== "object" || "then" in json) throw new Error("the converter gave no JSON Schema");
  return json as JsonSchema;
}

/** One line per issue: `path: message`, as zod's own pretty printer does. */
function formatIssues(issues: ReadonlyArray<StandardIssue>): string {
  return issues
    .map((issue) => {
      const path = (issue.path ?? []).map((part) => String(typeof part === "object" ? part.key : part)).join(".");
      return path ? `✖ ${issue.message}\n  → at ${path}` : `✖ ${issue.message}`;
    })
    .join("\n");
}
