import { Readable, Writable } from "node:stream";
import * as V2 from "@agentclientprotocol/sdk/experimental/v2/unstable";
import type { Serve } from "./serve-support.js";

export const info = { name: "v2-test", version: "1" };

/** The official SDK's v2 client on a spawned `serve`, recording updates and permission requests. */
export class V2Client {
  readonly updates: V2.UpdateSessionNotification[] = [];
  readonly permissions: V2.RequestPermissionRequest[] = [];
  readonly elicitations: V2.CreateElicitationRequest[] = [];
  /** MCP over ACP: MCP servers this client serves to the agent (`mcp/message`). */
  readonly mcp = new V2.McpOverAcpProvider();
  /** How to answer an elicitation/create (default: decline). */
  elicit: (request: V2.CreateElicitationRequest) => Promise<V2.CreateElicitationResponse> = () => Promise.resolve({ action: "decline" });
  /** How to answer a permission request (default: the first allow option). */
  answer: (request: V2.RequestPermissionRequest, signal: AbortSignal) => Promise<V2.RequestPermissionResponse> = (request) =>
    Promise.resolve({ outcome: { outcome: "selected", optionId: request.options.find((o) => o.kind === "allow_once")!.optionId } });
  readonly #waiters: Array<{ test: () => boolean; resolve: () => void }> = [];
  readonly connection: V2.ClientConnection;

  constructor(readonly proc: Serve) {
    const app = V2.client({ name: "v2-test" })
      .onNotification(V2.methods.client.session.update, ({ params }) => {
        this.updates.push(params);
        this.#check();
      })
      .onRequest(V2.methods.client.session.requestPermission, ({ params, signal }) => {
        this.permissions.push(params);
        this.#check();
        return this.answer(params, signal);
      })
      .onRequest(V2.methods.client.elicitation.create, ({ params }) => {
        this.elicitations.push(params);
        this.#check();
        return this.elicit(params);
      })
      .onRequest(V2.methods.client.mcp.message, this.mcp.handleRequest);
    const { stdin, stdout } = proc.pipes();
    this.connection = app.connect(V2.ndJsonStream(Writable.toWeb(stdin) as WritableStream<Uint8Array>, Readable.toWeb(stdout) as ReadableStream<Uint8Array>));
  }

  get agent(): V2.ClientContext {
    return this.connection.agent;
  }

  #check(): void {
    for (const w of [...this.#waiters]) {
      if (w.test()) {
        this.#waiters.splice(this.#waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  }

  /** Resolves when `test` holds (checked on every update/request); bounded. */
  until(test: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
    if (test()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; stderr:\n${this.proc.stderr}`)), timeoutMs);
      this.#waiters.push({ test, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }

  of(sessionId: string): V2.SessionUpdate[] {
    return this.updates.filter((u) => u.sessionId === sessionId).map((u) => u.update);
  }

  idle(sessionId: string): Array<V2.SessionUpdate & { stopReason?: unknown }> {
    return this.of(sessionId).filter((u) => u.sessionUpdate === "state_update" && (u as { state?: unknown }).state === "idle") as Array<V2.SessionUpdate & { stopReason?: unknown }>;
  }

  text(sessionId: string, kind: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk"): string {
    return this.of(sessionId)
      .filter((u) => u.sessionUpdate === kind)
      .map((u) => ((u as V2.ContentChunk).content as { text?: string }).text ?? "")
      .join("");
  }
}
