import { existsSync } from "node:fs";
import { join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { builtFile } from "../../core/package-files.js";
import type { Run } from "./run.js";
import { newSession } from "./steps-session.js";
import { describeTurn, inconclusiveByKit, runTurn, textBlock } from "./turns.js";
import { delay, describeOutcome, type WireAgent } from "./wire.js";

/** mcp.stdio always (every agent must support stdio); mcp.http / mcp.sse / mcp.acp when advertised. */
export async function checkMcp(run: Run, agent: WireAgent): Promise<void> {
  if (run.wants("mcp.stdio")) {
    const marker = join(run.scratch, "mcp-probe-contacted");
    const server: acp.McpServer = { name: "agentkit-check-probe", ...probeCommand(marker), env: [] };
    await checkServer(run, agent, "mcp.stdio", "the stdio MCP server", server, () => existsSync(marker));
  }
  for (const transport of ["http", "sse"] as const) {
    const id = `mcp.${transport}`;
    if (!run.wants(id)) continue;
    if (!run.advertises(`mcpCapabilities.${transport}`)) {
      run.skip(id, `mcpCapabilities.${transport} is not advertised`);
      continue;
    }
    const { startMcpFixtureHttpServer } = await import("../mcp-fixture-server.js");
    const http = await startMcpFixtureHttpServer();
    run.cleanups.push(() => http.close());
    const url = transport === "http" ? http.url : http.sseUrl;
    const server: acp.McpServer = { type: transport, name: `agentkit-check-${transport}`, url, headers: [] };
    await checkServer(run, agent, id, `the ${transport} MCP server at ${url}`, server, () => http.sessionCount() > 0);
  }
  if (run.wants("mcp.acp")) {
    if (!run.advertises("mcpCapabilities.acp")) run.skip("mcp.acp", "mcpCapabilities.acp is not advertised");
    else await checkAcpServer(run, agent);
  }
}

/** A probe served over this very connection (MCP over ACP): contacted = an MCP request answered with a result. */
async function checkAcpServer(run: Run, agent: WireAgent): Promise<void> {
  const [{ fromMcpServer }, { McpServer }] = await Promise.all([import("@agentclientprotocol/sdk/experimental/mcp-server"), import("@modelcontextprotocol/server")]);
  const adapter = fromMcpServer(() => {
    const server = new McpServer({ name: "agentkit-check-acp", version: "1.0.0" });
    server.registerTool("ping", { description: "Answers pong (agentkit-acp conformance probe; safe to call)" }, () => ({ content: [{ type: "text", text: "pong" }] }));
    return server;
  });
  let answered = 0;
  const refused: string[] = [];
  const registration = agent.mcp.registerServer(agent.connection.agent, {
    name: "agentkit-check-acp",
    handler: async (context) => {
      const outcome = await adapter.handler(context);
      if ("result" in outcome) answered += 1;
      else refused.push(`${context.method}: MCP error ${outcome.error.code} "${outcome.error.message}"`);
      return outcome;
    },
  });
  run.cleanups.push(() => registration.dispose(), () => adapter.close());
  const declaration = { ...registration.declaration } as unknown as acp.McpServer; // `acp` is only in the unstable schema
  await checkServer(run, agent, "mcp.acp", "the MCP server served over the ACP connection", declaration, () => answered > 0, () =>
    refused.length > 0 ? `; its requests were refused by the MCP SDK: ${refused.slice(0, 3).join("; ")}` : "",
  );
}

async function checkServer(
  run: Run,
  agent: WireAgent,
  id: string,
  what: string,
  server: acp.McpServer,
  contacted: () => boolean,
  why: () => string = () => "",
): Promise<void> {
  const created = await newSession(run, agent, run.newSessionParams([server]));
  if (created.sessionId === undefined) {
    run.fail(id, `session/new with ${what}: ${describeOutcome(created.outcome)}`);
    return;
  }
  const bound = Math.min(run.timeoutMs, 10_000);
  // Agents may connect in the background after answering, or only on the first prompt.
  if (await waitFor(contacted, run.skipPrompts ? bound : 2_000)) {
    run.pass(id, `${what} was connected after session/new`);
    return;
  }
  if (run.skipPrompts) {
    run.warn(id, `${what} was not contacted within ${bound} ms of session/new${why()}; an agent that connects on the first prompt cannot be judged with --skip-prompts`);
    return;
  }
  const turn = await runTurn(run, agent, created.sessionId, [textBlock(run.prompts.text)]);
  if (await waitFor(contacted, bound)) run.pass(id, `${what} was connected during the first prompt turn`);
  else if (!inconclusiveByKit(run, id, turn)) run.fail(id, `${what} was never contacted (not after session/new, not during a prompt turn that ended with ${describeTurn(turn)})${why()}`);
}

/** `{command, args}` of the probe: the built `mcp-probe.js` in dist/. */
export function probeCommand(marker: string): { command: string; args: string[] } {
  return { command: process.execPath, args: [builtFile("testing", "conformance", "mcp-probe.js"), marker] };
}

async function waitFor(condition: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() >= deadline) return false;
    await delay(50);
  }
  return true;
}
