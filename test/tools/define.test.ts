import { describe, expect, it } from "vitest";
import { z } from "zod";
import { z as z3 } from "zod/v3";
import { ConfigError } from "../../src/core/index.js";
import { ToolInputError, defineTool } from "../../src/tools/index.js";
import type { StandardSchemaV1 } from "../../src/tools/index.js";

const ok = async () => ({ text: "ok", isError: false });

/** A schema library that is neither zod nor anything we know: only the Standard Schema interface. */
function customSchema(withJsonSchema: boolean): StandardSchemaV1<unknown, { city: string }> {
  return {
    "~standard": {
      version: 1,
      vendor: "custom",
      validate: (value) =>
        typeof value === "object" && value !== null && typeof (value as { city?: unknown }).city === "string"
          ? { value: value as { city: string } }
          : { issues: [{ message: "expected a string", path: [{ key: "city" }] }] },
      ...(withJsonSchema ? { jsonSchema: { input: () => ({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }) } } : {}),
    },
  };
}

describe("defineTool accepts any Standard Schema", () => {
  it("derives a schema object's JSON Schema once; each tool owns its copy", () => {
    let conversions = 0;
    const base = customSchema(true)["~standard"];
    const schema: StandardSchemaV1<unknown, { city: string }> = {
      "~standard": { ...base, jsonSchema: { input: (options) => (conversions++, base.jsonSchema!.input(options)) } },
    };
    const first = defineTool({ name: "a", description: "d", kind: "fetch", input: schema, execute: ok });
    const second = defineTool({ name: "b", description: "d", kind: "fetch", input: schema, execute: ok });
    expect(conversions).toBe(1);
    expect(second.inputSchema).toEqual(first.inputSchema);
    (first.inputSchema as { required: string[] }).required.push("changed");
    expect(second.inputSchema).toEqual({ type: "object", properties: { city: { type: "string" } }, required: ["city"] });
  });

  it("zod 4: JSON Schema for the model, validation with a readable error", () => {
    const tool = defineTool({ name: "weather", description: "d", kind: "fetch", input: z.object({ city: z.string() }), execute: ok });
    expect(tool.inputSchema).toEqual({ type: "object", properties: { city: { type: "string" } }, required: ["city"] });
    expect(tool.parse({ city: "Bern" })).toEqual({ city: "Bern" });
    expect(() => tool.parse({ city: 5 })).toThrow(ToolInputError);
    expect(() => tool.parse({ city: 5 })).toThrow(/invalid input for weather: ✖ .*\n {2}→ at city/);
  });

  it("zod 3: the schema converts (it crashed reading 'def' before) and validates", () => {
    const tool = defineTool({ name: "weather", description: "d", kind: "fetch", input: z3.object({ city: z3.string(), days: z3.number().int().optional() }), execute: ok });
    expect(tool.inputSchema).toMatchObject({ type: "object", properties: { city: { type: "string" }, days: { type: "integer" } }, required: ["city"] });
    expect(tool.inputSchema.$schema).toBeUndefined();
    const input: { city: string; days?: number | undefined } = tool.parse({ city: "Bern", days: 3 });
    expect(input).toEqual({ city: "Bern", days: 3 });
    expect(() => tool.parse({ city: "Bern", days: 1.5 })).toThrow(/invalid input for weather: ✖ .*integer.*\n {2}→ at days/);
  });

  it("another library: its Standard JSON Schema, or an explicit inputJSONSchema, or a clear error", () => {
    const withJson = defineTool({ name: "w", description: "d", kind: "fetch", input: customSchema(true), execute: ok });
    expect(withJson.inputSchema).toEqual({ type: "object", properties: { city: { type: "string" } }, required: ["city"] });
    expect(() => withJson.parse({})).toThrow("invalid input for w: ✖ expected a string\n  → at city");

    expect(() => defineTool({ name: "w", description: "d", kind: "fetch", input: customSchema(false), execute: ok })).toThrow(
      /defineTool\("w"\): cannot derive a JSON Schema for the model from this custom schema .*pass one explicitly as inputJSONSchema/,
    );
    const explicit = { type: "object", properties: { city: { type: "string", description: "a city" } } };
    const given = defineTool({ name: "w", description: "d", kind: "fetch", input: customSchema(false), inputJSONSchema: explicit, execute: ok });
    expect(given.inputSchema).toBe(explicit);
    expect(given.parse({ city: "Bern" })).toEqual({ city: "Bern" });
  });

  it("something that is not a Standard Schema (zod 3 before 3.24) is refused with what to do", () => {
    const old = { _def: {}, safeParse: () => ({ success: true }) } as unknown as StandardSchemaV1;
    expect(() => defineTool({ name: "w", description: "d", kind: "fetch", input: old, execute: ok })).toThrow(ConfigError);
    expect(() => defineTool({ name: "w", description: "d", kind: "fetch", input: old, execute: ok })).toThrow(/must be a Standard Schema .*npm install zod@\^3\.25/);
  });

  it("an asynchronous schema is refused at parse with a readable error, not a pending promise", () => {
    const schema: StandardSchemaV1<unknown, string> = { "~standard": { version: 1, vendor: "custom", validate: async (value) => ({ value: String(value) }) } };
    const tool = defineTool({ name: "w", description: "d", kind: "fetch", input: schema, inputJSONSchema: { type: "object" }, execute: ok });
    expect(() => tool.parse("x")).toThrow(/validates asynchronously/);
  });
});
