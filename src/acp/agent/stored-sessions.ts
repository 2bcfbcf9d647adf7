import type {
  ForkSessionRequest,
  ForkSessionResponse,
  ListSessionsResponse,
  ResumeSessionRequest,
  SessionConfigOption,
  SessionModeState,
  SessionStatus,
} from "@agentclientprotocol/sdk/unstable";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { toRequestError } from "../errors.js";
import type { GroupHandlers } from "../methods.js";
import type { Logger } from "../../core/index.js";
import { newId } from "../../core/index.js";
import type { SessionStore } from "../../store/index.js";
import { sessionNotFound } from "./integration.js";
import type { LifecycleSettings } from "./lifecycle-settings.js";
import { takeSessionLease } from "./session-leases.js";
import { normalizeTitle } from "./unstable.js";
import { checkPathField } from "./path-params.js";

/** What the stored-session operations need from the connection's lifecycle. */
export interface StoredSessionsHost {
  /** -32602 unless `path` is an absolute, existing directory. */
  checkDirectory(path: string, field: string): string;
  /** Opens a stored session like session/resume (fork opens its copy this way). */
  resume(params: ResumeSessionRequest, signal: AbortSignal): Promise<{ modes?: SessionModeState; configOptions?: SessionConfigOption[] }>;
  /** Serializes operations on one session id (shared with load / resume). */
  locked<T>(id: string, run: () => Promise<T>): Promise<T>;
  /** A stored title changed: tell the session if it is open on this connection. */
  titleChanged(id: string, title: string): Promise<void>;
}

/**
 * The operations on sessions at rest in the store: list, delete, fork, set title,
 * archive / unarchive, status. Opening, prompting and closing stay with `ConnectionLifecycle`.
 */
export class StoredSessions {
  readonly #settings: LifecycleSettings;
  readonly #host: StoredSessionsHost;
  readonly #logger: Logger;

  constructor(settings: LifecycleSettings, host: StoredSessionsHost, logger: Logger) {
    this.#settings = settings;
    this.#host = host;
    this.#logger = logger;
  }

  /** The handlers for what is configured; what is not stays -32601 (and is not advertised). */
  handlers(): GroupHandlers<"stored"> {
    const { store, unstable } = this.#settings;
    const handlers: GroupHandlers<"stored"> = {};
    if (store) {
      handlers[acp.methods.agent.session.list] = async ({ params }) => {
        if (params.cwd != null) checkPathField(params.cwd, "cwd");
        return this.#list(store, params.cwd ?? undefined, params.cursor ?? undefined, params.archived ?? undefined);
      };
      handlers[acp.methods.agent.session.delete] = ({ params }) => this.#delete(store, params.sessionId);
      if (unstable.fork) handlers[acp.methods.agent.session.fork] = ({ params, signal }) => this.#fork(store, params, signal);
      if (unstable.title) handlers[acp.methods.agent.session.setTitle] = ({ params }) => this.#setTitle(store, params.sessionId, params.title);
      if (unstable.archive) {
        handlers[acp.methods.agent.session.archive] = ({ params }) => this.#archive(store, params.sessionId, true);
        handlers[acp.methods.agent.session.unarchive] = ({ params }) => this.#archive(store, params.sessionId, false);
      }
    }
    if (unstable.status) handlers[acp.methods.agent.session.status] = ({ params }) => this.#status(params.sessionId);
    return handlers;
  }

