import { existsSync } from "node:fs";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ToolRegistry, builtinTools } from "../../src/tools/index.js";
import type { Tool } from "../../src/tools/index.js";
import { makeContext, makeWorkspace, secretText } from "./support.js";
import type { Workspace } from "./support.js";

let ws: Workspace;
beforeEach(async () => {
  ws = await makeWorkspace();
});
afterEach(async () => {
  await ws.cleanup();
});

const registry = new ToolRegistry(builtinTools());
function tool(name: string): Tool {
  const found = registry.get(name);
  if (found === undefined) throw new Error(`no tool ${name}`);
  return found;
}
async function run(name: string, input: unknown, ctx = makeContext(ws.root)) {
  const t = tool(name);
  return t.execute(t.parse(input), ctx);
}

describe("escape attempts on read_file, write_file and edit_file", () => {
  const attempts: Array<{ label: string; path: (w: Workspace) => string; message: RegExp }> = [
    { label: ".. escape", path: () => "../../outside/secret.txt", message: /outside the approved roots/ },
    { label: "absolute path outside", path: (w) => w.secret, message: /outside the approved roots/ },
    { label: "symlink to a file outside", path: () => "link-out-file", message: /symlink .*outside the approved roots/ },
    { label: "symlink to a directory outside", path: () => "link-out-dir/secret.txt", message: /symlink .*outside the approved roots/ },
    { label: "dangling symlink", path: () => "dangling", message: /symlink whose target does not exist/ },
    { label: "/ws/app-evil next to root /ws/app (absolute)", path: (w) => path.join(w.evil, "file.txt"), message: /outside the approved roots/ },
    { label: "/ws/app-evil next to root /ws/app (relative)", path: () => "../app-evil/file.txt", message: /outside the approved roots/ },
    { label: "NUL byte", path: () => "inside.txt\0../../outside/secret.txt", message: /NUL byte/ },
  ];
  const calls: Array<{ tool: string; input: (p: string) => unknown }> = [
    { tool: "read_file", input: (p) => ({ path: p }) },
    { tool: "write_file", input: (p) => ({ path: p, content: "pwned\n" }) },
    { tool: "edit_file", input: (p) => ({ path: p, old_text: "secret", new_text: "pwned" }) },
  ];

  for (const call of calls) {
    for (const attempt of attempts) {
      it(`${call.tool}: ${attempt.label} is refused`, async () => {
        const requested = attempt.path(ws);
        const result = await run(call.tool, call.input(requested));
        expect(result.isError).toBe(true);
        expect(result.text).toMatch(attempt.message);
        expect(result.text).toContain(JSON.stringify(requested));
        expect(result.text).not.toContain("top secret");
        // Nothing outside was changed or created.
        expect(await readFile(ws.secret, "utf8")).toBe(secretText);
        expect(await readFile(path.join(ws.evil, "file.txt"), "utf8")).toBe("evil\n");
        expect(existsSync(ws.danglingTarget)).toBe(false);
      });
    }
  }

  it("legitimate paths are allowed: inside, absolute inside, .. that stays inside, symlink inside → inside", async () => {
    expect((await run("read_file", { path: "inside.txt" })).text).toBe("line one\nline two\nline three\n");
    expect((await run("read_file", { path: path.join(ws.root, "sub/nested.txt") })).text).toBe("nested\n");
    expect((await run("read_file", { path: "sub/../inside.txt" })).isError).toBe(false);
    expect((await run("read_file", { path: "link-in" })).text).toContain("line two");
    const edited = await run("edit_file", { path: "link-in", old_text: "line two", new_text: "line 2" });
    expect(edited.isError).toBe(false);
    expect(await readFile(path.join(ws.root, "inside.txt"), "utf8")).toBe("line one\nline 2\nline three\n");
  });

  it("list_dir, glob, grep and shell cwd refuse outside paths too", async () => {
    for (const [name, input] of [
      ["list_dir", { path: "link-out-dir" }],
      ["list_dir", { path: ws.evil }],
      ["glob", { pattern: "*", path: "../../outside" }],
      ["grep", { pattern: "secret", path: "link-out-dir" }],
      ["grep", { pattern: "secret", path: "link-out-file" }],
      ["shell", { command: "cat secret.txt", cwd: ws.outside }],
    ] as const) {
      const result = await run(name, input);
      expect(result.isError, `${name} ${JSON.stringify(input)}`).toBe(true);
      expect(result.text).toMatch(/outside the approved roots/);
    }
  });
});

