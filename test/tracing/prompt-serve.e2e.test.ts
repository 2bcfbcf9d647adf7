import { afterEach, describe, expect, it } from "vitest";
import type { ScriptFileStep } from "../../src/testing/scripted-script.js";
import { Workspace, bin, serveEnv } from "../acp/agent/services-support.js";
import { runCliProcess } from "../support/cli.js";
import { startOtlpReceiver, type ReceivedSpan } from "../support/otlp-receiver.js";
import { until } from "../support/until.js";

// `agentkit-acp prompt` (one process) driving `agentkit-acp serve` (another) with tracing on:
// both export to a real OTLP/HTTP receiver on loopback — prompt in http/json, serve in
// http/protobuf — and every span lands in ONE trace.

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const editFile: ScriptFileStep[] = [{ toolCall: { name: "edit_file", input: { path: "a.txt", old_text: "one", new_text: "two" } } }, { text: "done" }];

function named(spans: ReceivedSpan[], name: string, service?: string): ReceivedSpan {
  const found = spans.find((s) => s.name === name && (service === undefined || s.service === service));
  if (!found) throw new Error(`no span "${name}"${service ? ` from ${service}` : ""}; got ${spans.map((s) => `${s.service}:${s.name}`).join(", ")}`);
  return found;
}

describe("tracing across prompt and serve", () => {
  it("a turn with a tool call and a permission question is one trace over both processes, both encodings", async () => {
    const receiver = await startOtlpReceiver();
    const ws = new Workspace("agentkit-tracing-");
    cleanups.push(() => ws.cleanup());
    ws.file("a.txt", "one\n");
    // serve asks the client (--approve ask) and exports protobuf; prompt answers allow-all and exports JSON.
    const agent = `env OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf "${process.execPath}" "${bin}" serve --model scripted:${ws.script(editFile)} --approve ask --log-level warn`;
    const env = serveEnv(ws, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" });
    const run = await runCliProcess(["prompt", "--agent", agent, "--cwd", ws.cwd, "--json", "--permissions", "allow-all", "go"], { cwd: ws.cwd, env });
    expect(run.code, run.stderr).toBe(0);
    expect(ws.read("a.txt")).toBe("two\n");
    const prompt = "agentkit-acp prompt";
    const serve = "agentkit-acp serve";
    await until(() => receiver.spans.some((s) => s.name === prompt) && receiver.spans.some((s) => s.service === serve && s.name.startsWith("invoke_agent")), 20_000);
    const spans = receiver.spans;
    expect([...receiver.contentTypes].sort()).toEqual(["application/json", "application/x-protobuf"]);

    // One trace across both processes.
    const root = named(spans, prompt);
    expect(root.parentSpanId).toBe("");
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([root.traceId]));
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const parentOf = (span: ReceivedSpan): ReceivedSpan | undefined => byId.get(span.parentSpanId);

    // Client span → server span for each request, through _meta.traceparent.
    const sentPrompt = named(spans, "session/prompt", prompt);
    const servedPrompt = named(spans, "session/prompt", serve);
    expect(sentPrompt.kind).toBe(3); // CLIENT
    expect(servedPrompt.kind).toBe(2); // SERVER
    expect(parentOf(servedPrompt)).toBe(sentPrompt);
    expect(parentOf(sentPrompt)).toBe(root);
    expect(servedPrompt.attributes).toMatchObject({ "rpc.system": "jsonrpc", "rpc.method": "session/prompt" });
    expect(parentOf(named(spans, "session/new", serve))?.name).toBe("session/new");
    expect(parentOf(named(spans, "initialize", serve))?.service).toBe(prompt);

    // The turn, its model calls and its tool call (GenAI semantic conventions).
    const turn = named(spans, "invoke_agent agentkit-acp", serve);
    expect(parentOf(turn)).toBe(servedPrompt);
    expect(turn.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "agentkit-acp",
      "gen_ai.conversation.id": servedPrompt.attributes["gen_ai.conversation.id"],
      "agentkit.stop_reason": "end_turn",
      "gen_ai.response.finish_reasons": ["completed"],
    });
    const chats = spans.filter((s) => s.name.startsWith("chat "));
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      expect(parentOf(chat)).toBe(turn);
      expect(chat.attributes).toMatchObject({ "gen_ai.operation.name": "chat", "gen_ai.provider.name": "scripted" });
      expect(chat.events).toContain("gen_ai.first_token");
    }
    expect(chats.map((c) => c.attributes["gen_ai.response.finish_reasons"])).toEqual([["tool_calls"], ["stop"]]);
    expect(chats[0]!.attributes["gen_ai.usage.input_tokens"]).toEqual(expect.any(Number));
    const tool = named(spans, "execute_tool edit_file", serve);
    expect(parentOf(tool)).toBe(turn);
    expect(tool.attributes).toMatchObject({ "gen_ai.tool.name": "edit_file", "gen_ai.tool.call.id": expect.any(String), "agentkit.permission.outcome": "approve" });
    expect(tool.attributes["agentkit.permission.wait_ms"]).toEqual(expect.any(Number));
    expect(tool.status).toBe(0);

    // The permission question: asked by serve inside the turn, answered (and decided) by prompt.
    const asked = named(spans, "session/request_permission", serve);
    expect(parentOf(asked)).toBe(turn);
    const answered = named(spans, "session/request_permission", prompt);
    expect(parentOf(answered)).toBe(asked);
    expect(answered.attributes).toMatchObject({ "agentkit.permission.decision": "allow", "agentkit.permission.source": expect.any(String) });

    // The edit went through the client's file system: serve's request, prompt's host operation.
    for (const method of ["fs/read_text_file", "fs/write_text_file"]) {
      const sent = named(spans, method, serve);
      expect(parentOf(sent)).toBe(tool);
      expect(parentOf(named(spans, method, prompt))).toBe(sent);
    }
    // No content captured by default.
    expect(spans.some((s) => Object.keys(s.attributes).some((k) => k.startsWith("gen_ai.input") || k.startsWith("gen_ai.output") || k === "gen_ai.tool.call.arguments"))).toBe(false);
  }, 60_000);
});
