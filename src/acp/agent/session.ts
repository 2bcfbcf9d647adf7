import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { AgentEvent, CancellationHandle, Item, Logger } from "../../core/index.js";
import { CancellationController } from "../../core/index.js";
import type { AcpClientHandle } from "./client-handle.js";
import type { AcceptedContent } from "./input.js";
import { TEXT_ONLY, TurnGate } from "./input.js";
import { AgentUpdateMapper } from "./mapping.js";
import type { OutputAccount } from "./output-budget.js";
import { UpdateQueue } from "./update-queue.js";
import { DEFAULT_PRINCIPAL } from "./principal.js";

/** What `AcpIntegration.bindSession` needs to route one loop session to one ACP session. */
export interface AcpSessionBinding {
  acpSessionId: string;
  /** The loop's session id (`driver.sessionId`); events are routed by it. */
  agentSessionId: string;
  client: AcpClientHandle;
  /** Optional prompt content this session takes (advertised and supported by its model). Default: text only. */
  accepts?: AcceptedContent;
  /** The session's cancellation controller (default: a new one). */
  cancellation?: CancellationController;
  /** Who the session belongs to: remembered approvals are this principal's (default `"default"`). */
  principal?: string;
}

/**
 * One bound ACP session: its cancellation controller, its turn gate, the ordered update queue
 * and the per-session mapping state. Created by `AcpIntegration.bindSession`.
 */
export class AcpSessionHandle {
  readonly acpSessionId: string;
  readonly agentSessionId: string;
  readonly client: AcpClientHandle;
  readonly accepts: AcceptedContent;
  /** The principal the session belongs to (its remembered approvals are this principal's). */
  readonly principal: string;
  /** At most one turn at a time; see `AcpInputPort.beginTurn`. */
  readonly gate = new TurnGate();
  readonly #controller: CancellationController;
  readonly #mapper = new AgentUpdateMapper();
  readonly #queue: UpdateQueue;
  readonly #interjections: Item[] = [];
  #closed = false;

  /** @internal — use `AcpIntegration.bindSession`. */
  constructor(binding: AcpSessionBinding, logger: Logger, options: { coalesceMs?: number; account?: OutputAccount } = {}) {
    this.acpSessionId = binding.acpSessionId;
    this.agentSessionId = binding.agentSessionId;
    this.client = binding.client;
    this.accepts = binding.accepts ?? TEXT_ONLY;
    this.principal = binding.principal ?? DEFAULT_PRINCIPAL;
    this.#controller = binding.cancellation ?? new CancellationController();
    this.#queue = new UpdateQueue((update) => this.client.sessionUpdate(this.acpSessionId, update), logger, options);
  }

  /** The handle to give `Agent.builder().cancellation(...)`. */
  cancellationHandle(): CancellationHandle {
    return this.#controller.handle();
  }

  /** Cancels the running turn (model stream, running tool, approval wait). */
  interrupt(reason = "cancelled by the ACP client"): void {
    this.#controller.interrupt(reason);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Resolves once every update produced so far has been sent to the client. */
  flush(): Promise<void> {
    return this.#queue.flushed();
  }

  /** undefined while the connection's output budget has room; else resolves once it has. */
  backlog(): Promise<void> | undefined {
    return this.#closed ? undefined : this.#queue.backlog();
  }

  /** Queues a ready-made update behind everything queued so far (replay, mode and config changes). */
  push(update: SessionUpdate): void {
    if (!this.#closed) this.#queue.push(update);
  }

  /** Queues input for the running turn's next after-tool-result point (or, if none comes, the next turn). */
  interject(items: Item[]): void {
    this.#interjections.push(...items);
  }

  takeInterjections(): Item[] {
    return this.#interjections.splice(0);
  }

  /** @internal — the integration routes this session's loop events here. */
  receive(event: AgentEvent): void {
    if (this.#closed) return;
    for (const update of this.#mapper.map(event)) this.#queue.push(update);
  }

  /** @internal */
  markClosed(): void {
    this.#closed = true;
  }
}
