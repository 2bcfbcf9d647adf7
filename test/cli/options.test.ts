import { describe, expect, it } from "vitest";
import { listOption, parseCommandLine, read, renderHelp, switchOption, textOption, withDefault, type CommandSchema } from "../../src/cli/options.js";

const options = {
  count: withDefault(textOption("count", "N", "how many (default {default})", { parse: read.whole(1) }), 3),
  mode: textOption("mode", "MODE", "a mode", { parse: read.oneOf(["a", "b"] as const), bare: { value: "a", choices: ["a", "b"] }, label: "--mode[=MODE]" }),
  name: textOption("name", "NAME", "\nwho (env fallback)", { env: { name: "DEMO_NAME", help: "the name" } }),
  tags: listOption("tag", "T[,T]", "tags (repeatable)"),
  verbose: switchOption("verbose", "say more", { section: "more" }),
  help: switchOption("help", "show this help", { short: "h" }),
};
const schema: CommandSchema<typeof options> = { command: "demo", intro: "Usage: x\n\n", options, sections: { main: "Options:", more: "More:" }, column: 20, outro: "Bye.\n" };

describe("the option schema", () => {
  it("parses to typed values with defaults, environment fallbacks, bare values and comma lists", () => {
    const { values, given } = parseCommandLine(schema, ["--mode", "--tag", "x,y", "--tag=z", "-h"], { DEMO_NAME: " ann " });
    expect(values).toEqual({ count: 3, mode: "a", name: "ann", tags: ["x", "y", "z"], verbose: false, help: true });
    expect([...given].sort()).toEqual(["help", "mode", "tags"]);
    expect(parseCommandLine(schema, ["--mode", "b", "--count=7"]).values).toMatchObject({ mode: "b", count: 7 });
  });

  it("words every mistake the same way for every command", () => {
    const error = (argv: string[]): string => {
      try {
        parseCommandLine(schema, argv);
      } catch (e) {
        return (e as Error).message;
      }
      return "no error";
    };
    expect(error(["--bogus"])).toBe("unknown option --bogus");
    expect(error(["--count"])).toBe("--count needs a value");
    expect(error(["--count", "0"])).toBe('--count must be a positive integer (got "0")');
    expect(error(["--mode=c"])).toBe('--mode must be one of a, b (got "c")');
    expect(error(["stray"])).toBe("unexpected argument stray: this command takes options only");
  });

  it("keeps the words after -- apart when asked (inspect's agent command)", () => {
    const parsed = parseCommandLine(schema, ["--verbose", "--", "agent", "--bogus"], {}, { splitAtDashes: true });
    expect(parsed.afterDashes).toEqual(["agent", "--bogus"]);
    expect(parsed.values.verbose).toBe(true);
  });

  it("generates the help from the same declarations: labels, defaults, sections, environment", () => {
    expect(renderHelp(schema)).toBe(
      [
        "Usage: x",
        "",
        "Options:",
        "  --count N         how many (default 3)",
        "  --mode[=MODE]     a mode",
        "  --name NAME",
        "                    who (env fallback)",
        "  --tag T[,T]       tags (repeatable)",
        "  -h, --help        show this help",
        "",
        "More:",
        "  --verbose         say more",
        "",
        "Environment:",
        "  DEMO_NAME         the name",
        "",
        "Bye.",
        "",
      ].join("\n"),
    );
  });
});
