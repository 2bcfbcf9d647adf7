import { randomUUID } from "node:crypto";
import type * as V1 from "@agentclientprotocol/sdk/unstable";
import type * as V2 from "@agentclientprotocol/sdk/experimental/v2/unstable";

/**
 * Shape conversions between ACP v1 (what our agent runtime and client speak) and the v2 draft
 * (`@agentclientprotocol/sdk/experimental/v2/unstable`: the stable v2 surface plus the unstable
 * methods we bridge). Both bridges (agent side: a v2 front for the v1
 * runtime; client side: a v2 back for the v1 client) use these, so each mapping exists once.
 * Content blocks, elicitation forms and permission options have the same shape in both.
 */

/** Where a v1 edit's old/new text travels in a v2 diff, so a v1 client behind our bridge gets it back. */
const DIFF_TEXT_META = "agentkit-acp/diff-text";

type Meta = { [key: string]: unknown };

// ---- initialize ----

export function v2AgentCapabilities(v1: V1.AgentCapabilities | undefined): V2.AgentCapabilities {
  const prompt = v1?.promptCapabilities ?? {};
  const session = v1?.sessionCapabilities ?? {};
  return {
    session: {
      prompt: { ...(prompt.image ? { image: {} } : {}), ...(prompt.audio ? { audio: {} } : {}), ...(prompt.embeddedContext ? { embeddedContext: {} } : {}) },
      mcp: { stdio: {}, ...(v1?.mcpCapabilities?.http ? { http: {} } : {}), ...(v1?.mcpCapabilities?.acp ? { acp: {} } : {}) },
      ...(session.delete ? { delete: {} } : {}),
      ...(session.additionalDirectories ? { additionalDirectories: {} } : {}),
      ...bridgedUnstable(session),
    },
    // v2 has no logout capability (auth/logout comes with \`auth\`); auth/status has its own.
    ...(v1?.auth?.logout || v1?.auth?.status ? { auth: v1.auth.status ? { status: {} } : {} } : {}),
    ...(v1?.providers ? { providers: {} } : {}),
  };
}

/** The unstable session capabilities both bridges carry (same names in v1 and v2). */
function bridgedUnstable(session: { fork?: unknown; title?: unknown; archive?: unknown; status?: unknown }): { fork?: object; title?: object; archive?: object; status?: object } {
  return {
    ...(session.fork ? { fork: {} } : {}),
    ...(session.title ? { title: {} } : {}),
    ...(session.archive ? { archive: {} } : {}),
    ...(session.status ? { status: {} } : {}),
  };
}

export function v1AgentCapabilities(v2: V2.AgentCapabilities | undefined): V1.AgentCapabilities {
  const session = v2?.session ?? {};
  const prompt = session.prompt ?? {};
  return {
    // v2 makes list, resume (with replay, our session/load) and close required.
    loadSession: true,
    promptCapabilities: { image: !!prompt.image, audio: !!prompt.audio, embeddedContext: !!prompt.embeddedContext },
    mcpCapabilities: { http: !!session.mcp?.http, sse: false, ...(session.mcp?.acp ? { acp: true } : {}) },
    sessionCapabilities: {
      list: {},
      resume: {},
      close: {},
      ...(session.delete ? { delete: {} } : {}),
      ...(session.additionalDirectories ? { additionalDirectories: {} } : {}),
      ...bridgedUnstable(session),
    },
    ...(v2?.auth ? { auth: { logout: {}, ...(v2.auth.status ? { status: {} } : {}) } } : {}),
    ...(v2?.providers ? { providers: {} } : {}),
  };
}

export function v2AuthMethods(methods: readonly V1.AuthMethod[] | undefined): V2.AuthMethod[] {
  return (methods ?? []).map((m) => {
    const base = { methodId: m.id, name: m.name, ...(m.description ? { description: m.description } : {}) };
    if ("type" in m && m.type === "terminal") return { type: "terminal", ...base, ...(m.args ? { args: m.args } : {}), ...(m.env ? { env: Object.entries(m.env).map(([name, value]) => ({ name, value })) } : {}) };
    return { type: "agent", ...base };
  });
}