describe("read_file", () => {
  it("reads a line range (1-based line, limit = line count)", async () => {
    expect((await run("read_file", { path: "inside.txt", line: 2, limit: 1 })).text).toBe("line two\n");
    expect((await run("read_file", { path: "inside.txt", line: 2 })).text).toBe("line two\nline three\n");
    expect((await run("read_file", { path: "inside.txt", line: 10 })).text).toBe("(no lines in the requested range)");
  });

  it("reports a missing file and a directory clearly", async () => {
    const missing = await run("read_file", { path: "nope.txt" });
    expect(missing).toMatchObject({ isError: true, text: "file not found: nope.txt" });
    expect((await run("read_file", { path: "sub" })).text).toMatch(/is a directory/);
  });

  it("truncates a large file at a line boundary and says where to continue", async () => {
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i + 1} ${"x".repeat(20)}`).join("\n");
    await writeFile(path.join(ws.root, "big.txt"), lines);
    const t = builtinTools({ readMaxBytes: 300 }).find((x) => x.name === "read_file") as Tool;
    const result = await t.execute(t.parse({ path: "big.txt" }), makeContext(ws.root));
    expect(result.text).toMatch(/^line 1 x+\n/);
    const next = Number(/continue with line: (\d+)/.exec(result.text)?.[1]);
    const shownLines = result.text.split("\n").filter((l) => l.startsWith("line "));
    expect(next).toBe(shownLines.length + 1);
    const rest = await t.execute(t.parse({ path: "big.txt", line: next, limit: 1 }), makeContext(ws.root));
    expect(rest.text).toBe(`line ${next} ${"x".repeat(20)}\n`);
  });

  it("rejects bad input through parse", () => {
    expect(() => tool("read_file").parse({ path: "a", line: 0 })).toThrow(/invalid input for read_file/);
    expect(() => tool("read_file").parse({})).toThrow(/path/);
  });

  it("describes the call: title, locations, target", () => {
    const t = tool("read_file");
    const input = t.parse({ path: "src/app.ts", line: 3 });
    const c = { cwd: "/ws/app", roots: ["/ws/app"] };
    expect(t.kind).toBe("read");
    expect(t.title(input, c)).toBe("Read src/app.ts");
    expect(t.locations(input, c)).toEqual([{ path: "/ws/app/src/app.ts", line: 3 }]);
    expect(t.target(input, c)).toEqual({ paths: ["/ws/app/src/app.ts"] });
  });
});

describe("write_file", () => {
  it("creates a file (and its directories) with a diff whose oldText is null", async () => {
    const result = await run("write_file", { path: "new/dir/a.txt", content: "hello\nworld\n" });
    const file = path.join(ws.root, "new/dir/a.txt");
    expect(result.isError).toBe(false);
    expect(result.text).toBe("Created new/dir/a.txt (2 lines)");
    expect(result.diffs).toEqual([{ path: file, oldText: null, newText: "hello\nworld\n" }]);
    expect(await readFile(file, "utf8")).toBe("hello\nworld\n");
  });

  it("replaces a file with a diff carrying the old content", async () => {
    const result = await run("write_file", { path: "inside.txt", content: "new\n" });
    expect(result.text).toBe("Wrote inside.txt (1 line)");
    expect(result.diffs).toEqual([{ path: path.join(ws.root, "inside.txt"), oldText: "line one\nline two\nline three\n", newText: "new\n" }]);
  });

  it("describes the call", () => {
    const t = tool("write_file");
    const input = t.parse({ path: "/ws/app/src/app.ts", content: "" });
    expect(t.kind).toBe("edit");
    expect(t.title(input, { cwd: "/ws/app", roots: ["/ws/app"] })).toBe("Write src/app.ts");
    expect(t.target(input, { cwd: "/ws/app", roots: ["/ws/app"] })).toEqual({ paths: ["/ws/app/src/app.ts"] });
  });

  it("writes through ctx.files (injectable operations)", async () => {
    const writes: string[] = [];
    const ctx = makeContext(ws.root, {
      files: {
        readTextFile: () => Promise.reject(Object.assign(new Error("missing"), { code: "ENOENT" })),
        writeTextFile: (p) => {
          writes.push(p);
          return Promise.resolve();
        },
      },
    });
    const result = await run("write_file", { path: "via-host.txt", content: "x" }, ctx);
    expect(result.diffs?.[0]?.oldText).toBeNull();
    expect(writes).toEqual([path.join(ws.root, "via-host.txt")]);
    expect(existsSync(path.join(ws.root, "via-host.txt"))).toBe(false);
  });
});

describe("edit_file", () => {
  beforeEach(async () => {
    await writeFile(path.join(ws.root, "code.ts"), "const a = 1;\nconst b = 1;\nconsole.log(a);\n");
  });

  it("replaces one exact match and returns old and new full text", async () => {
    const result = await run("edit_file", { path: "code.ts", old_text: "const b = 1;", new_text: "const b = 2;" });
    expect(result).toMatchObject({ isError: false, text: "Edited code.ts: replaced 1 occurrence" });
    expect(result.diffs).toEqual([
      {
        path: path.join(ws.root, "code.ts"),
        oldText: "const a = 1;\nconst b = 1;\nconsole.log(a);\n",
        newText: "const a = 1;\nconst b = 2;\nconsole.log(a);\n",
      },
    ]);
    expect(await readFile(path.join(ws.root, "code.ts"), "utf8")).toBe("const a = 1;\nconst b = 2;\nconsole.log(a);\n");
  });

  it("fails clearly when old_text is missing or ambiguous, leaving the file unchanged", async () => {
    const missing = await run("edit_file", { path: "code.ts", old_text: "const c", new_text: "x" });
    expect(missing.isError).toBe(true);
    expect(missing.text).toMatch(/old_text was not found in code.ts/);
    const ambiguous = await run("edit_file", { path: "code.ts", old_text: " = 1;", new_text: " = 3;" });
    expect(ambiguous.isError).toBe(true);
    expect(ambiguous.text).toMatch(/occurs 2 times in code.ts.*replace_all/);
    expect(await readFile(path.join(ws.root, "code.ts"), "utf8")).toBe("const a = 1;\nconst b = 1;\nconsole.log(a);\n");
    expect((await run("edit_file", { path: "nope.ts", old_text: "a", new_text: "b" })).text).toMatch(/file not found: nope.ts/);
    expect((await run("edit_file", { path: "code.ts", old_text: "", new_text: "b" })).text).toMatch(/old_text is empty/);
  });

  it("replace_all replaces every occurrence, and $ patterns stay literal", async () => {
    const result = await run("edit_file", { path: "code.ts", old_text: " = 1;", new_text: " = $&$1;", replace_all: true });
    expect(result.text).toBe("Edited code.ts: replaced 2 occurrences");
    expect(await readFile(path.join(ws.root, "code.ts"), "utf8")).toBe("const a = $&$1;\nconst b = $&$1;\nconsole.log(a);\n");
  });

  it("describes the call", () => {
    const t = tool("edit_file");
    const input = t.parse({ path: "src/app.ts", old_text: "a", new_text: "b" });
    expect(t.kind).toBe("edit");
    expect(t.title(input, { cwd: "/ws/app", roots: ["/ws/app"] })).toBe("Edit src/app.ts");
    expect(t.locations(input, { cwd: "/ws/app", roots: ["/ws/app"] })).toEqual([{ path: "/ws/app/src/app.ts" }]);
  });
});

describe("list_dir", () => {
  it("lists entries with / for directories and @ for symlinks", async () => {
    const result = await run("list_dir", { path: "." });
    expect(result.text.split("\n")).toEqual(["dangling@", "inside.txt", "link-in@", "link-out-dir@", "link-out-file@", "sub/"]);
    expect((await run("list_dir", { path: "nope" })).text).toBe("directory not found: nope");
    expect((await run("list_dir", { path: "inside.txt" })).text).toMatch(/not a directory/);
  });

  it("bounds the number of entries", async () => {
    const t = builtinTools({ listMaxEntries: 2 }).find((x) => x.name === "list_dir") as Tool;
    const result = await t.execute(t.parse({ path: "." }), makeContext(ws.root));
    expect(result.text).toBe("dangling@\ninside.txt\n[4 more entries not shown]");
  });
});

describe("glob", () => {
  beforeEach(async () => {
    await mkdir(path.join(ws.root, "src/deep"), { recursive: true });
    await mkdir(path.join(ws.root, "node_modules/pkg"), { recursive: true });
    await mkdir(path.join(ws.root, ".git"), { recursive: true });
    await writeFile(path.join(ws.root, "src/a.ts"), "export const a = 1;\n");
    await writeFile(path.join(ws.root, "src/deep/b.ts"), "export const b = 2;\n");
    await writeFile(path.join(ws.root, "src/c.js"), "");
    await writeFile(path.join(ws.root, "node_modules/pkg/index.ts"), "");
    await writeFile(path.join(ws.root, ".git/x.ts"), "");
  });

  it("matches relative paths, skipping node_modules and .git, without following symlinked directories", async () => {
    expect((await run("glob", { pattern: "**/*.ts" })).text.split("\n")).toEqual(["src/a.ts", "src/deep/b.ts"]);
    expect((await run("glob", { pattern: "*.ts", path: "src" })).text).toBe("src/a.ts");
    expect((await run("glob", { pattern: "**/secret.txt" })).text).toBe("No files match **/secret.txt");
    expect((await run("glob", { pattern: "/etc/*" })).isError).toBe(true);
  });

  it("bounds results and walked entries", async () => {
    const limited = builtinTools({ globMaxResults: 1 }).find((x) => x.name === "glob") as Tool;
    expect((await limited.execute(limited.parse({ pattern: "**/*.ts" }), makeContext(ws.root))).text).toBe(
      "src/a.ts\n[more than 1 matches; narrow the pattern]",
    );
    const shallow = builtinTools({ walkMaxEntries: 3 }).find((x) => x.name === "glob") as Tool;
    const result = await shallow.execute(shallow.parse({ pattern: "**" }), makeContext(ws.root));
    expect(result.text).toMatch(/stopped after visiting 3 entries/);
  });
});

describe("grep", () => {
  beforeEach(async () => {
    await mkdir(path.join(ws.root, "src"), { recursive: true });
    await mkdir(path.join(ws.root, "node_modules"), { recursive: true });
    await writeFile(path.join(ws.root, "src/a.ts"), "// TODO one\nconst x = 1;\n// todo two\n");
    await writeFile(path.join(ws.root, "src/b.md"), "TODO in markdown\n");
    await writeFile(path.join(ws.root, "node_modules/dep.ts"), "TODO hidden\n");
    await writeFile(path.join(ws.root, "bin.dat"), Buffer.from([0x54, 0x4f, 0x44, 0x4f, 0, 1, 2]));
  });

  it("finds regex matches as file:line: text, skipping binaries, symlinks and node_modules", async () => {
    const result = await run("grep", { pattern: "TODO" });
    expect(result.text.split("\n")).toEqual(["src/a.ts:1: // TODO one", "src/b.md:1: TODO in markdown", "[1 binary or large file skipped]"]);
    expect((await run("grep", { pattern: "[Tt][Oo][Dd][Oo]", glob: "*.ts" })).text).toBe("src/a.ts:1: // TODO one\nsrc/a.ts:3: // todo two");
    expect((await run("grep", { pattern: "const", path: "src/a.ts" })).text).toBe("src/a.ts:2: const x = 1;");
    expect((await run("grep", { pattern: "nothing-here" })).text).toBe("No matches for /nothing-here/\n[1 binary or large file skipped]");
  });

  it("reports a bad regex and a missing path, and bounds matches and file size", async () => {
    expect((await run("grep", { pattern: "(" })).text).toMatch(/invalid regular expression/);
    expect((await run("grep", { pattern: "x", path: "nope" })).text).toBe("not found: nope");
    const few = builtinTools({ grepMaxMatches: 1 }).find((x) => x.name === "grep") as Tool;
    expect((await few.execute(few.parse({ pattern: "TODO", path: "src" }), makeContext(ws.root))).text).toMatch(
      /^src\/a.ts:1: \/\/ TODO one\n\[more than 1 matches/,
    );
    const small = builtinTools({ grepMaxFileBytes: 10 }).find((x) => x.name === "grep") as Tool;
    expect((await small.execute(small.parse({ pattern: "TODO", path: "src" }), makeContext(ws.root))).text).toMatch(
      /No matches.*\n\[2 binary or large files skipped\]/,
    );
  });

  it("does not read through a symlink inside the tree", async () => {
    await symlink(ws.secret, path.join(ws.root, "src/secret-link.txt"));
    expect((await run("grep", { pattern: "secret", path: "src" })).text).toBe("No matches for /secret/");
  });
});

describe("builtinTools", () => {
  it("provides the seven tools with their kinds and input keys", () => {
    const tools = builtinTools();
    expect(tools.map((t) => [t.name, t.kind])).toEqual([
      ["read_file", "read"],
      ["write_file", "edit"],
      ["edit_file", "edit"],
      ["list_dir", "read"],
      ["glob", "search"],
      ["grep", "search"],
      ["shell", "execute"],
    ]);
    const keys = Object.fromEntries(tools.map((t) => [t.name, Object.keys((t.inputSchema.properties ?? {}) as object)]));
    expect(keys).toEqual({
      read_file: ["path", "line", "limit"],
      write_file: ["path", "content"],
      edit_file: ["path", "old_text", "new_text", "replace_all"],
      list_dir: ["path"],
      glob: ["pattern", "path"],
      grep: ["pattern", "path", "glob"],
      shell: ["command", "cwd", "timeout_ms"],
    });
  });
});
