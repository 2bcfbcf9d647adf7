import { parseArgs } from "node:util";
import { UsageError, parseArgsUsageError } from "./usage.js";

// Every command declares its options once, in a schema: flag, value name, help text, the
// environment variable it falls back to, its default and how its text is read. From that one
// declaration come the argument parsing (node:util parseArgs, the one parser of every command),
// the options part of `--help` and the typed, defaulted values the command runs with.

export type Env = Readonly<Record<string, string | undefined>>;

/** What parseArgs gave for one option: undefined when absent. */
export type Given = string | boolean | string[] | undefined;

/** One option of a command. Build them with `switchOption`, `textOption`, `listOption`. */
export interface CliOption<T> {
  /** The flag without its dashes: `max-sessions`. */
  flag: string;
  type: "string" | "boolean";
  short?: string;
  /** Repeatable (`--models a --models b`). */
  multiple?: boolean;
  /** The value's name in the help: `MS`, `DIR`; none for a switch. */
  value?: string;
  /** The help's label when it is not `--flag VALUE` (e.g. `--sandbox[=MODE]`). */
  label?: string;
  /** Help text: lines without their indentation; `{default}` stands for `default`. */
  help: string;
  /** The help section it is listed in (see `CommandSchema.sections`); default the first. */
  section?: string;
  /** Left out of the help (shown in the command's prose instead). */
  hidden?: boolean;
  /** The environment variable read when the flag is absent (unless `fallback: false`: read elsewhere), and its line under "Environment:". */
  env?: OptionEnv;
  /** Given alone, the flag means this value; the next word is its value only when it is one of `choices` (`--sandbox` = `--sandbox=workspace`). */
  bare?: { value: string; choices: readonly string[] };
  /** The value used when neither the flag nor its variable gives one (shown as `{default}`). */
  default?: T;
  /** The typed value from the command line (undefined: absent) and the environment. */
  read(given: Given, env: Env): T;
}

type Reader<T> = (text: string, flag: string) => T;

export interface OptionEnv {
  name: string;
  help: string;
  fallback?: false;
}

interface OptionBase {
  short?: string;
  label?: string;
  section?: string;
  hidden?: boolean;
  env?: OptionEnv;
}

/** A switch (`--json`): true when given. */
export function switchOption(flag: string, help: string, more: OptionBase = {}): CliOption<boolean> {
  return { flag, type: "boolean", help, ...more, read: (given) => given === true };
}

/** An option with a value, read by `parse` (trimmed, empty = absent unless `keepEmpty`); else the environment's, else `default`. */
export function textOption<T = string>(
  flag: string,
  value: string,
  help: string,
  more: OptionBase & { parse?: Reader<T>; bare?: CliOption<T>["bare"] } = {},
): CliOption<T | undefined> {
  const parse = more.parse ?? ((text: string) => text as T);
  return {
    flag,
    type: "string",
    value,
    help,
    ...more,
    read(given, env) {
      if (typeof given === "string") return parse(given, `--${flag}`);
      const fromEnv = more.env && more.env.fallback !== false ? env[more.env.name] : undefined;
      return fromEnv !== undefined && fromEnv.trim() !== "" ? parse(fromEnv.trim(), more.env!.name) : undefined;
    },
  };
}

/** The same option with a default: never undefined. */
export function withDefault<T>(option: CliOption<T | undefined>, value: T): CliOption<T> {
  return { ...option, default: value, read: (given, env) => option.read(given, env) ?? value };
}

/**
 * A repeatable option whose values may also be comma-separated: `--models a,b --models c` → [a, b, c]
 * (trimmed, empty dropped); with `split: false` each value as given (`--add-dir A --add-dir B`).
 */
export function listOption<T = string>(flag: string, value: string, help: string, more: OptionBase & { item?: Reader<T>; split?: false } = {}): CliOption<T[]> {
  const item = more.item ?? ((text: string) => text as T);
  return {
    flag,
    type: "string",
    multiple: true,
    value,
    help,
    ...more,
    read: (given) => {
      const values = Array.isArray(given) ? given : [];
      return (more.split === false ? values : splitList(values)).map((text) => item(text, `--${flag}`));
    },
  };
}

/** `a,b` and `c` → [a, b, c] (trimmed, empty entries dropped). */
export function splitList(values: readonly string[]): string[] {
  return values.flatMap((v) => v.split(",")).map((s) => s.trim()).filter((s) => s.length > 0);
}

/** Readers of option text, each throwing a UsageError worded `--flag must …`. */
export const read = {
  /** One of `choices`: `--approve must be one of a, b (got "x")`. */
  oneOf<T extends string>(choices: readonly T[], wording?: string): Reader<T> {
    return (text, flag) => {
      if (!(choices as readonly string[]).includes(text)) throw new UsageError(`${flag} must be ${wording ?? `one of ${choices.join(", ")}`} (got "${text}")`);
      return text as T;
    };
  },
  /** A whole number ≥ min; `unit` words the message (`a positive number of milliseconds`), else "integer". */
  whole(min: 0 | 1, unit?: "milliseconds" | "bytes"): Reader<number> {
    return (text, flag) => {
      const value = Number(text);
      if (!/^\d+$/.test(text) || value < min || !Number.isSafeInteger(value)) {
        const sign = min > 0 ? "a positive" : "a non-negative";
        throw new UsageError(`${flag} must be ${unit ? `${sign} number of ${unit}` : `${sign} integer`} (got "${text}")`);
      }
      return value;
    };
  },
  /** Non-blank text, else `${flag} needs ${what}`. */
  nonBlank(what: string): Reader<string> {
    return (text, flag) => {
      if (text.trim() === "") throw new UsageError(`${flag} needs ${what}`);
      return text.trim();
    };
  },
};

