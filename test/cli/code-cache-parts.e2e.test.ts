import { readdirSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockAnthropic, startMockOpenAI, type MockProviderServer } from "../../src/testing/index.js";
import { cleanEnv, connectServe } from "../acp/agent/serve-support.js";
import { tempDir } from "../acp/agent/support.js";
import { afterEachTest } from "../support/after-each.js";
import { sealCache } from "../support/code-cache.js";
import { until } from "../support/until.js";

/**
 * The bin's code cache (src/cli/bundles.ts) through real `serve` processes and real providers
 * (loopback mocks): a user who switches provider gets a cache that covers the new one, written
 * once after its first turn, and a process that has run long enough for V8 to drop unused
 * bytecode writes none.
 */

let openai: MockProviderServer;
let anthropic: MockProviderServer;
const work = tempDir("agentkit-code-cache-parts-");
beforeAll(async () => {
  openai = await startMockOpenAI({ whenEmpty: { text: "hello from openai" } });
  anthropic = await startMockAnthropic({ whenEmpty: { text: "hello from anthropic" } });
});
afterAll(async () => {
  await openai.close();
  await anthropic.close();
  work.remove();
});

/**
 * One `serve` with `prompts` prompts; its code-cache log (NODE_DEBUG) once it has exited.
 * `beforeExit` sees the log while the process still runs.
 */
async function servedOnce(spec: string, cacheDir: string, options: { nodeArgs?: string[]; prompts?: number; beforeExit?: (log: () => string) => Promise<void> } = {}): Promise<string> {
  const { nodeArgs = [], prompts = 1 } = options;
  const mock = spec.startsWith("anthropic:") ? anthropic : openai;
  const env = cleanEnv({ AGENTKIT_STATE_DIR: join(work.path, "state"), NODE_COMPILE_CACHE: cacheDir, NODE_DEBUG: "agentkit-code-cache", ANTHROPIC_API_KEY: "test" });
  const { proc, agent, connection } = connectServe(["--model", spec, "--base-url", mock.baseUrl], { cwd: work.path, env, process: true, nodeArgs });
  try {
    await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: work.path, mcpServers: [] });
    for (let i = 0; i < prompts; i++) {
      const response = await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hi" }] });
      expect(response.stopReason).toBe("end_turn");
    }
    await options.beforeExit?.(() => proc.stderr);
  } finally {
    connection.close();
    await proc.end();
  }
  return proc.stderr;
}

const cacheDir = (): string => {
  const dir = tempDir("agentkit-code-cache-");
  afterEachTest(() => dir.remove());
  return dir.path;
};

describe("the code cache follows the providers a user runs", () => {
  it("is written after a second turn (or at exit), rewritten once by a run of a provider it lacks, then used by every provider without rewrites", async () => {
    const dir = cacheDir();
    // Written after the second turn, while the process still runs (an editor may kill it later).
    const first = await servedOnce("openai-compatible:mock", dir, { prompts: 2, beforeExit: (log) => until(() => log().includes("cache written")) });
    expect(first).toContain("serve: no cache yet");
    expect(first).toMatch(/cache written \(\d+ bytes; model:openai-compatible; write 1, after \d major GCs\)/);

    // The user switches provider: the cache lacks the anthropic library's code, so this run adds it (at exit: one turn).
    const switched = await servedOnce("anthropic:claude-test", dir);
    expect(switched).toMatch(/serve: cache used \(\d+ bytes; model:openai-compatible\)/);
    expect(switched).toMatch(/cache written \(\d+ bytes; model:anthropic, model:openai-compatible; write 2, after \d major GCs\)/);

    // From now on both are covered: no run writes again.
    for (const spec of ["anthropic:claude-test", "openai-compatible:mock"]) {
      const log = await servedOnce(spec, dir);
      expect(log).toMatch(/serve: cache used \(\d+ bytes; model:anthropic, model:openai-compatible\)/);
      expect(log).not.toContain("cache written");
    }

    // However the parts came and went, a cache is rewritten a bounded number of times.
    const [file] = readdirSync(dir).filter((name) => name.startsWith("agentkit-acp-serve-"));
    sealCache(join(dir, file!), { parts: [], writes: 8 });
    const capped = await servedOnce("anthropic:claude-test", dir);
    expect(capped).toMatch(/serve: cache used \(\d+ bytes; no parts\)/);
    expect(capped).toContain("cache not written: written 8 times already");
  });

  // --stress-compaction makes every GC a major one: by its first turn the process is as old, for
  // V8's bytecode flushing, as an editor's agent after hours. (Its flags also make V8 refuse any
  // cache made without them: for this process there is none.)
  it("is not written by a process that has had enough major GCs for V8 to drop code it ran early", async () => {
    const dir = cacheDir();
    const log = await servedOnce("openai-compatible:mock", dir, { nodeArgs: ["--stress-compaction"] });
    expect(log).toMatch(/cache not written: \d+ major GCs since start/);
    expect(readdirSync(dir).filter((name) => name.startsWith("agentkit-acp-"))).toEqual([]);
  });
});
