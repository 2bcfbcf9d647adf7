import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import type {
  ClientConnection,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionNotification,
  SessionUpdate,
  Stream,
} from "@agentclientprotocol/sdk";

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

export type PermissionAnswer = (request: RequestPermissionRequest, signal: AbortSignal) => Promise<RequestPermissionResponse> | RequestPermissionResponse;

export const select = (optionId: string): RequestPermissionResponse => ({ outcome: { outcome: "selected", optionId } });

/**
 * The official SDK client, recording every update and permission request. `answer` decides
 * permission prompts (default: allow once); `waitFor` waits on recorded events, never on time.
 */
export class RecordingClient {
  readonly notifications: SessionNotification[] = [];
  readonly permissionRequests: RequestPermissionRequest[] = [];
  /** Signals of permission requests the agent cancelled ($/cancel_request). */
  readonly cancelledPermissions: string[] = [];
  answer: PermissionAnswer = () => select("allow_once");
  readonly app: acp.ClientApp;
  #waiters: Array<() => void> = [];

  constructor() {
    this.app = acp
      .client({ name: "test-client" })
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

/** A promise with its resolver, for permission answers a test releases later. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves with `{ cancelled }` when the permission request is cancelled by the agent. */
export function waitForAbort(signal: AbortSignal): Promise<RequestPermissionResponse> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve({ outcome: { outcome: "cancelled" } });
    else signal.addEventListener("abort", () => resolve({ outcome: { outcome: "cancelled" } }), { once: true });
  });
}

export function tempDir(prefix = "agentkit-agent-"): { path: string; remove(): void } {
  const path = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export function textOf(updates: SessionUpdate[], kind: "agent_message_chunk" | "agent_thought_chunk"): string {
  return updates
    .map((u) => (u.sessionUpdate === kind && u.content.type === "text" ? u.content.text : ""))
    .join("");
}
