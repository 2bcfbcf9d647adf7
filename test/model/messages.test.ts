import { describe, expect, it } from "vitest";
import { toModelMessages } from "../../src/model/index.js";
import { item, user } from "./helpers.js";

const ok = (text: string) => ({ text, isError: false });

describe("toModelMessages", () => {
  it("converts user text, media, resource links and embedded resources", () => {
    const messages = toModelMessages([
      item("system", { type: "text", text: "You are terse." }),
      item(
        "user",
        { type: "text", text: "look at these" },
        { type: "text", text: "" },
        { type: "media", mediaType: "image/png", data: "iVBORw0KGgo=" },
        { type: "media", mediaType: "audio/wav", data: "UklGRg==" },
        { type: "resource_link", uri: "file:///ws/a.ts", name: "a.ts", mimeType: "text/x-typescript" },
        { type: "resource", uri: "file:///ws/b.md", text: "# B", mimeType: "text/markdown" },
      ),
    ]);
    expect(messages).toEqual([
      { role: "system", content: "You are terse." },
      {
        role: "user",
        content: [
          { type: "text", text: "look at these" },
          { type: "image", image: "iVBORw0KGgo=", mediaType: "image/png" },
          { type: "file", data: "UklGRg==", mediaType: "audio/wav" },
          { type: "text", text: "[Attached resource: a.ts](file:///ws/a.ts) (text/x-typescript)" },
          { type: "text", text: '<resource uri="file:///ws/b.md" mimeType="text/markdown">\n# B\n</resource>' },
        ],
      },
    ]);
  });

  it("puts tool results right after their calls, merging several tool items", () => {
    const messages = toModelMessages([
      user("two reads"),
      item(
        "assistant",
        { type: "reasoning", text: "both files" },
        { type: "tool_call", callId: "c1", toolName: "read_file", input: { path: "a" } },
        { type: "tool_call", callId: "c2", toolName: "read_file", input: '{"path":"b"}' },
      ),
      item("tool", { type: "tool_result", callId: "c1", toolName: "read_file", result: ok("A") }),
      item("tool", { type: "tool_result", callId: "c2", toolName: "read_file", result: { text: "denied by the user: not now", isError: true } }),
      item("assistant", { type: "text", text: "done" }),
    ]);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(messages[1]?.content).toEqual([
      { type: "reasoning", text: "both files" },
      { type: "tool-call", toolCallId: "c1", toolName: "read_file", input: { path: "a" } },
      { type: "tool-call", toolCallId: "c2", toolName: "read_file", input: { path: "b" } },
    ]);
    expect(messages[2]?.content).toEqual([
      { type: "tool-result", toolCallId: "c1", toolName: "read_file", output: { type: "text", value: "A" } },
      { type: "tool-result", toolCallId: "c2", toolName: "read_file", output: { type: "error-text", value: "Error: denied by the user: not now" } },
    ]);
  });

  it("repairs a transcript a provider would reject: unanswered calls, orphan results, empty turns", () => {
    const messages = toModelMessages([
      item("tool", { type: "tool_result", callId: "ghost", toolName: "shell", result: ok("?") }),
      user("go"),
      item("assistant", { type: "tool_call", callId: "c1", toolName: "shell", input: { command: "sleep 100" } }),
      user("never mind"),
      item("assistant"),
    ]);
    expect(messages).toEqual([
      { role: "user", content: [{ type: "text", text: "go" }] },
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "shell", input: { command: "sleep 100" } }] },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c1",
            toolName: "shell",
            output: { type: "error-text", value: "The tool call was interrupted and produced no result." },
          },
        ],
      },
      { role: "user", content: [{ type: "text", text: "never mind" }] },
    ]);
  });

  it("lets the provider drop or sign reasoning", () => {
    const items = [user("q"), item("assistant", { type: "reasoning", text: "hmm" }, { type: "text", text: "a" })];
    expect(toModelMessages(items, { reasoning: () => "drop" })[1]?.content).toEqual([{ type: "text", text: "a" }]);
    expect(toModelMessages(items, { reasoning: () => ({ anthropic: { signature: "sig" } }) })[1]?.content).toEqual([
      { type: "reasoning", text: "hmm", providerOptions: { anthropic: { signature: "sig" } } },
      { type: "text", text: "a" },
    ]);
  });
});
