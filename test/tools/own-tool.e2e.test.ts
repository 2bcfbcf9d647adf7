import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { cachedDir, npmInstall, npmTests, packThisPackage, repoRoot } from "../support/npm-app.js";

const run = promisify(execFile);

// The guide's promise (docs/your-own-tool.md): the example tool, written with zod, works in an
// app on zod 3 — the packed package installed next to zod@3, type-checked with the app's own
// TypeScript (skipLibCheck off, so our published types and our dependencies' must hold), run,
// and driven through the installed CLI. Before Standard Schema support it failed the type check
// and crashed at start ("Cannot read properties of undefined (reading 'def')").
describe.runIf(npmTests)("a tool of your own in an app on zod 3 (npm pack → npm install; AGENTKIT_TEST_NPM=1)", () => {
  it("type-checks, derives the JSON Schema from zod 3, and runs under prompt", { timeout: 900_000 }, async () => {
    const app = cachedDir("own-tool-app");
    const packDir = mkdtempSync(join(tmpdir(), "agentkit-pack-"));
    try {
      writeFileSync(join(app, "package.json"), JSON.stringify({ name: "own-tool-app", private: true, type: "module" }));
      const compilerOptions = { target: "ES2023", module: "NodeNext", moduleResolution: "NodeNext", strict: true, skipLibCheck: false, outDir: "build", types: ["node"] };
      writeFileSync(join(app, "tsconfig.json"), JSON.stringify({ compilerOptions, include: ["*.ts"] }));
      for (const file of ["weather-tool.ts", "agent.ts"]) copyFileSync(join(repoRoot, "examples/own-tool", file), join(app, file));
      const tarball = await packThisPackage(packDir);
      await npmInstall(app, [tarball, "zod@3.25.76", "typescript@5.9.3", "@types/node@20.19.43"]);
      expect(JSON.parse(readFileSync(join(app, "node_modules/zod/package.json"), "utf8")).version).toMatch(/^3\./);

      const tsc = await run(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "."], { cwd: app, timeout: 300_000 }).catch((error: { stdout?: string }) => ({ stdout: `FAILED\n${error.stdout ?? String(error)}` }));
      expect(tsc.stdout).toBe("");

      const schema = await run(process.execPath, ["--input-type=module", "-e", 'const { weatherTool } = await import("./build/weather-tool.js"); console.log(JSON.stringify(weatherTool.inputSchema))'], { cwd: app });
      expect(JSON.parse(schema.stdout)).toMatchObject({ type: "object", properties: { city: { type: "string", minLength: 1 }, days: { type: "integer", maximum: 7 } }, required: ["city"] });

      const prompt = await run(process.execPath, ["node_modules/agentkit-acp/bin/agentkit-acp.js", "prompt", "--json", "--agent", "node build/agent.js", "What is the weather in Oslo?"], { cwd: app, timeout: 120_000 });
      const lines = prompt.stdout.trim().split("\n").map((line) => JSON.parse(line) as { type: string; stopReason?: string; update?: { status?: string; rawOutput?: unknown } });
      expect(lines.find((line) => line.type === "tool_call_update" && line.update?.status === "completed")?.update?.rawOutput).toEqual({ city: "Oslo", days: 2 });
      expect(lines.at(-1)).toMatchObject({ type: "done", stopReason: "end_turn" });
    } finally {
      rmSync(packDir, { recursive: true, force: true });
    }
  });
});