export function v1AuthMethods(methods: readonly V2.AuthMethod[] | undefined): V1.AuthMethod[] {
  return (methods ?? []).map((m) => {
    const description = typeof m.description === "string" ? { description: m.description } : {};
    return { id: m.methodId, name: m.name, ...description };
  });
}

// ---- sessions ----

export function v1McpServers(servers: readonly V2.McpServer[] | undefined): V1.McpServer[] {
  return (servers ?? []).map((s): V1.McpServer => {
    if (s.type === "http") {
      const http = s as V2.McpServerHttp;
      return { type: "http", name: http.name, url: http.url, headers: http.headers ?? [] };
    }
    if (s.type === "stdio") {
      const stdio = s as V2.McpServerStdio;
      return { name: stdio.name, command: stdio.command, args: stdio.args ?? [], env: stdio.env ?? [] };
    }
    // An unknown transport reaches the runtime as is; it refuses it with -32602 naming the type.
    return s as unknown as V1.McpServer;
  });
}

export function v2McpServers(servers: readonly V1.McpServer[] | undefined): V2.McpServer[] {
  return (servers ?? []).map((s): V2.McpServer => {
    if ("type" in s && s.type === "http") return { type: "http", name: s.name, url: s.url, headers: s.headers };
    if (!("type" in s) || s.type === undefined) {
      const stdio = s as V1.McpServerStdio;
      return { type: "stdio", name: stdio.name, command: stdio.command, args: stdio.args, env: stdio.env };
    }
    return s as unknown as V2.McpServer;
  });
}

/** `session/list` entries: the same fields in v1 and v2 (v2 drops unknown ones). */
export function v2SessionInfo(s: V1.SessionInfo): V2.SessionInfo {
  return {
    sessionId: s.sessionId,
    cwd: s.cwd,
    ...(s.additionalDirectories ? { additionalDirectories: s.additionalDirectories } : {}),
    ...(s.title !== undefined ? { title: s.title } : {}),
    ...(s.updatedAt !== undefined ? { updatedAt: s.updatedAt } : {}),
    ...(s.archived !== undefined ? { archived: s.archived } : {}),
  };
}

export function v1SessionInfo(s: V2.SessionInfo): V1.SessionInfo {
  return v2SessionInfo(s as V1.SessionInfo) as V1.SessionInfo;
}

export function v2ConfigOptions(options: readonly V1.SessionConfigOption[] | null | undefined): V2.SessionConfigOption[] | undefined {
  if (!options) return undefined;
  return options.map(({ id, ...rest }) => ({ ...rest, configId: id }) as V2.SessionConfigOption);
}

export function v1ConfigOptions(options: readonly V2.SessionConfigOption[] | null | undefined): V1.SessionConfigOption[] | undefined {
  if (!options) return undefined;
  return options.map(({ configId, ...rest }) => ({ ...rest, id: configId }) as V1.SessionConfigOption);
}

export function v2Commands(commands: readonly V1.AvailableCommand[]): V2.AvailableCommand[] {
  return commands.map((c) => ({ type: "command", name: c.name, description: c.description, ...(c.input ? { input: { type: "text", hint: c.input.hint } } : {}) }));
}

export function v1Commands(commands: readonly V2.AvailableCommand[]): V1.AvailableCommand[] {
  return commands.map((c) => {
    const input = c.input as { type?: unknown; hint?: unknown } | null | undefined;
    return { name: c.name, description: c.description, ...(input?.type === "text" && typeof input.hint === "string" ? { input: { hint: input.hint } } : {}) };
  });
}

// ---- tool calls ----

function v2ToolContent(content: readonly V1.ToolCallContent[] | null | undefined): V2.ToolCallContent[] | undefined {
  if (!content) return undefined;
  return content.map((c): V2.ToolCallContent => {
    if (c.type === "diff") {
      const operation = c.oldText === null || c.oldText === undefined ? "add" : "modify";
      return { type: "diff", changes: [{ operation, path: c.path }], _meta: { [DIFF_TEXT_META]: { oldText: c.oldText ?? null, newText: c.newText } } } as V2.ToolCallContent;
    }
    return c as V2.ToolCallContent;
  });
}

