import type { SessionLeases, SessionStore } from "../../store/index.js";
import { InProcessSessionLeases } from "../../store/index.js";
import type { AcpModelCatalog } from "./config-options.js";
import type { AcpModes } from "./modes.js";
import { resolveUnstableFeatures, type AcpUnstableFeatures } from "./unstable.js";

/** The runtime-wide lifecycle settings (one per AcpHeadlessRuntime, shared by its connections). */
export interface LifecycleSettings {
  store: SessionStore | undefined;
  /** One instance per session: taken on open, given back on close (default with a store: in-process). */
  leases: SessionLeases | undefined;
  modes: AcpModes | undefined;
  models: AcpModelCatalog | undefined;
  slashCommands: boolean;
  /** `_meta` of the session's first update after it opens (serve: what its sandbox allows). */
  sessionInfoMeta: ((roots: { cwd: string; additionalDirectories: readonly string[] }) => Record<string, unknown>) | undefined;
  unstable: AcpUnstableFeatures;
  /** Sessions open in any connection, by ACP id: load / resume / delete / archive close them there first. */
  open: OpenSessions;
  /** Per-session-id serialization of load / resume / delete. */
  locks: Map<string, Promise<unknown>>;
}

export interface OpenSession {
  /** The principal whose connection opened it (see ownership.ts). */
  owner?: string;
  close(why: string): Promise<void>;
  /** A prompt is running. */
  busy(): boolean;
}

/** The part of a Map the lifecycle uses (a principal's view is one too: ownership.ts). */
export interface OpenSessions {
  get(id: string): OpenSession | undefined;
  set(id: string, session: OpenSession): unknown;
  delete(id: string): boolean;
}

export function lifecycleSettings(options: Partial<Omit<LifecycleSettings, "open" | "locks">> = {}): LifecycleSettings {
  const leases = options.leases ?? (options.store ? new InProcessSessionLeases() : undefined);
  return {
    store: options.store,
    leases,
    modes: options.modes,
    models: options.models,
    slashCommands: options.slashCommands ?? false,
    sessionInfoMeta: options.sessionInfoMeta,
    unstable: options.unstable ?? resolveUnstableFeatures(true),
    open: new Map(),
    locks: new Map(),
  };
}
