import { mkdir } from "node:fs/promises";
import { InMemoryApprovalMemory, NoopApprovalMemory, type AcpApprovalMemory } from "./approval-memory.js";
import { AutoApproveResolver, AutoDenyResolver, ClientPermissionResolver, type AcpApprovalResolver } from "./approval.js";
import { DurableApprovalMemory } from "./durable-approval-memory.js";
import type { Logger } from "../../core/index.js";
import type { SessionStore } from "../../store/index.js";
import { FileApprovalMemoryStore, InMemorySessionStore, JsonlSessionStore, defaultStateDir } from "../../store/index.js";
import type { PermissionMode } from "../../tools/index.js";

/** Who answers what the session's mode asks about: the client (ask, auto-reads), nobody (auto-all approves, deny refuses). */
export type ApproveMode = "ask" | "auto-reads" | "auto-all" | "deny";

/** The persistence choices of `serve` (`--state-dir`, `--no-persist`, …). */
export interface ServeStateOptions {
  /** --state-dir; else AGENTKIT_STATE_DIR / XDG_STATE_HOME / ~/.local/state. */
  stateDir: string | undefined;
  /** --no-persist: sessions and approvals live in memory only (nothing is written). */
  persist: boolean;
  /** --no-approval-memory: "always" answers are not offered and nothing is remembered. */
  approvalMemory: boolean;
  /** --clear-approval-memory: forget every remembered answer at start-up. */
  clearApprovalMemory: boolean;
}

export interface ServeState {
  /** Where files go (undefined with --no-persist). */
  stateDir: string | undefined;
  sessions: SessionStore;
  approvalMemory: AcpApprovalMemory;
  /** Whether the editor is offered "always allow / always reject". */
  offerAlways: boolean;
}

/** Builds the session store and approval memory; clears remembered answers first when asked. */
export async function serveState(options: ServeStateOptions, env: NodeJS.ProcessEnv, logger: Logger): Promise<ServeState> {
  if (!options.persist) {
    if (options.clearApprovalMemory) logger.warn("--clear-approval-memory has nothing to clear with --no-persist");
    return {
      stateDir: undefined,
      sessions: new InMemorySessionStore(),
      approvalMemory: options.approvalMemory ? new InMemoryApprovalMemory() : new NoopApprovalMemory(),
      offerAlways: options.approvalMemory,
    };
  }
  const stateDir = options.stateDir ?? defaultStateDir(env);
  // Fail at start-up, not at the first session/new, when the directory cannot be made.
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const approvals = new FileApprovalMemoryStore({ stateDir, logger });
  if (options.clearApprovalMemory) {
    await approvals.clear();
    logger.info(`cleared the remembered approvals in ${approvals.dir}`);
  }
  return {
    stateDir,
    sessions: new JsonlSessionStore({ stateDir, logger }),
    approvalMemory: options.approvalMemory ? new DurableApprovalMemory(approvals) : new NoopApprovalMemory(),
    offerAlways: options.approvalMemory,
  };
}

/**
 * `--approve` decides who answers what the session mode asks about: the editor (ask,
 * auto-reads), nobody (auto-all approves, deny refuses).
 */
export function approvalResolverFor(approve: ApproveMode, offerAlways: boolean): AcpApprovalResolver {
  if (approve === "auto-all") return new AutoApproveResolver();
  if (approve === "deny") return new AutoDenyResolver();
  return new ClientPermissionResolver({ offerAlways });
}

/** The mode sessions start in: --mode, else what --approve implies. */
export function initialModeFor(approve: ApproveMode, mode: PermissionMode | undefined): PermissionMode {
  if (mode !== undefined) return mode;
  if (approve === "auto-all") return "auto-edit";
  if (approve === "deny") return "read-only";
  return "ask";
}
