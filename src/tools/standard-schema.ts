/**
 * The Standard Schema interface (https://standardschema.dev), copied as its authors intend, so
 * that zod 3 (≥3.24), zod 4, valibot, arktype and others all fit `defineTool` without a
 * dependency on any one of them. Only the parts we use.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly "~standard": StandardSchemaProps<Input, Output>;
}

export interface StandardSchemaProps<Input = unknown, Output = Input> {
  readonly version: 1;
  /** The schema library's name ("zod", "valibot", "arktype", …). */
  readonly vendor: string;
  readonly validate: (value: unknown, options?: { readonly libraryOptions?: Record<string, unknown> | undefined }) => StandardResult<Output> | Promise<StandardResult<Output>>;
  readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  /** Standard JSON Schema (https://standardschema.dev/json-schema), where the library offers it. */
  readonly jsonSchema?: StandardJsonSchemaConverter | undefined;
}

export type StandardResult<Output> = { readonly value: Output; readonly issues?: undefined } | { readonly issues: ReadonlyArray<StandardIssue> };

export interface StandardIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

export interface StandardJsonSchemaConverter {
  readonly input: (options: { readonly target: string; readonly libraryOptions?: Record<string, unknown> | undefined }) => Record<string, unknown>;
}

/** The value a schema produces (what a tool's `execute` receives). */
export type InferOutput<S extends StandardSchemaV1> = NonNullable<S["~standard"]["types"]>["output"];
