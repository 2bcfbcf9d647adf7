import { ClientFileOperations, ClientTerminalCommandRunner } from "../../../src/acp/agent/index.js";
import { createFileSystemHost, createTerminalHost } from "../../../src/acp/client/index.js";
import { connectHostServices } from "../../../src/testing/index.js";
import { operationsContract } from "../../tools/operations.contract.js";

// The same contract through ACP: agent-side operations over the client's fs/* and terminal/*
// (our real hosts), in memory with real framing.
operationsContract("client-hosted files and terminals over ACP", async (root) => {
  const services = { fileSystem: createFileSystemHost({ access: "read-write" }), terminal: createTerminalHost({ killGraceMs: 500 }) };
  const pair = await connectHostServices(services, { sessionId: "s1", cwd: root, additionalDirectories: [] });
  return {
    files: new ClientFileOperations(pair.client, "s1"),
    commands: new ClientTerminalCommandRunner(pair.client, "s1"),
    close: () => pair.close(),
  };
});