function v1ToolContent(content: readonly V2.ToolCallContent[] | null | undefined): V1.ToolCallContent[] | undefined {
  if (!content) return undefined;
  const out: V1.ToolCallContent[] = [];
  for (const c of content) {
    if (c.type === "content" || c.type === "terminal") out.push(c as V1.ToolCallContent);
    else if (c.type === "diff") {
      const diff = c as V2.Diff;
      const text = (diff._meta as Meta | null | undefined)?.[DIFF_TEXT_META] as { oldText?: string | null; newText?: string } | undefined;
      const first = diff.changes[0] as { path?: unknown } | undefined;
      if (text && typeof text.newText === "string" && typeof first?.path === "string") out.push({ type: "diff", path: first.path, oldText: text.oldText ?? null, newText: text.newText });
      // A v2 diff without the texts: say which files changed how (a v1 diff needs the new text).
      else out.push({ type: "content", content: { type: "text", text: diff.patch?.text ?? diff.changes.map((ch) => `${String(ch.operation)} ${String((ch as { path?: unknown }).path ?? "")}`).join("\n") } });
    }
  }
  return out;
}

function v2ToolCall(update: V1.ToolCall | V1.ToolCallUpdate): V2.ToolCallUpdate {
  const { content, ...rest } = update;
  const mapped = v2ToolContent(content);
  return { ...rest, ...(mapped ? { content: mapped } : {}) } as V2.ToolCallUpdate;
}

/** v1 `session/request_permission` → v2 (title and a tool-call subject). */
export function v2PermissionRequest(request: V1.RequestPermissionRequest): V2.RequestPermissionRequest {
  const toolCall = v2ToolCall(request.toolCall);
  return { sessionId: request.sessionId, title: request.toolCall.title ?? "Allow this tool call?", subject: { type: "tool_call", toolCall }, options: request.options };
}

/** v2 `session/request_permission` → v1 (a v1 request is always about a tool call). */
export function v1PermissionRequest(request: V2.RequestPermissionRequest): V1.RequestPermissionRequest {
  const subject = request.subject as (V2.RequestPermissionSubject & { [key: string]: unknown }) | null | undefined;
  let toolCall: V1.ToolCallUpdate = { toolCallId: `permission-${randomUUID()}`, title: request.title };
  if (subject?.type === "tool_call") {
    const call = (subject as V2.ToolCallPermissionSubject).toolCall;
    const content = v1ToolContent(call.content);
    const { capabilities: _capabilities, ...rest } = call;
    toolCall = { ...(rest as V1.ToolCallUpdate), ...(content ? { content } : {}), title: call.title ?? request.title };
  } else if (subject?.type === "command") {
    const command = subject as V2.CommandPermissionSubject;
    toolCall = { toolCallId: command.toolCallId ?? toolCall.toolCallId, title: request.title, kind: "execute", rawInput: { command: command.command, cwd: command.cwd } };
  }
  return { sessionId: request.sessionId, toolCall, options: request.options as V1.PermissionOption[] };
}

// ---- session/update ----

type Stream = "user" | "agent" | "thought";

/**
 * v1 → v2 updates for one session. v2 requires a `messageId` on every chunk; a v1 chunk without
 * one continues the message of the previous chunk of its kind, or starts a new message.
 */
export class V1ToV2Updates {
  /** The message the last chunk belonged to (two fields, not an object: this runs for every chunk). */
  #currentKind: Stream | undefined;
  #currentId = "";
  readonly #planId = `plan-${randomUUID()}`;

