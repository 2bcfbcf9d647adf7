// Runs the MCP fixture server over stdio: `node dist/testing/mcp-fixture-stdio.js [--spawn-child | --hang | --fail]`.
// Not exported from the testing index: importing it starts a server on this process's stdio.
import { spawn } from "node:child_process";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createMcpFixtureServer, createMcpFixtureState } from "./mcp-fixture-server.js";

const flags = new Set(process.argv.slice(2));

if (flags.has("--fail")) {
  process.stderr.write("fixture failed on purpose\n");
  process.exit(3);
}

if (flags.has("--hang")) {
  // Alive, reading nothing, answering nothing (the pid lets tests check it was ended).
  process.stderr.write(`fixture pid:${process.pid}\n`);
  setInterval(() => {}, 60_000);
} else {
  const state = createMcpFixtureState();
  if (flags.has("--spawn-child")) {
    // Same process group as the server; it keeps this process alive after stdin closes, and on
    // SIGTERM it takes 300 ms to clean up, as real children do: whoever ends the group must wait.
    const child = spawn(process.execPath, ["-e", "process.on('SIGTERM', () => setTimeout(() => process.exit(0), 300)); setInterval(() => {}, 60000)"], { stdio: "ignore" });
    if (child.pid !== undefined) state.childPids.push(child.pid);
  }
  await createMcpFixtureServer(state).connect(new StdioServerTransport());
}
