import type { ContentBlock, PromptResponse } from "@agentclientprotocol/sdk";
import { RequestError } from "@agentclientprotocol/sdk/unstable";
import type { ApprovalRequest, CancellationHandle, Item, Logger, LoopObserver, ObservedEvent } from "../../core/index.js";
import { ConfigError, StateError, activeContext, createStderrLogger, inContext, packageVersion } from "../../core/index.js";
import type { AcpApprovalDecision, AcpApprovalResolver } from "./approval.js";
import type { AcpApprovalMemory } from "./approval-memory.js";
import { NoopApprovalMemory } from "./approval-memory.js";
import type { BusyPolicy, TurnLease } from "./input.js";
import { promptToItems } from "./input.js";
import type { OutputAccount } from "./output-budget.js";
import { OutputBudget } from "./output-budget.js";
import type { AcpClientHandle } from "./client-handle.js";
import type { AcpSessionBinding } from "./session.js";
import { AcpSessionHandle } from "./session.js";
import type { ApprovalDeps, TurnDriver } from "./turn.js";
import { decideApproval, driveTurn } from "./turn.js";

/**
 * Makes loop sessions ACP-addressable. It is the shared LoopObserver (events are routed by
 * `ObservedEvent.sessionId` to the bound ACP session), and hands out the other pieces a host
 * wires into its own loop: input port, cancellation, approvals, session registry. It never
 * submits input or resolves approvals on its own — the host (or AcpHeadlessRuntime) drives.
 */
export class AcpIntegration implements LoopObserver {
  readonly name: string;
  readonly version: string;
  /** Sent as `initialize`'s `_meta` (e.g. `{ agentkit: { sandbox } }`: what the agent's commands may do). */
  readonly infoMeta: Record<string, unknown> | undefined;
  readonly logger: Logger;
  readonly #deps: ApprovalDeps;
  readonly #byAcp = new Map<string, AcpSessionHandle>();
  readonly #byAgent = new Map<string, AcpSessionHandle>();
  readonly #coalesceMs: number;
  /** Queued session updates, per connection (its client handle) and for all of them. */
  readonly outputBudget: OutputBudget;
  readonly #accounts = new WeakMap<AcpClientHandle, OutputAccount>();

  /** @internal — use `AcpIntegration.builder()`. */
  constructor(settings: { name: string; version: string; resolver: AcpApprovalResolver; memory: AcpApprovalMemory; logger: Logger; coalesceMs?: number; outputBudget?: OutputBudget; infoMeta?: Record<string, unknown> }) {
    this.#coalesceMs = settings.coalesceMs ?? 0;
    this.outputBudget = settings.outputBudget ?? new OutputBudget();
    this.infoMeta = settings.infoMeta;
    this.name = settings.name;
    this.version = settings.version;
    this.logger = settings.logger;
    this.#deps = { resolver: settings.resolver, memory: settings.memory, logger: settings.logger, agentName: settings.name };
  }

  static builder(): AcpIntegrationBuilder {
    return new AcpIntegrationBuilder();
  }

  handleEvent(observed: ObservedEvent): void {
    const session = this.#byAgent.get(observed.sessionId);
    if (!session) return; // a session the host keeps local (not bound to ACP)
    if (observed.event.type === "warning") this.logger.warn(observed.event.message, { acpSessionId: session.acpSessionId });
    if (observed.event.type === "run_failed") this.logger.error(`run failed: ${observed.event.message}`, { acpSessionId: session.acpSessionId });
    session.receive(observed.event);
  }

  /** Backpressure: the loop waits on this before taking more of the model's stream. */
  backlog(sessionId: string): Promise<void> | undefined {
    return this.#byAgent.get(sessionId)?.backlog();
  }