  #messageId(kind: Stream, given: string | null | undefined): string {
    if (given) {
      this.#currentKind = kind;
      this.#currentId = given;
    } else if (this.#currentKind !== kind) {
      this.#currentKind = kind;
      this.#currentId = randomUUID();
    }
    return this.#currentId;
  }

  /**
   * The fast path, without the SDK's validation (which tries the update union variant by
   * variant, twice): a v1 update exactly as our runtime sends it, of the kinds a turn streams
   * by the thousand (text chunks) or every session sends (its commands, its title); see
   * `isPlainUpdate`. The result is byte for byte what `convert` gives for the validated update
   * (the SDK's parse rebuilds a text block as `{text, type}`; test/acp/v2/fast-updates.test.ts
   * compares the two for every update kind). Undefined for anything else: the general path.
   */
  convertPlain(update: unknown): V2.SessionUpdate | undefined {
    if (isPlainTextChunk(update)) {
      const kind = update.sessionUpdate === "agent_message_chunk" ? "agent" : update.sessionUpdate === "agent_thought_chunk" ? "thought" : "user";
      return { sessionUpdate: update.sessionUpdate, messageId: this.#messageId(kind, update.messageId), content: { text: update.content.text, type: "text" } } as V2.SessionUpdate;
    }
    // `convert` rebuilds these from their fields, which hold what the SDK's parse would give.
    return isPlainSessionUpdate(update) ? this.convert(update) : undefined;
  }

  /** The v2 update, or undefined for what v2 has no place for (current_mode_update …); `_meta` goes along. */
  convert(update: V1.SessionUpdate): V2.SessionUpdate | undefined {
    const converted = this.#convert(update);
    return converted === undefined || update._meta == null ? converted : ({ ...converted, _meta: update._meta } as V2.SessionUpdate);
  }

  #convert(update: V1.SessionUpdate): V2.SessionUpdate | undefined {
    if (update.sessionUpdate !== "user_message_chunk" && update.sessionUpdate !== "agent_message_chunk" && update.sessionUpdate !== "agent_thought_chunk") this.#currentKind = undefined;
    switch (update.sessionUpdate) {
      case "user_message_chunk":
        return { sessionUpdate: "user_message_chunk", messageId: this.#messageId("user", update.messageId), content: update.content as V2.ContentBlock };
      case "agent_message_chunk":
        return { sessionUpdate: "agent_message_chunk", messageId: this.#messageId("agent", update.messageId), content: update.content as V2.ContentBlock };
      case "agent_thought_chunk":
        return { sessionUpdate: "agent_thought_chunk", messageId: this.#messageId("thought", update.messageId), content: update.content as V2.ContentBlock };
      case "tool_call":
      case "tool_call_update": {
        const { sessionUpdate: _kind, ...call } = update;
        return { sessionUpdate: "tool_call_update", ...v2ToolCall(call) };
      }
      case "plan":
        return { sessionUpdate: "plan_update", plan: { type: "items", planId: this.#planId, entries: update.entries } };
      case "available_commands_update":
        return { sessionUpdate: "available_commands_update", availableCommands: v2Commands(update.availableCommands) };
      case "config_option_update":
        return { sessionUpdate: "config_option_update", configOptions: v2ConfigOptions(update.configOptions) ?? [] };
      case "session_info_update":
        return { sessionUpdate: "session_info_update", ...(update.title !== undefined ? { title: update.title } : {}), ...(update.updatedAt !== undefined ? { updatedAt: update.updatedAt } : {}) };
      case "usage_update":
        return { sessionUpdate: "usage_update", used: update.used, size: update.size, ...(update.cost ? { cost: update.cost } : {}) };
      default:
        return undefined;
    }
  }
}

/** A v1 text chunk exactly as the runtime streams it: `{sessionUpdate, content: {type: "text", text}, messageId?}`, nothing else. */
interface PlainTextChunk {
  sessionUpdate: "user_message_chunk" | "agent_message_chunk" | "agent_thought_chunk";
  content: { type: "text"; text: string };
  messageId?: string | null;
}

/** What `V1ToV2Updates.convertPlain` takes: a plain text chunk, or a plain commands or session info update. */
export function isPlainUpdate(update: unknown): boolean {
  return isPlainTextChunk(update) || isPlainSessionUpdate(update);
}

export function isPlainTextChunk(update: unknown): update is PlainTextChunk {
  if (typeof update !== "object" || update === null) return false;
  const { sessionUpdate, content, messageId } = update as { sessionUpdate?: unknown; content?: unknown; messageId?: unknown };
  if (sessionUpdate !== "agent_message_chunk" && sessionUpdate !== "agent_thought_chunk" && sessionUpdate !== "user_message_chunk") return false;
  if ((messageId != null && typeof messageId !== "string") || typeof content !== "object" || content === null) return false;
  const { type, text } = content as { type?: unknown; text?: unknown };
  if (type !== "text" || typeof text !== "string" || Object.getPrototypeOf(update) !== Object.prototype || Object.getPrototypeOf(content) !== Object.prototype) return false;
  // No other keys (compared as literals: this runs for every chunk a turn streams).
  for (const key in update) if (key !== "sessionUpdate" && key !== "content" && key !== "messageId") return false;
  for (const key in content) if (key !== "type" && key !== "text") return false;
  return true;
}

/**
 * An `available_commands_update` or `session_info_update` whose every field has the type the
 * SDK's schema asks (a wrong one it would drop or skip, not reject: then the general path
 * gives what it gives), in plain objects and arrays with no other keys.
 */
function isPlainSessionUpdate(update: unknown): update is V1.SessionUpdate {
  if (typeof update !== "object" || update === null) return false;
  const u = update as { sessionUpdate?: unknown; availableCommands?: unknown; title?: unknown; updatedAt?: unknown; _meta?: unknown };
  if (!optionalRecord(u._meta)) return false;
  if (u.sessionUpdate === "session_info_update") return optionalString(u.title) && optionalString(u.updatedAt) && plainWith(update, INFO_KEYS);
  if (u.sessionUpdate !== "available_commands_update" || !Array.isArray(u.availableCommands) || Object.getPrototypeOf(u.availableCommands) !== Array.prototype) return false;
  return plainWith(update, COMMANDS_KEYS) && (u.availableCommands as unknown[]).every(isPlainCommand);
}

function isPlainCommand(command: unknown): boolean {
  if (typeof command !== "object" || command === null) return false;
  const { name, description, input, _meta } = command as { name?: unknown; description?: unknown; input?: unknown; _meta?: unknown };
  if (typeof name !== "string" || typeof description !== "string" || !optionalRecord(_meta) || !plainWith(command, COMMAND_KEYS)) return false;
  if (input == null) return true;
  if (typeof input !== "object") return false;
  const { hint, _meta: inputMeta } = input as { hint?: unknown; _meta?: unknown };
  return typeof hint === "string" && optionalRecord(inputMeta) && plainWith(input, INPUT_KEYS);
}

/** Absent, null or a string (`z.string().nullish()`). */
function optionalString(value: unknown): boolean {
  return value == null || typeof value === "string";
}

/** Absent, null or a plain object (`_meta`: `z.record(z.string(), z.unknown()).nullish()`, which keeps its keys in order). */
function optionalRecord(value: unknown): boolean {
  return value == null || (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype);
}

const INFO_KEYS = ["sessionUpdate", "title", "updatedAt", "_meta"];
const COMMANDS_KEYS = ["sessionUpdate", "availableCommands", "_meta"];
const COMMAND_KEYS = ["name", "description", "input", "_meta"];
const INPUT_KEYS = ["hint", "_meta"];

/** A plain object (no prototype but Object's) whose keys are all in `keys`. */
function plainWith(value: object, keys: readonly string[]): boolean {
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const key in value) if (!keys.includes(key)) return false;
  return true;
}

/**
 * v2 → v1 updates for one session. The first `tool_call_update` of an id becomes a v1
 * `tool_call`; `tool_call_content_chunk`s are added to the call's content (v1 replaces the list).
 */
export class V2ToV1Updates {
  readonly #toolContent = new Map<string, V1.ToolCallContent[]>();

  /** The v1 updates (whole messages become one chunk per block; `_meta` goes on each); state_update is the caller's. */
  convert(update: V2.SessionUpdate): V1.SessionUpdate[] {
    const converted = this.#convert(update);
    const meta = (update as { _meta?: Record<string, unknown> | null })._meta;
    return meta == null ? converted : converted.map((one) => ({ ...one, _meta: meta }) as V1.SessionUpdate);
  }

  #convert(update: V2.SessionUpdate): V1.SessionUpdate[] {
    switch (update.sessionUpdate) {
      case "user_message_chunk":
      case "agent_message_chunk":
      case "agent_thought_chunk": {
        const chunk = update as V2.ContentChunk & { sessionUpdate: typeof update.sessionUpdate };
        return [{ sessionUpdate: chunk.sessionUpdate, messageId: chunk.messageId, content: chunk.content as V1.ContentBlock }];
      }
      case "user_message":
      case "agent_message":
      case "agent_thought": {
        const message = update as V2.AgentMessage;
        const kind = update.sessionUpdate === "user_message" ? "user_message_chunk" : update.sessionUpdate === "agent_message" ? "agent_message_chunk" : "agent_thought_chunk";
        return (message.content ?? []).map((content) => ({ sessionUpdate: kind, messageId: message.messageId, content: content as V1.ContentBlock }));
      }
      case "tool_call_update": {
        const { sessionUpdate: _kind, capabilities: _capabilities, content, ...call } = update as V2.ToolCallUpdate & { sessionUpdate: string };
        const mapped = v1ToolContent(content);
        const known = this.#toolContent.has(call.toolCallId);
        if (mapped) this.#toolContent.set(call.toolCallId, mapped);
        else if (!known) this.#toolContent.set(call.toolCallId, []);
        const fields = { ...(call as V1.ToolCallUpdate), ...(mapped ? { content: mapped } : {}) };
        if (known) return [{ sessionUpdate: "tool_call_update", ...fields }];
        return [{ sessionUpdate: "tool_call", ...fields, title: call.title ?? call.name ?? call.toolCallId } as V1.SessionUpdate];
      }
      case "tool_call_content_chunk": {
        const chunk = update as V2.ToolCallContentChunk;
        const list = [...(this.#toolContent.get(chunk.toolCallId) ?? []), ...(v1ToolContent([chunk.content]) ?? [])];
        this.#toolContent.set(chunk.toolCallId, list);
        return [{ sessionUpdate: "tool_call_update", toolCallId: chunk.toolCallId, content: list }];
      }
      case "plan_update": {
        const plan = (update as V2.PlanUpdate).plan;
        return plan.type === "items" ? [{ sessionUpdate: "plan", entries: (plan as V2.PlanItems).entries as V1.PlanEntry[] }] : [];
      }
      case "available_commands_update":
        return [{ sessionUpdate: "available_commands_update", availableCommands: v1Commands((update as V2.AvailableCommandsUpdate).availableCommands) }];
      case "config_option_update":
        return [{ sessionUpdate: "config_option_update", configOptions: v1ConfigOptions((update as V2.ConfigOptionUpdate).configOptions) ?? [] }];
      case "session_info_update": {
        const info = update as V2.SessionInfoUpdate;
        return [{ sessionUpdate: "session_info_update", ...(info.title !== undefined ? { title: info.title } : {}), ...(info.updatedAt !== undefined ? { updatedAt: info.updatedAt } : {}) }];
      }
      case "usage_update": {
        const usage = update as V2.UsageUpdate;
        return [{ sessionUpdate: "usage_update", used: usage.used, size: usage.size, ...(usage.cost ? { cost: usage.cost } : {}) }];
      }
      default:
        return [];
    }
  }
}

/** A v2 `state_update`: running, or idle with the turn's stop reason (and the error of an `error` stop). */
export function v2State(state: "running" | "idle" | "requires_action", stopReason?: string, error?: { code: number; message: string; data?: unknown }): V2.SessionUpdate {
  return { sessionUpdate: "state_update", state, ...(stopReason !== undefined ? { stopReason } : {}), ...(error ? { error } : {}) } as V2.SessionUpdate;
}

/** v2 stop reasons that v1 knows; `error` is the caller's (a JSON-RPC error in v1). */
export function v1StopReason(reason: string | null | undefined): V1.StopReason {
  switch (reason) {
    case "max_tokens":
    case "max_turn_requests":
    case "refusal":
    case "cancelled":
      return reason;
    default:
      return "end_turn";
  }
}
