import * as acp from "@agentclientprotocol/sdk";
import type {
  ClientCapabilities,
  ClientConnection,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionNotification,
  SessionUpdate,
  Stream,
} from "@agentclientprotocol/sdk";
import { AcpClientHandle } from "../acp/agent/client-handle.js";
import type { AcpHeadlessRuntime, AcpServedConnection } from "../acp/agent/runtime.js";
import { hostCapabilities, registerHostHandlers } from "../acp/client/host-bridge.js";
import type { HostServices, HostSessionInfo } from "../acp/client/host-services.js";

// In-memory ACP connections with real ndjson framing, for tests of code built on this toolkit:
// an agent served to a recording client, or agent-side code talking to real client host services.

/** Two in-memory byte pipes with real ndjson framing (what stdio would carry). */
export function memoryPipes(): { agent: Stream; client: Stream; closeClientSide(): Promise<void> } {
  const toClient = new TransformStream<Uint8Array, Uint8Array>();
  const toAgent = new TransformStream<Uint8Array, Uint8Array>();
  return {
    agent: acp.ndJsonStream(toClient.writable, toAgent.readable),
    client: acp.ndJsonStream(toAgent.writable, toClient.readable),
    // Closing the client's outgoing pipe is the in-memory "stdin EOF".
    closeClientSide: async () => {
      await toAgent.writable.close().catch(() => undefined);
    },
  };
}

/** How the recording client answers a `session/request_permission` (see `selectOption`). */
export type RecordedPermissionAnswer = (request: RequestPermissionRequest, signal: AbortSignal) => Promise<RequestPermissionResponse> | RequestPermissionResponse;

/** A `session/request_permission` answer choosing `optionId`. */
export const selectOption = (optionId: string): RequestPermissionResponse => ({ outcome: { outcome: "selected", optionId } });

/**
 * The official SDK client, recording every update and permission request. `answer` decides
 * permission prompts (default: allow once); `waitFor` waits on recorded events, never on time.
 */
export class RecordingClient {
  readonly notifications: SessionNotification[] = [];
  readonly permissionRequests: RequestPermissionRequest[] = [];
  /** Tool call ids of permission requests the agent cancelled ($/cancel_request). */
  readonly cancelledPermissions: string[] = [];
  answer: RecordedPermissionAnswer = () => selectOption("allow_once");
  readonly app: acp.ClientApp;
  #waiters: Array<() => void> = [];

  constructor() {
    this.app = acp
      .client({ name: "recording-client" })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        this.notifications.push(params);
        this.#changed();
      })
      .onRequest(acp.methods.client.session.requestPermission, async ({ params, signal }) => {
        this.permissionRequests.push(params);
        this.#changed();
        signal.addEventListener("abort", () => {
          this.cancelledPermissions.push(params.toolCall.toolCallId);
          this.#changed();
        });
        return this.answer(params, signal);
      });
  }

  connect(stream: Stream | acp.AgentApp): ClientConnection {
    return "writable" in stream ? this.app.connect(stream) : this.app.connect(stream);
  }

  updates(sessionId: string): SessionUpdate[] {
    return this.notifications.filter((n) => n.sessionId === sessionId).map((n) => n.update);
  }

  /** Resolves once `predicate` holds (checked after every recorded event); rejects after `timeoutMs`. */
  waitFor(predicate: () => boolean, what = "condition", timeoutMs = 20_000): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs);
      const check = (): void => {
        if (!predicate()) return;
        clearTimeout(timer);
        this.#waiters = this.#waiters.filter((w) => w !== check);
        resolve();
      };
      this.#waiters.push(check);
    });
  }

  #changed(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }
}

/** An agent runtime and a client connected in memory. */
export interface InMemoryPair {
  client: RecordingClient;
  connection: ClientConnection;
  /** The client's view of the agent: `agent.request(acp.methods.agent.initialize, …)`. */
  agent: ClientConnection["agent"];
  served: AcpServedConnection;
  /** Closes the client side ("stdin EOF") and waits until the runtime has shut the connection down. */
  close(): Promise<void>;
}

/** Serves `runtime` to a `RecordingClient` over in-memory pipes. */
export function serveInMemory(runtime: AcpHeadlessRuntime, client: RecordingClient = new RecordingClient()): InMemoryPair {
  const pipes = memoryPipes();
  const served = runtime.serve(pipes.agent);
  const connection = client.connect(pipes.client);
  return {
    client,
    connection,
    agent: connection.agent,
    served,
    async close() {
      await pipes.closeClientSide();
      connection.close();
      await served.closed;
    },
  };
}

/** Agent-side code connected to real client host services (`createFileSystemHost`, `createTerminalHost`). */
export interface HostServicesPair {
  /** What agent code uses to reach the client: `new ClientFileOperations(client, sessionId)` … */
  client: AcpClientHandle;
  /** Closes both ends and disposes the terminal host. */
  close(): Promise<void>;
}

/**
 * Connects an agent-side `AcpClientHandle` over in-memory pipes to a client that serves
 * `services` for one session, exactly as `AcpClient` serves them to a spawned agent.
 * The client advertises what the services can do (or `capabilities`, when given).
 */
export async function connectHostServices(services: HostServices, session: HostSessionInfo, options: { capabilities?: ClientCapabilities } = {}): Promise<HostServicesPair> {
  const pipes = memoryPipes();
  let handle: AcpClientHandle | undefined;
  const agentConnection = acp
    .agent({ name: "in-memory-agent" })
    .onRequest(acp.methods.agent.initialize, ({ params, client }) => {
      handle = new AcpClientHandle(client, params.clientCapabilities ?? {});
      return { protocolVersion: acp.PROTOCOL_VERSION, agentCapabilities: {}, authMethods: [] };
    })
    .connect(pipes.agent);
  const app = acp.client({ name: "in-memory-client" });
  // The host bridge is typed for the SDK's /unstable client app (AcpClient's); the stable app has the same handlers.
  registerHostHandlers(app as unknown as Parameters<typeof registerHostHandlers>[0], services, (id) => (id === session.sessionId ? session : undefined));
  const clientConnection = app.connect(pipes.client);
  await clientConnection.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: options.capabilities ?? hostCapabilities(services),
  });
  if (!handle) throw new Error("the in-memory agent was not initialized");
  return {
    client: handle,
    async close() {
      await services.terminal?.dispose();
      clientConnection.close();
      agentConnection.close();
    },
  };
}
