import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// Every relative link and anchor in README.md and docs/**/*.md resolves: the file exists, and an
// anchor names a heading of the target (GitHub's slugs) or an explicit <a id>/<a name>.
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

const markdownFiles = (): string[] => {
  const files = [join(root, "README.md")];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".md")) files.push(path);
    }
  };
  walk(join(root, "docs"));
  return files;
};

/** Lines outside fenced code blocks (links and headings in code are not links and headings). */
const proseLines = (text: string): string[] => {
  let fence = false;
  return text.split("\n").filter((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fence = !fence;
      return false;
    }
    return !fence;
  });
};

/** GitHub's heading slug: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2 … */
const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, "")
    .replace(/ /g, "-");

const anchorCache = new Map<string, Set<string>>();
const anchorsOf = (file: string): Set<string> => {
  const cached = anchorCache.get(file);
  if (cached) return cached;
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(readFileSync(file, "utf8"))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const base = slug(heading);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const [, id] of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id!);
  }
  anchorCache.set(file, anchors);
  return anchors;
};

/** `[text](target)` and `![alt](target)`, with the inline code spans blanked first. */
const linksOf = (text: string): string[] =>
  proseLines(text).flatMap((line) => [...line.replace(/`[^`]*`/g, "").matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!));

const broken = (file: string): string[] => {
  const problems: string[] = [];
  for (const target of linksOf(readFileSync(file, "utf8"))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: …
    const [path = "", anchor] = target.split("#", 2);
    const resolved = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
    if (!existsSync(resolved)) {
      problems.push(`${target}: no file ${relative(root, resolved)}`);
      continue;
    }
    if (anchor === undefined || anchor === "") continue;
    if (statSync(resolved).isDirectory() || !resolved.endsWith(".md")) {
      problems.push(`${target}: an anchor into a file that is not Markdown`);
    } else if (!anchorsOf(resolved).has(decodeURIComponent(anchor))) {
      problems.push(`${target}: no heading #${anchor} in ${relative(root, resolved)}`);
    }
  }
  return problems;
};

describe("the documentation's links", () => {
  it("slugs headings as GitHub does", () => {
    expect(slug("Running as a service (`serve --listen`)")).toBe("running-as-a-service-serve---listen");
    expect(slug("Threat model: workspaces, client MCP servers, ceilings")).toBe("threat-model-workspaces-client-mcp-servers-ceilings");
  });

  it("finds a broken link and a broken anchor (the checker can fail)", () => {
    const text = "[a](docs/nowhere.md) [b](README.md#no-such-heading) [c](https://example.com/x)";
    expect(linksOf(text)).toEqual(["docs/nowhere.md", "README.md#no-such-heading", "https://example.com/x"]);
    expect(anchorsOf(join(root, "README.md")).has("no-such-heading")).toBe(false);
  });

  const files = markdownFiles();
  it.each(files.map((file) => [relative(root, file), file]))("%s: every relative link and anchor resolves", (_name, file) => {
    expect(broken(file)).toEqual([]);
  });

  it("every guide in docs/ links back to the README or the docs index, and the index lists every guide", () => {
    const index = readFileSync(join(root, "docs/README.md"), "utf8");
    const guides = readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md") && name !== "README.md");
    for (const guide of guides) {
      const text = readFileSync(join(root, "docs", guide), "utf8");
      expect(text, `${guide} links back`).toMatch(/\]\((\.\.\/README\.md|README\.md)\)/);
      expect(index, `docs/README.md lists ${guide}`).toContain(`](${guide})`);
    }
  });
});

describe("the README's test command", () => {
  it("is what CI runs: .ci/run runs `npm ci` then `npm test`, the README says `npm ci && npm test`", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const ci = readFileSync(join(root, ".ci/run"), "utf8").split("\n");
    expect(readme).toMatch(/^npm ci && npm test {2,}# the test suite$/m);
    const install = ci.indexOf("npm ci");
    expect(install).toBeGreaterThan(-1);
    expect(ci.indexOf("npm test", install)).toBeGreaterThan(install);
  });
});
