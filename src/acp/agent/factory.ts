import type { ClientCapabilities, McpServer } from "@agentclientprotocol/sdk";
import type { CancellationHandle, Logger, TranscriptObserver } from "../../core/index.js";
import { Agent, LoopDriver } from "../../loop/index.js";
import type { LoopSnapshot } from "../../loop/index.js";
import type { McpServerConfig } from "../../tools/index.js";
import type { AcpClientHandle } from "./client-handle.js";
import type { AcpIntegration } from "./integration.js";

/** What the headless runtime hands the agent factory for each new session. */
export interface AcpAgentFactoryContext {
  acpSessionId: string;
  /** Start the loop session with this id (`agent.start({ sessionId })`) so events route here. */
  agentSessionId: string;
  /** Who opened the session (see `AcpServeOptions.principal`); `"default"` on stdio. */
  principal: string;
  /** Absolute working directory from session/new. */
  cwd: string;
  /** Further absolute workspace roots from session/new. */
  additionalDirectories: string[];
  /** Wire it with `.observer(context.integration)`. */
  integration: AcpIntegration;
  /** Wire it with `.cancellation(context.cancellation)` so session/cancel reaches the turn. */
  cancellation: CancellationHandle;
  /** MCP servers the client asked for (start them per session; stop them in `close`). */
  mcpServers: McpServer[];
  /** `mcpServers`, checked and converted by the runtime (`startSessionMcpServers` takes them). */
  mcpServerConfigs?: McpServerConfig[];
  clientCapabilities: ClientCapabilities;
  /** Requests back to the client (fs/*, terminal/*) — check `client.canReadFiles` etc. first. */
  client: AcpClientHandle;
  /**
   * Set by session/load and session/resume: the stored transcript to continue. A returned Agent
   * is started with it; a factory that returns a started LoopDriver must start it with it.
   */
  snapshot?: LoopSnapshot;
  /**
   * Set when the runtime has a session store: persists each committed item. A returned Agent
   * gets them at start; a factory that returns a started LoopDriver must pass them itself.
   */
  transcriptObservers?: TranscriptObserver[];
  /** cwd, additional directories, ACP session id and the request's `_meta`; passed to `agent.start`. */
  metadata: Record<string, unknown>;
  logger: Logger;
  /**
   * Aborted when the client cancels the request that opens this session (`$/cancel_request` on
   * session/new, load, resume or fork): stop slow start-up work (e.g. MCP servers) and throw.
   */
  signal?: AbortSignal;
}

/** A session's agent plus cleanup (e.g. stopping its MCP servers) run on close. */
export interface AcpSessionAgent {
  agent: Agent | LoopDriver;
  close?: () => void | Promise<void>;
  /**
   * Problems the user should see (e.g. an MCP server that did not start). Sent after the
   * session/new answer as a `notice` when the client advertises `session.notices`, else as
   * agent message text at the start of the session's first prompt.
   */
  warnings?: string[];
}

/**
 * What a factory returns for a session: an `Agent` (started by the runtime), a `LoopDriver` already started, or
 * either with its cleanup and warnings.
 */
export type AcpAgentFactoryResult = Agent | LoopDriver | AcpSessionAgent;

/**
 * Builds the agent of one ACP session (new, load, resume, fork) from the session's context; the runtime calls it once
 * per session and closes what it returns with the session.
 */
export type AcpAgentFactory = (context: AcpAgentFactoryContext) => AcpAgentFactoryResult | Promise<AcpAgentFactoryResult>;

/** Starts the factory's agent (if it returned one) with the session's ids, cwd and metadata. */
export function startSessionAgent(
  made: AcpAgentFactoryResult,
  context: AcpAgentFactoryContext,
): { driver: LoopDriver; close: (() => void | Promise<void>) | undefined; warnings: string[] } {
  const entry: AcpSessionAgent = made instanceof Agent || made instanceof LoopDriver ? { agent: made } : made;
  const driver =
    entry.agent instanceof LoopDriver
      ? entry.agent
      : entry.agent.start({
          sessionId: context.agentSessionId,
          cwd: context.cwd,
          additionalDirectories: context.additionalDirectories,
          metadata: context.metadata,
          ...(context.snapshot ? { snapshot: context.snapshot } : {}),
          ...(context.transcriptObservers ? { transcriptObservers: context.transcriptObservers } : {}),
        });
  return { driver, close: entry.close, warnings: entry.warnings ?? [] };
}