  async #list(store: SessionStore, cwd: string | undefined, cursor: string | undefined, archived: string | undefined): Promise<ListSessionsResponse> {
    if (archived !== undefined && !(this.#settings.unstable.archive && (archived === "exclude" || archived === "include" || archived === "only"))) {
      throw acp.RequestError.invalidParams({ archived }, `archived filter "${archived}" is not supported${this.#settings.unstable.archive ? " (use exclude, include or only)" : " (this agent does not archive sessions)"}`);
    }
    const filter = archived === "include" || archived === "only" ? { archived: archived as "include" | "only" } : {};
    const page = await store.list({ ...(cwd !== undefined ? { cwd } : {}), ...(cursor !== undefined ? { cursor } : {}), ...filter }).catch(storeError);
    return {
      sessions: page.sessions.map((s) => ({
        sessionId: s.sessionId,
        cwd: s.cwd,
        additionalDirectories: s.additionalDirectories,
        ...(s.title !== undefined ? { title: s.title } : {}),
        updatedAt: s.updatedAt,
        ...(s.archived === true ? { archived: true } : {}),
      })),
      ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}),
    };
  }

  /** session/fork: a new stored session with the source's transcript and mode/config, opened like resume. */
  async #fork(store: SessionStore, params: ForkSessionRequest, signal: AbortSignal): Promise<ForkSessionResponse> {
    const cwd = this.#host.checkDirectory(params.cwd, "cwd");
    const additionalDirectories = (params.additionalDirectories ?? []).map((d, i) => this.#host.checkDirectory(d, `additionalDirectories[${i}]`));
    // The stored transcript holds every committed item, also of a source open and running now.
    const source = await store.load(params.sessionId).catch(storeError);
    if (!source) throw sessionNotFound(params.sessionId);
    const id = newId("sess");
    // A fork is told apart from its source in a session list.
    const title = source.header.title === undefined ? undefined : normalizeTitle(`Fork of ${source.header.title}`);
    await store.create({ sessionId: id, cwd, additionalDirectories, metadata: source.header.metadata, forkedFrom: params.sessionId, ...(title !== undefined ? { title } : {}) }).catch(storeError);
    try {
      // All at once: stores keep the call order and write a burst together (one fdatasync for a JSONL file).
      await Promise.all(source.items.map((item) => store.append(id, item)));
      const state = await this.#host.resume({ sessionId: id, cwd, additionalDirectories, mcpServers: params.mcpServers ?? [], _meta: params._meta ?? null }, signal);
      return { sessionId: id, ...state };
    } catch (error) {
      await store.delete(id).catch(() => false);
      throw error;
    }
  }

  /** session/set_title: stored first, then told to this connection's open session. */
  async #setTitle(store: SessionStore, id: string, requested: string): Promise<{ title: string }> {
    const title = normalizeTitle(requested);
    if (title === undefined) throw acp.RequestError.invalidParams({ title: requested }, "the title is empty; send a non-empty title");
    return this.#host.locked(id, async () => {
      if (!(await store.exists(id).catch(storeError))) throw sessionNotFound(id);
      await store.updateHeader(id, { title }).catch(storeError);
      await this.#host.titleChanged(id, title);
      return { title };
    });
  }

  /** session/archive closes an open session first (as session/close would); both are idempotent. */
  async #archive(store: SessionStore, id: string, archived: boolean): Promise<Record<string, never>> {
    return this.#host.locked(id, async () => {
      if (!(await store.exists(id).catch(storeError))) throw sessionNotFound(id);
      if (archived) await this.#settings.open.get(id)?.close("session/archive");
      // Archiving closes the session, so (as for delete) never one another instance is running.
      const lease = archived && this.#settings.leases ? await takeSessionLease(this.#settings.leases, id, this.#logger) : undefined;
      try {
        const loaded = await store.load(id).catch(storeError);
        if (loaded && (loaded.header.archived === true) !== archived) await store.updateHeader(id, { archived }).catch(storeError);
      } finally {
        await lease?.release();
      }
      return {};
    });
  }

  /** session/status: no side effects; `_meta` says whether a prompt is running. */
  async #status(id: string): Promise<{ status: SessionStatus; _meta: Record<string, unknown> }> {
    const open = this.#settings.open.get(id);
    if (open) return { status: "open", _meta: { running: open.busy() } };
    const store = this.#settings.store;
    if (store && (await store.exists(id).catch(storeError))) return { status: "saved", _meta: { running: false } };
    throw sessionNotFound(id);
  }

  async #delete(store: SessionStore, id: string): Promise<void> {
    await this.#host.locked(id, async () => {
      // Another principal's session (the store is this principal's view) is unknown: nothing closed.
      if (!(await store.exists(id).catch(storeError))) throw sessionNotFound(id);
      await this.#settings.open.get(id)?.close("session/delete");
      // Never delete a session another instance is running.
      const lease = this.#settings.leases && (await takeSessionLease(this.#settings.leases, id, this.#logger));
      try {
        if (!(await store.delete(id).catch(storeError))) throw sessionNotFound(id);
      } finally {
        await lease?.release();
      }
    });
  }
}

/** Store failures as JSON-RPC errors: bad input → -32602, anything else → -32603 with the reason. */
export function storeError(error: unknown): never {
  throw toRequestError(error, "session store");
}
