import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "./npm-app.js";

/** A guide's text: `docs/NAME.md`. */
export const guideText = (name: string): string => readFileSync(join(repoRoot, "docs", name), "utf8");

/** The shell lines of a Markdown text's ```sh blocks, without their trailing `  # comments`. */
export function shellCommands(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```/gm)].flatMap(([, block]) =>
    block!
      .split("\n")
      .map((line) => line.replace(/\s{2,}#.*$/, "").trim())
      .filter((line) => line !== "" && !line.startsWith("#")),
  );
}

/** A command line split into words as /bin/sh would (quotes only: the guides' commands use no expansions). */
export function shellWords(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

export interface EditorServer {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/** Every editor configuration the guides show: `agent_servers` entries of their ```json blocks (Zed's settings.json, JetBrains' acp.json). */
export function editorSnippets(): { file: string; name: string; server: EditorServer }[] {
  const guides = readdirSync(join(repoRoot, "docs")).filter((name) => name.endsWith(".md"));
  return guides.flatMap((name) =>
    [...guideText(name).matchAll(/^```json\n([\s\S]*?)^```/gm)]
      .map(([, json]) => JSON.parse(json!) as { agent_servers?: Record<string, EditorServer> })
      .flatMap((config, index) => Object.entries(config.agent_servers ?? {}).map(([server, entry]) => ({ file: `docs/${name}`, name: `${server} (block ${index + 1})`, server: entry }))),
  );
}
