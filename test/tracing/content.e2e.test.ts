import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, connectServe, writeScript } from "../acp/agent/serve-support.js";
import { startOtlpReceiver } from "../support/otlp-receiver.js";
import { until } from "../support/until.js";

// Captured content (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true) reaches the collector
// with secrets redacted: prompt text, model output, tool arguments. A real OTLP receiver on loopback.

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const apiKey = "sk-proj-Abc123Def456Ghi789Jkl012Mno345";
const bearer = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJib2IifQ.c2lnbmF0dXJl";

describe("captured content is redacted", () => {
  it("a prompt with an API key and a bearer token, echoed by the model and passed to a tool, is exported redacted", async () => {
    const receiver = await startOtlpReceiver();
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "agentkit-tracing-content-")));
    dirs.push(dir);
    const script = writeScript(dir, [
      { toolCall: { name: "read_file", input: { path: `notes.txt`, note: `Authorization: Bearer ${bearer}` } } },
      { text: `I will not repeat ${apiKey}.` },
    ]);
    const env = cleanEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_BSP_SCHEDULE_DELAY: "10",
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true",
      AGENTKIT_STATE_DIR: join(dir, "state"),
    });
    const served = connectServe(["--model", `scripted:${script}`, "--log-level", "warn", "--approve", "auto-all"], { cwd: dir, env, process: true });
    try {
      await served.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await served.agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
      const text = `my key is ${apiKey} and the header is "Authorization: Bearer ${bearer}"`;
      const answer = await served.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
      expect(answer.stopReason).toBe("end_turn");
      const attribute = (prefix: string, key: string): string[] =>
        receiver.spans.filter((s) => s.name.startsWith(prefix) && typeof s.attributes[key] === "string").map((s) => String(s.attributes[key]));
      await until(() => attribute("chat ", "gen_ai.output.messages").length === 2 && attribute("execute_tool", "gen_ai.tool.call.arguments").length === 1, 20_000);
      const captured = [
        ...attribute("chat ", "gen_ai.input.messages"),
        ...attribute("chat ", "gen_ai.output.messages"),
        ...attribute("execute_tool", "gen_ai.tool.call.arguments"),
      ];
      const all = captured.join("\n");
      // Captured: the words around the secrets are there, the secrets are not.
      expect(all).toContain("my key is [redacted]");
      expect(all).toContain("Bearer [redacted]");
      expect(all).toContain("I will not repeat [redacted]");
      expect(attribute("execute_tool", "gen_ai.tool.call.arguments")[0]).toContain("Bearer [redacted]");
      expect(all).not.toContain(apiKey);
      expect(all).not.toContain(bearer);
      expect(all).not.toContain("Abc123Def456");
    } finally {
      await served.proc.end();
      await receiver.close();
    }
  }, 60_000);
});