export type OptionMap = Record<string, CliOption<unknown>>;

/** The typed values of a schema's options. */
export type OptionValues<O extends OptionMap> = { [K in keyof O]: O[K] extends CliOption<infer T> ? T : never };

export interface CommandSchema<O extends OptionMap> {
  command: string;
  /** The help before the options (usage line, what the command does), ending in a blank line. */
  intro: string;
  options: O;
  /** Help sections by id, in order: `{ main: "Options:" }`; options name theirs (default: the first). */
  sections: Record<string, string>;
  /** Where the help text column starts (default 27). */
  column?: number;
  /** Environment lines that are not an option's (`OTEL_…`, provider keys), listed after the options' own. */
  environment?: readonly string[];
  /** The help after the options and the environment (notes, exit codes); empty or ending in a newline. */
  outro: string;
  /** Words that are not options: refused (default), or kept (`prompt TEXT`); after `--` they are kept apart with `afterDashes`. */
  positionals?: "none" | "words";
}

export interface ParsedCommandLine<O extends OptionMap> {
  values: OptionValues<O>;
  /** Which options were given on the command line (by key), for checks of what goes with what. */
  given: ReadonlySet<keyof O>;
  /** Words that are not options (with `positionals: "words"`), in order, `--` and what follows included. */
  words: string[];
  /** Words after `--` when the command keeps them apart (inspect's agent command); undefined without `--`. */
  afterDashes: string[] | undefined;
}

/**
 * Parses a command line against a schema: unknown options, missing values and stray words are
 * UsageErrors in the words every command uses (`unknown option --x`, `--x needs a value`).
 */
export function parseCommandLine<O extends OptionMap>(schema: CommandSchema<O>, argv: readonly string[], env: Env = {}, options: { splitAtDashes?: boolean } = {}): ParsedCommandLine<O> {
  const dashes = options.splitAtDashes ? argv.indexOf("--") : -1;
  const own = dashes >= 0 ? argv.slice(0, dashes) : argv;
  const entries = Object.entries(schema.options);
  let parsed: { values: Record<string, Given>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: bareValues(entries.map(([, o]) => o), own),
      strict: true,
      allowPositionals: schema.positionals === "words",
      options: Object.fromEntries(entries.map(([, o]) => [o.flag, { type: o.type, ...(o.multiple ? { multiple: true } : {}), ...(o.short ? { short: o.short } : {}) }])),
    }) as { values: Record<string, Given>; positionals: string[] };
  } catch (error) {
    throw parseArgsUsageError(error);
  }
  const given = new Set<keyof O>(entries.filter(([, o]) => parsed.values[o.flag] !== undefined).map(([key]) => key as keyof O));
  const values = Object.fromEntries(entries.map(([key, o]) => [key, o.read(parsed.values[o.flag], env)])) as OptionValues<O>;
  return { values, given, words: parsed.positionals, afterDashes: dashes >= 0 ? argv.slice(dashes + 1) : undefined };
}

/** `--sandbox` without a value becomes `--sandbox=workspace` (parseArgs wants a value for a string option). */
function bareValues(options: readonly CliOption<unknown>[], argv: readonly string[]): string[] {
  const bare = new Map(options.filter((o) => o.bare).map((o) => [`--${o.flag}`, o.bare!]));
  if (bare.size === 0) return [...argv];
  return argv.map((arg, i) => {
    const b = bare.get(arg);
    return b && !b.choices.includes(argv[i + 1] ?? "") ? `${arg}=${b.value}` : arg;
  });
}

/** The command's `--help`: intro, the options by section, the environment, the outro. */
export function renderHelp<O extends OptionMap>(schema: CommandSchema<O>): string {
  const column = schema.column ?? 27;
  const options = Object.values(schema.options).filter((o) => !o.hidden);
  const [first] = Object.keys(schema.sections);
  const parts = [schema.intro];
  for (const [id, title] of Object.entries(schema.sections)) {
    const inSection = options.filter((o) => (o.section ?? first) === id);
    if (inSection.length === 0) continue;
    parts.push(`${id === first ? "" : "\n"}${title}\n${inSection.map((o) => helpEntry(o, column)).join("")}`);
  }
  const envLine = ({ name, help }: OptionEnv): string => (name.length <= column - 3 ? `${name.padEnd(column - 3)} ${help}` : `${name}  ${help}`);
  const environment = [...options.flatMap((o) => (o.env ? [envLine(o.env)] : [])), ...(schema.environment ?? [])];
  if (environment.length > 0) parts.push(`\nEnvironment:\n${environment.map((line) => `  ${line}\n`).join("")}`);
  if (schema.outro !== "") parts.push(`\n${schema.outro}`);
  return parts.join("");
}

/** One option's lines: the label, then the text in its column (on the next line when it starts with a newline or the label is too long). */
function helpEntry(option: CliOption<unknown>, column: number): string {
  const label = option.label ?? `${option.short ? `-${option.short}, ` : ""}--${option.flag}${option.value ? ` ${option.value}` : ""}`;
  const text = option.help.replaceAll("{default}", String(option.default));
  const indent = " ".repeat(column);
  const [head = "", ...rest] = text.split("\n");
  const body = rest.map((line) => (line === "" ? "\n" : `${indent}${line}\n`)).join("");
  if (head === "") return `  ${label}\n${body}`;
  const lead = label.length <= column - 3 ? `  ${label.padEnd(column - 3)} ` : `  ${label}  `;
  return `${lead}${head}\n${body}`;
}
