/**
 * A coordinator with two specialists, each an external ACP agent used as a tool
 * (AcpToolset): a "writer" (`agentkit-acp serve --model demo`, which writes a note) and a
 * "reviewer" (`agentkit-acp serve` playing a small script that reads the note and reports).
 *
 * The coordinator itself is a loop agent. Without arguments its model is a fixed script (no
 * API key needed): it asks the writer, then the reviewer, then summarizes. Pass a model spec
 * (e.g. `anthropic:claude-sonnet-4-5`) to let a real model choose the specialists.
 *
 * What you see: the nested agents' streamed text and tool calls (forwarded as progress of the
 * coordinator's tool calls), the writer's permission question forwarded to this host (which
 * approves it and says so — a real host would ask its user), the tool results the coordinator
 * reads, and its final answer.
 *
 * Run: npm run build && npx tsx examples/coordinator.ts [provider:model]
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AcpToolset, type AcpAgentLaunch } from "../src/acp/delegation/index.js";
import { approve, type ObservedEvent } from "../src/core/index.js";
import { Agent } from "../src/loop/index.js";
import { createModelAdapter, type ModelAdapter } from "../src/model/index.js";
import { ScriptedModel, script } from "../src/testing/index.js";
import { RulePermissionPolicy, ToolRegistry } from "../src/tools/index.js";

const bin = new URL("../bin/agentkit-acp.js", import.meta.url).pathname;
if (!existsSync(new URL("../dist/cli/main.js", import.meta.url))) {
  process.stderr.write("examples/coordinator.ts starts `agentkit-acp serve` from dist/: run `npm run build` first.\n");
  process.exit(1);
}

const workspace = mkdtempSync(join(tmpdir(), "agentkit-coordinator-"));
const serve = (...args: string[]): AcpAgentLaunch => ({ command: process.execPath, args: [bin, "serve", "--log-level", "warn", ...args] });

// The reviewer's "model" is a script (testing-only model of `serve`): read the note, then quote the result.
const reviewerScript = join(workspace, ".reviewer-script.json");
writeFileSync(
  reviewerScript,
  JSON.stringify({
    steps: [{ toolCall: { name: "read_file", input: { path: "agentkit-demo.md" } }, text: "Let me read the note.\n" }, { echo: "last_tool_result" }],
  }),
);

const specialists = new AcpToolset(
  [
    {
      name: "writer",
      description: "Writes and edits notes and documentation in the workspace.",
      whenToUse: "a file has to be created or changed",
      config: serve("--model", "demo"),
      // Questions the writer asks (e.g. "Write agentkit-demo.md") come here. A real host shows
      // them to its user; inside an ACP-served agent use acpClientApprovals(...) instead.
      askOuter: ({ delegate, question }) => {
        print(`\n  [host] ${delegate} asks: ${question.title} — approving once (an example; a real host asks its user)\n`);
        return "allow_once";
      },
    },
    {
      name: "reviewer",
      description: "Reads files and reports what they contain and what looks wrong. Never edits.",
      whenToUse: "after something was written, to check it",
      config: serve("--model", `scripted:${reviewerScript}`, "--approve", "auto-reads"),
    },
  ],
  // Each specialist keeps its session for the coordinator's session (it remembers earlier tasks).
  { persistent: true, timeoutMs: 120_000 },
);

const spec = process.argv[2];
const model: ModelAdapter = spec
  ? createModelAdapter({ spec })
  : new ScriptedModel([
      script.toolCall("writer", { task: "Write a short note into agentkit-demo.md saying the coordinator example ran." }, { text: "I will ask the writer first.\n" }),
      script.toolCall("reviewer", { task: "Read agentkit-demo.md and report what it says." }, { text: "Now the reviewer checks it.\n" }),
      script.text("Both specialists are done: the writer created agentkit-demo.md and the reviewer read it back."),
    ]);

const agent = Agent.builder()
  .model(model)
  .tools(new ToolRegistry(specialists.tools))
  .permissions(new RulePermissionPolicy({ rules: [], fallback: { verdict: "allow", reason: "the example lets the coordinator delegate freely" } }))
  .systemPrompt("You coordinate specialists. Delegate writing to the writer and checking to the reviewer, then summarize.")
  .observer({ handleEvent: show })
  .build();

function print(text: string): void {
  process.stdout.write(text);
}

const dim = (text: string): string => (process.stdout.isTTY ? `\x1b[2m${text}\x1b[0m` : text);

function show({ event }: ObservedEvent): void {
  switch (event.type) {
    case "content_delta":
      if (event.delta.type === "append_text") print(event.delta.text);
      break;
    case "tool_execution_started":
      print(`\n▶ coordinator calls ${event.toolName}: ${JSON.stringify(event.input)}\n`);
      break;
    case "tool_execution_progress":
      if (event.progress.text) print(dim(event.progress.text));
      else if (event.progress.message) print(dim(`  [${event.progress.message}]\n`));
      break;
    case "tool_result":
      print(`\n\n◀ ${event.toolName} result (${event.result.isError ? "error" : "ok"}), as the coordinator reads it:\n${indent(event.result.text)}\n\n`);
      break;
    default:
      break;
  }
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");
}

const driver = agent.start({ cwd: workspace });
print(`Workspace: ${workspace}\nCoordinator model: ${spec ?? "a fixed script (pass provider:model for a real one)"}\n\n`);
try {
  driver.submitInput([{ id: "u1", role: "user", parts: [{ type: "text", text: "Have a note written and reviewed." }], createdAt: new Date().toISOString() }]);
  for (;;) {
    const step = await driver.next();
    if (step.type === "finished") {
      print(`\n\n[turn finished: ${step.result.finishReason}]\n`);
      break;
    }
    if (step.interrupt.type === "approval_request") driver.resolveApproval(step.interrupt.request.callId, approve());
  }
} finally {
  // Persistent specialists hold processes: the host closes them when the session ends.
  await specialists.closeSession(driver.sessionId);
  await specialists.close();
  rmSync(workspace, { recursive: true, force: true });
}
