import * as acp from "@agentclientprotocol/sdk/unstable";
import type { HostServices, HostSessionInfo } from "./host-services.js";

/** Exactly what the provided host services implement; nothing is offered by default. */
export function hostCapabilities(services: HostServices | undefined): acp.ClientCapabilities {
  const fs = services?.fileSystem;
  return {
    fs: { readTextFile: fs?.canRead === true, writeTextFile: fs?.canWrite === true },
    terminal: services?.terminal !== undefined,
    // We pass boolean config options through unchanged, so we can take them.
    session: { configOptions: { boolean: {} } },
  };
}

/**
 * Forwards the agent's `fs/*` and `terminal/*` requests to the host services, with the
 * session's roots. A request for a session this client does not know gets -32002.
 */
export function registerHostHandlers(
  app: acp.ClientApp,
  services: HostServices | undefined,
  lookup: (sessionId: string) => HostSessionInfo | undefined,
): void {
  const session = (sessionId: string): HostSessionInfo => {
    const info = lookup(sessionId);
    if (!info) throw acp.RequestError.sessionNotFound(sessionId);
    return info;
  };
  const fs = services?.fileSystem;
  if (fs) {
    app.onRequest(acp.methods.client.fs.readTextFile, ({ params, signal }) => {
      if (!fs.canRead) throw acp.RequestError.methodNotFound(acp.methods.client.fs.readTextFile);
      return fs.readTextFile(params, session(params.sessionId), signal);
    });
    app.onRequest(acp.methods.client.fs.writeTextFile, ({ params, signal }) => {
      if (!fs.canWrite) throw acp.RequestError.methodNotFound(acp.methods.client.fs.writeTextFile);
      return fs.writeTextFile(params, session(params.sessionId), signal);
    });
  }
  const terminal = services?.terminal;
  if (terminal) {
    const t = acp.methods.client.terminal;
    app.onRequest(t.create, ({ params, signal }) => terminal.create(params, session(params.sessionId), signal));
    app.onRequest(t.output, ({ params }) => terminal.output(params, session(params.sessionId)));
    app.onRequest(t.waitForExit, ({ params, signal }) => terminal.waitForExit(params, session(params.sessionId), signal));
    app.onRequest(t.kill, ({ params }) => terminal.kill(params, session(params.sessionId)));
    app.onRequest(t.release, ({ params }) => terminal.release(params, session(params.sessionId)));
  }
}