  /** Routes a loop session to an ACP session. Both ids must be unused. */
  bindSession(binding: AcpSessionBinding): AcpSessionHandle {
    if (this.#byAcp.has(binding.acpSessionId)) throw new StateError(`ACP session ${binding.acpSessionId} is already bound`);
    if (this.#byAgent.has(binding.agentSessionId)) throw new StateError(`loop session ${binding.agentSessionId} is already bound`);
    let account = this.#accounts.get(binding.client);
    if (account === undefined) this.#accounts.set(binding.client, (account = this.outputBudget.account()));
    const session = new AcpSessionHandle(binding, this.logger, { coalesceMs: this.#coalesceMs, account });
    this.#byAcp.set(session.acpSessionId, session);
    this.#byAgent.set(session.agentSessionId, session);
    return session;
  }

  /** Stops routing; later events of that loop session are ignored. */
  unbindSession(acpSessionId: string): boolean {
    const session = this.#byAcp.get(acpSessionId);
    if (!session) return false;
    session.markClosed();
    this.#byAcp.delete(acpSessionId);
    this.#byAgent.delete(session.agentSessionId);
    return true;
  }

  /** The bound session, or a -32002 RequestError naming the id (what ACP clients expect). */
  session(acpSessionId: string): AcpSessionHandle {
    const session = this.#byAcp.get(acpSessionId);
    if (!session) throw sessionNotFound(acpSessionId);
    return session;
  }

  cancellationHandle(acpSessionId: string): CancellationHandle {
    return this.session(acpSessionId).cancellationHandle();
  }

  /** Cancels the session's running turn. False when the session is unknown. */
  interruptSession(acpSessionId: string): boolean {
    const session = this.#byAcp.get(acpSessionId);
    if (!session) return false;
    session.interrupt();
    return true;
  }

  inputPort(): AcpInputPort {
    return new AcpInputPort(this, this.#deps);
  }

  sessionRegistry(): AcpSessionRegistry {
    return new AcpSessionRegistry(this.#byAcp, this.#byAgent);
  }

  /** Memory, then resolver, raced with the session's cancellation since `generation` (default: now). */
  resolveApproval(acpSessionId: string, request: ApprovalRequest, generation?: number): Promise<AcpApprovalDecision> {
    const session = this.session(acpSessionId);
    return decideApproval(session, request, generation ?? session.cancellationHandle().generation(), this.#deps);
  }

  /** Drives a turn whose input is already submitted, to its PromptResponse (see `driveTurn`). */
  driveTurn(acpSessionId: string, driver: TurnDriver): Promise<PromptResponse> {
    return driveTurn(this.session(acpSessionId), driver, this.#deps);
  }
}

export function sessionNotFound(acpSessionId: string): RequestError {
  return new RequestError(-32002, `Resource not found: session ${acpSessionId}`, { sessionId: acpSessionId });
}

/** ACP prompts → loop input, plus the turn-arbitration helpers (busy / idle / after-tool-result). */
export class AcpInputPort {
  readonly #integration: AcpIntegration;
  readonly #deps: ApprovalDeps;

  /** @internal */
  constructor(integration: AcpIntegration, deps: ApprovalDeps) {
    this.#integration = integration;
    this.#deps = deps;
  }

  /** One user item from ACP content; -32602 for content the session does not take. */
  toItems(acpSessionId: string, blocks: readonly ContentBlock[]): Item[] {
    return promptToItems(blocks, this.#integration.session(acpSessionId).accepts);
  }

  /**
   * Takes the session's turn under a busy policy: `reject` fails at once with -32600 when a turn
   * runs, `queue` waits for it, `cancel_and_restart` cancels it and then waits.
   */
  async beginTurn(acpSessionId: string, policy: BusyPolicy = "reject", signal?: AbortSignal): Promise<TurnLease> {
    const session = this.#integration.session(acpSessionId);
    const now = session.gate.tryAcquire();
    if (now) return now;
    if (policy === "reject") throw RequestError.invalidRequest({ sessionId: acpSessionId }, `session ${acpSessionId} is already running a prompt; wait for it or send session/cancel`);
    if (policy === "cancel_and_restart") session.interrupt("cancelled by a newer prompt");
    return session.gate.acquire(signal);
  }

  /** Queues a prompt for the running turn's next after-tool-result point (an interjection). */
  interject(acpSessionId: string, blocks: readonly ContentBlock[]): void {
    const items = this.toItems(acpSessionId, blocks);
    this.#integration.session(acpSessionId).interject(items);
  }

  /**
   * The whole `session/prompt` flow for a driver the caller owns: convert, take the turn under
   * `policy`, submit, drive to the PromptResponse, release.
   */
  async prompt(acpSessionId: string, driver: TurnDriver, blocks: readonly ContentBlock[], policy: BusyPolicy = "reject"): Promise<PromptResponse> {
    const session = this.#integration.session(acpSessionId);
    const traced = activeContext(); // the turn's parent, should beginTurn wait
    const items = promptToItems(blocks, session.accepts);
    // Synchronous up to driver.next() when the gate is free, so a cancel that arrives right
    // after the prompt still lands on this turn's generation.
    const lease = session.gate.tryAcquire() ?? (await this.beginTurn(acpSessionId, policy));
    try {
      driver.submitInput(items);
      return await inContext(traced, () => driveTurn(session, driver, this.#deps));
    } finally {
      lease.release();
    }
  }
}

/** Read-only view of the bound sessions. */
export class AcpSessionRegistry {
  readonly #byAcp: ReadonlyMap<string, AcpSessionHandle>;
  readonly #byAgent: ReadonlyMap<string, AcpSessionHandle>;

  /** @internal */
  constructor(byAcp: ReadonlyMap<string, AcpSessionHandle>, byAgent: ReadonlyMap<string, AcpSessionHandle>) {
    this.#byAcp = byAcp;
    this.#byAgent = byAgent;
  }

  get size(): number {
    return this.#byAcp.size;
  }
  get(acpSessionId: string): AcpSessionHandle | undefined {
    return this.#byAcp.get(acpSessionId);
  }
  byAgentSession(agentSessionId: string): AcpSessionHandle | undefined {
    return this.#byAgent.get(agentSessionId);
  }
  has(acpSessionId: string): boolean {
    return this.#byAcp.has(acpSessionId);
  }
  list(): AcpSessionHandle[] {
    return [...this.#byAcp.values()];
  }
}

/**
 * Configures an `AcpIntegration` (from `AcpIntegration.builder()`): agent name and version, the approval resolver
 * (required: choosing who answers permission requests is never implicit) and approval memory.
 */
export class AcpIntegrationBuilder {
  #name = "agentkit-acp";
  #version: string | undefined;
  #resolver: AcpApprovalResolver | undefined;
  #memory: AcpApprovalMemory = new NoopApprovalMemory();
  #logger: Logger | undefined;
  #coalesceMs = 0;
  #infoMeta: Record<string, unknown> | undefined;

  /** `agentInfo.name` in `initialize`. */
  name(name: string): this {
    this.#name = name;
    return this;
  }
  /** `agentInfo.version` (default: this package's version). */
  version(version: string): this {
    this.#version = version;
    return this;
  }
  /** `initialize`'s `_meta`: facts about this agent a client may show (serve: `{ agentkit: { sandbox } }`). */
  infoMeta(meta: Record<string, unknown>): this {
    this.#infoMeta = meta;
    return this;
  }
  /** Required: how approvals are decided (ClientPermissionResolver, AutoApproveResolver, AutoDenyResolver, custom). */
  approvalResolver(resolver: AcpApprovalResolver): this {
    this.#resolver = resolver;
    return this;
  }
  /** Remembered "always" answers, consulted before the resolver (default: none). */
  approvalMemory(memory: AcpApprovalMemory): this {
    this.#memory = memory;
    return this;
  }
  logger(logger: Logger): this {
    this.#logger = logger;
    return this;
  }
  /**
   * Merge consecutive text/thought chunks of one message that are not sent yet, holding them
   * at most `ms` when the output is idle (0, the default: one update per model delta).
   * Other updates are never held back or reordered; the assembled text is identical.
   */
  coalesceMs(ms: number): this {
    if (!Number.isFinite(ms) || ms < 0) throw new ConfigError(`coalesceMs must be a non-negative number of milliseconds (got ${ms})`);
    this.#coalesceMs = ms;
    return this;
  }

  build(): AcpIntegration {
    if (!this.#resolver) {
      throw new ConfigError(
        "AcpIntegration.builder(): an approval resolver is required — choose one explicitly with .approvalResolver(new ClientPermissionResolver()) (ask the editor), AutoDenyResolver, AutoApproveResolver, or your own",
      );
    }
    return new AcpIntegration({
      name: this.#name,
      version: this.#version ?? packageVersion(),
      resolver: this.#resolver,
      memory: this.#memory,
      logger: this.#logger ?? createStderrLogger("warn"),
      coalesceMs: this.#coalesceMs,
      ...(this.#infoMeta ? { infoMeta: this.#infoMeta } : {}),
    });
  }
}
