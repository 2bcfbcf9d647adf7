import { describe, expect, it } from "vitest";
import { ModelError } from "../../src/model/index.js";
import { ScriptedModel, script } from "../../src/testing/index.js";

describe("ScriptedModel", () => {
  it("a script that runs out is a ModelError saying what to do (a plain Error before: 'model call failed: …' and a stack)", async () => {
    const model = new ScriptedModel([script.text("one")]);
    const drain = async (): Promise<void> => {
      for await (const _event of model.stream({ items: [], tools: [] }, new AbortController().signal)) void _event;
    };
    await drain();
    const error = await drain().then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).message).toBe('scripted model: call 2 has no step, the script has 1; add steps (push()) or pass { onExhausted: "repeat-last" }');
  });
});
