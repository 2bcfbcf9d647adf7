import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { bin, cleanEnv, connectServe, writeScript } from "../acp/agent/serve-support.js";
import { runCliProcess } from "../support/cli.js";
import { startOtlpReceiver, type ReceivedSpan } from "../support/otlp-receiver.js";
import { until } from "../support/until.js";

const coordinator = new URL("fixtures/traced-coordinator.mjs", import.meta.url).pathname;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "agentkit-tracing-")));
  dirs.push(dir);
  return dir;
}

function parentChain(spans: ReceivedSpan[], span: ReceivedSpan): string[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const chain: string[] = [];
  for (let at: ReceivedSpan | undefined = span; at; at = byId.get(at.parentSpanId)) chain.push(`${at.service}:${at.name}`);
  return chain;
}

describe("trace context over ACP", () => {
  it("prompt → coordinator → delegate (AcpAgentTool) is one trace across three processes", async () => {
    const receiver = await startOtlpReceiver();
    const dir = tempDir();
    const delegate = `"${process.execPath}" "${bin}" serve --model scripted:${writeScript(dir, [{ text: "hello from the delegate" }])} --log-level warn`;
    // The delegate's service name comes from its own environment (the coordinator passes its env on).
    const agent = `"${process.execPath}" "${coordinator}" -- env OTEL_SERVICE_NAME=delegate ${delegate}`;
    const env = cleanEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", AGENTKIT_STATE_DIR: join(dir, "state") });
    const run = await runCliProcess(["prompt", "--agent", agent, "--cwd", dir, "--json", "go"], { cwd: dir, env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("hello from the delegate");
    const has = (service: string, name: string): boolean => receiver.spans.some((s) => s.service === service && s.name.startsWith(name));
    await until(() => has("agentkit-acp prompt", "agentkit-acp prompt") && has("coordinator", "invoke_agent") && has("delegate", "chat "), 20_000);
    const spans = receiver.spans;
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(["agentkit-acp prompt", "coordinator", "delegate"]));
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    const deepest = spans.find((s) => s.service === "delegate" && s.name.startsWith("chat "))!;
    expect(parentChain(spans, deepest)).toEqual([
      "delegate:chat " + String(deepest.attributes["gen_ai.request.model"]),
      "delegate:invoke_agent agentkit-acp",
      "delegate:session/prompt",
      "coordinator:session/prompt",
      "coordinator:execute_tool delegate",
      "coordinator:invoke_agent coordinator",
      "coordinator:session/prompt",
      "agentkit-acp prompt:session/prompt",
      "agentkit-acp prompt:agentkit-acp prompt",
    ]);
  }, 60_000);

  it("the official SDK client's _meta.traceparent is honoured; a malformed one is ignored and the request goes on; --trace-context ignore starts a new trace", async () => {
    const receiver = await startOtlpReceiver();
    const dir = tempDir();
    const script = writeScript(dir, [{ text: "one" }, { text: "two" }, { text: "three" }]);
    const env = cleanEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", AGENTKIT_STATE_DIR: join(dir, "state") });
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const parentId = "b7ad6b7169203331";
    const traceparent = `00-${traceId}-${parentId}-01`;
    const prompt = async (agent: acp.ClientContext, sessionId: string, meta: Record<string, unknown>) =>
      (await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hi" }], _meta: meta })).stopReason;

    const honour = connectServe(["--model", `scripted:${script}`, "--log-level", "warn"], { cwd: dir, env, process: true });
    await honour.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await honour.agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
    expect(await prompt(honour.agent, sessionId, { traceparent, tracestate: "vendor=x" })).toBe("end_turn");
    expect(await prompt(honour.agent, sessionId, { traceparent: "00-not-a-trace-id-01" })).toBe("end_turn");
    await honour.proc.end();

    const ignore = connectServe(["--model", `scripted:${script}`, "--log-level", "warn", "--trace-context", "ignore"], { cwd: dir, env: { ...env, OTEL_SERVICE_NAME: "ignoring" }, process: true });
    await ignore.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const second = await ignore.agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
    expect(await prompt(ignore.agent, second.sessionId, { traceparent })).toBe("end_turn");
    await ignore.proc.end();

    await until(() => receiver.spans.filter((s) => s.name.startsWith("invoke_agent")).length === 3, 20_000);
    const served = receiver.spans.filter((s) => s.name === "session/prompt");
    expect(served).toHaveLength(3);
    const [honoured, malformed, ignored] = [served.find((s) => s.service === "agentkit-acp serve" && s.traceId === traceId), served.find((s) => s.service === "agentkit-acp serve" && s.traceId !== traceId), served.find((s) => s.service === "ignoring")];
    expect(honoured?.parentSpanId).toBe(parentId);
    expect(malformed?.parentSpanId).toBe("");
    expect(ignored?.parentSpanId).toBe("");
    expect(ignored?.traceId).not.toBe(traceId);
    const turn = receiver.spans.find((s) => s.name.startsWith("invoke_agent") && s.traceId === traceId);
    expect(turn?.parentSpanId).toBe(honoured?.spanId);
  });

  it("a collector that is down: the turns are unaffected, one warning, and serve still exits promptly", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const dir = tempDir();
    const script = writeScript(dir, [{ text: "one" }, { text: "two" }]);
    const env = cleanEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_BSP_SCHEDULE_DELAY: "10", OTEL_EXPORTER_OTLP_TIMEOUT: "300", AGENTKIT_STATE_DIR: join(dir, "state") });
    const served = connectServe(["--model", `scripted:${script}`, "--log-level", "warn"], { cwd: dir, env, process: true });
    await served.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await served.agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
    for (const text of ["a", "b"]) {
      // The second turn starts after the first export failed (the warning is in): it is unaffected too.
      if (text === "b") await until(() => served.proc.stderr.includes("spans could not be exported"), 10_000);
      expect((await served.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })).stopReason).toBe("end_turn");
    }
    const started = Date.now();
    expect((await served.proc.end()).code).toBe(0);
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(served.proc.stderr.match(/spans could not be exported/g)).toHaveLength(1);
  });

  it("a collector that hangs: the exporter's memory is bounded (OTEL_BSP_MAX_QUEUE_SIZE), spans beyond it are dropped, one warning, the turns unaffected", async () => {
    const receiver = await startOtlpReceiver({ hold: true });
    const dir = tempDir();
    const env = cleanEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_BSP_MAX_QUEUE_SIZE: "10",
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "2",
      OTEL_BSP_SCHEDULE_DELAY: "10",
      OTEL_EXPORTER_OTLP_TIMEOUT: "1000",
      AGENTKIT_STATE_DIR: join(dir, "state"),
    });
    const served = connectServe(["--model", `scripted:${writeScript(dir, [{ text: "ok" }])}`, "--log-level", "warn"], { cwd: dir, env, process: true });
    await served.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await served.agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
    // 60 turns make 180+ spans (session/prompt, invoke_agent, chat each); one export at a time hangs for 1 s.
    const turns = 60;
    for (let i = 0; i < turns; i++) {
      expect((await served.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: `turn ${i}` }] })).stopReason).toBe("end_turn");
    }
    await until(() => served.proc.stderr.includes("spans could not be exported"), 10_000);
    // What reached the collector so far: a few batches of 2, far fewer spans than turns.
    const whileDown = receiver.spans.length;
    expect(whileDown).toBeLessThan(turns);
    // The collector comes back; serve exits and flushes what it kept: at most the queue's 10 spans.
    receiver.release();
    expect((await served.proc.end()).code).toBe(0);
    const kept = receiver.spans.length - whileDown;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThanOrEqual(10);
    expect(served.proc.stderr.match(/spans could not be exported/g)).toHaveLength(1);
  }, 60_000);
});
