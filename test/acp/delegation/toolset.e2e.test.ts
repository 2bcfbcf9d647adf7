import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AcpToolset } from "../../../src/acp/delegation/index.js";
import { ConfigError } from "../../../src/core/index.js";
import { demoNotePath } from "../../../src/model/demo.js";
import { script } from "../../../src/testing/index.js";
import { onCleanup, outerAgent, runTurn, serveLaunch, tempDir, toolResultsSeen, writeScript } from "./support.js";

describe("AcpToolset", () => {
  it("offers named specialists whose descriptions help the model choose, and routes calls to each", async () => {
    const ws = tempDir();
    const reviewScript = writeScript(ws, [{ text: "Review: no problems found." }], "reviewer.json");
    const toolset = new AcpToolset(
      [
        { name: "reviewer", description: "Reviews changes for bugs and risky edits. Read-only.", whenToUse: "after code changed, before reporting back", config: serveLaunch(["--model", `scripted:${reviewScript}`]) },
        { name: "writer", description: "Writes and edits notes and docs.", whenToUse: "a file must be created or changed", config: serveLaunch(["--model", "demo"]), askOuter: () => "allow_once" },
      ],
      { persistent: true },
    );
    onCleanup(() => toolset.close());
    expect(toolset.names).toEqual(["reviewer", "writer"]);
    const reviewer = toolset.get("reviewer")!;
    expect(reviewer.description).toContain('Specialist "reviewer": Reviews changes for bugs and risky edits. Read-only.');
    expect(reviewer.description).toContain("Use it when: after code changed, before reporting back");
    expect(reviewer.description).toContain("Other specialists: writer (Writes and edits notes and docs)");
    expect(reviewer.description).toContain("remembers earlier tasks");
    expect(toolset.get("writer")!.description).toContain("Other specialists: reviewer (Reviews changes for bugs and risky edits)");

    const { driver, model } = outerAgent(
      toolset.tools,
      [script.toolCall("writer", { task: "write the note" }), script.toolCall("reviewer", { task: "review the note" }), script.text("all done")],
      { cwd: ws },
    );
    const specs = model.requests; // filled once the turn runs
    await runTurn(driver, "write and review");
    expect(specs[0]?.tools.map((t) => t.name)).toEqual(["reviewer", "writer"]);
    const results = toolResultsSeen(model);
    expect(results.map((r) => [r.toolName, r.isError])).toEqual([
      ["writer", false],
      ["reviewer", false],
    ]);
    expect(results[0]?.text).toContain(`Files changed: ${demoNotePath}`);
    expect(results[1]?.text).toContain("Review: no problems found.");
    expect(existsSync(join(ws, demoNotePath))).toBe(true);

    // Persistent specialists keep a process per outer session until the host closes it.
    expect(toolset.tools.map((t) => t.openSessions.length)).toEqual([1, 1]);
    await toolset.closeSession(driver.sessionId);
    expect(toolset.tools.map((t) => t.openSessions.length)).toEqual([0, 0]);
  });

  it("rejects duplicate names and invalid tool names", () => {
    const config = serveLaunch(["--model", "demo"]);
    expect(() => new AcpToolset([{ name: "a", description: "x", config }, { name: "a", description: "y", config }])).toThrow(ConfigError);
    expect(() => new AcpToolset([{ name: "has space", description: "x", config }])).toThrow(/name must match/);
    expect(() => new AcpToolset([])).toThrow(/at least one/);
  });
});
