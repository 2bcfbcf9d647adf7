import { readFileSync } from "node:fs";
import type * as acp from "@agentclientprotocol/sdk/unstable";
import { raceAbort, type RaceAbortOutcome } from "../../core/cancellation.js";
import { ConfigError } from "../../core/errors.js";
import { PermissionRequiredError } from "./errors.js";
import {
  extractCommand,
  extractPaths,
  parseRules,
  ruleMatches,
  type PermissionAction,
  type ClientPermissionRule,
  type PermissionSubject,
} from "./permission-rules.js";
import { answerToChoice, choiceToOutcome, type PermissionChoice } from "./permission-options.js";

export type { PermissionAction, ClientPermissionRule, PermissionSubject } from "./permission-rules.js";
export type { PermissionChoice } from "./permission-options.js";

/** A question put to the async handler (a dialog, a remote policy service …). */
export interface PermissionQuestion extends PermissionSubject {
  /** The agent's options (empty for host requests, which are yes/no). */
  options: acp.PermissionOption[];
  /** Why the policy asks (the matching rule, or "no rule matched"). */
  reason: string;
}

/**
 * What a handler may answer: a choice by option kind (mapped to an option the agent
 * offered), `{ optionId }` (checked against the offered ids; an unknown id becomes a
 * denial), or `cancel` (cancel the whole turn).
 */
export type PermissionAnswer = PermissionChoice | "allow" | "deny" | "cancel" | { optionId: string };

/**
 * The answer type is widened by `string & {}` (editors still offer the literals): TypeScript widens
 * the literal of an expression-bodied async arrow, so `async () => "allow_once"` would otherwise
 * need `as const`. A string that is no answer is a denial, with the reason.
 */
export type PermissionHandler = (question: PermissionQuestion, signal: AbortSignal) => PermissionAnswer | (string & {}) | Promise<PermissionAnswer | (string & {})>;

/** Client-side memory of "always" answers, keyed by kind and target (never by call id). */
export interface PermissionMemory {
  get(key: string): "allow" | "deny" | undefined;
  set(key: string, verdict: "allow" | "deny"): void;
}

function inMemoryPermissionMemory(): PermissionMemory {
  const map = new Map<string, "allow" | "deny">();
  return { get: (k) => map.get(k), set: (k, v) => void map.set(k, v) };
}

/**
 * Options of `ClientPermissionPolicy`: rules (first match decides), the default action, who answers `ask`, what
 * happens when nobody can, and whether "always" answers are remembered.
 */
export interface ClientPermissionPolicyOptions {
  rules?: ClientPermissionRule[];
  /** When no rule matches (default `deny`). */
  default?: PermissionAction;
  /** Answers `ask`; without it `fallback` applies. */
  ask?: PermissionHandler;
  /** Non-interactive answer to `ask`: `deny`, or `fail` (cancel the turn, prompt rejects). */
  fallback?: "deny" | "fail";
  /** Remember "always" answers on the client (true = a fresh in-memory store). */
  remember?: boolean | PermissionMemory;
}

/** The outcome for one `session/request_permission`. */
export interface PermissionResolution {
  outcome: acp.RequestPermissionOutcome;
  decision: "allow" | "deny" | "cancelled";
  /** Kind of the option that was selected. */
  optionKind?: acp.PermissionOptionKind;
  source: "rule" | "memory" | "handler" | "default" | "fallback" | "cancel";
  reason: string;
  /** A denial that could not be expressed (no reject option offered): answered `cancelled`. */
  noRejectOption?: boolean;
  /** The turn must be cancelled (no reject option, handler said cancel, or fallback `fail`). */
  cancelTurn?: boolean;
  failure?: PermissionRequiredError;
}

/** The host-service calls a policy gates: file reads, file writes, terminal commands. */
export type HostRequestKind = "fs_read" | "fs_write" | "terminal";

/** A host-service call to gate; structurally compatible with the hosts' `HostAccessRequest`. */
export interface HostPermissionRequest {
  kind: HostRequestKind;
  sessionId?: string;
  /** Absolute path for fs requests (as the agent sent it). */
  path?: string;
  /** The canonical path the host resolved; preferred over `path` when given. */
  resolvedPath?: string;
  /** The command (with `args`) for terminal requests. */
  command?: string;
  args?: string[];
  /** Session roots (cwd first), for `insideRoots` and relative globs. */
  roots?: string[];
}

/** The verdict on a host-service call (`checkHostRequest`), with the reason and what decided it. */
export interface HostPermissionResult {
  allowed: boolean;
  reason: string;
  source: PermissionResolution["source"];
}

const HOST_KIND: Record<HostRequestKind, acp.ToolKind> = { fs_read: "read", fs_write: "edit", terminal: "execute" };

/**
 * The ready-made policies of `ClientPermissionPolicy.preset` (the CLI's `--permissions`): refuse all, ask, allow
 * reads inside the workspace and ask for the rest, allow all.
 */
export type PermissionPreset = "deny" | "ask" | "allow-reads" | "allow-all";

/**
 * The client's permission policy. **Denies everything by default.** Used for the agent's
 * `session/request_permission` and, through `checkHostRequest`, for host-service calls.
 */
export class ClientPermissionPolicy {
  readonly #rules: ClientPermissionRule[];
  readonly #default: PermissionAction;
  readonly #ask: PermissionHandler | undefined;
  readonly #fallback: "deny" | "fail";
  readonly #memory: PermissionMemory | undefined;
  readonly #options: ClientPermissionPolicyOptions;

  constructor(options: ClientPermissionPolicyOptions = {}) {
    this.#options = options;
    this.#rules = [...(options.rules ?? [])];
    this.#default = options.default ?? "deny";
    this.#ask = options.ask;
    this.#fallback = options.fallback ?? "deny";
    this.#memory = options.remember === true ? inMemoryPermissionMemory() : options.remember || undefined;
  }

  static denyAll(): ClientPermissionPolicy {
    return new ClientPermissionPolicy({ default: "deny" });
  }

  static allowAll(): ClientPermissionPolicy {
    return new ClientPermissionPolicy({ default: "allow" });
  }

  /** Every question goes to `handler` (unless an earlier "always" answer is remembered). */
  static custom(handler: PermissionHandler, options: Omit<ClientPermissionPolicyOptions, "ask"> = {}): ClientPermissionPolicy {
    return new ClientPermissionPolicy({ default: "ask", ...options, ask: handler });
  }

  /** The CLI's `--permissions` presets. `ask` and `allow-reads` ask through `ask` when given. */
  static preset(name: PermissionPreset, ask?: PermissionHandler): ClientPermissionPolicy {
    switch (name) {
      case "deny":
        return ClientPermissionPolicy.denyAll();
      case "allow-all":
        return ClientPermissionPolicy.allowAll();
      case "ask":
        return new ClientPermissionPolicy({ default: "ask", ask, fallback: "deny", remember: true });
      case "allow-reads":
        return new ClientPermissionPolicy({
          rules: [{ name: "reads inside the workspace", kind: ["read", "search", "think"], insideRoots: true, action: "allow" }],
          default: "ask",
          ask,
          fallback: "deny",
          remember: true,
        });
    }
  }

  /** A policy from a JSON object: `{ rules, default, fallback, remember }`. */
  static fromJson(value: unknown, ask?: PermissionHandler): ClientPermissionPolicy {
    if (!value || typeof value !== "object") throw new ConfigError("a permissions file must hold a JSON object");
    const v = value as Record<string, unknown>;
    const action = (x: unknown): x is PermissionAction => x === "allow" || x === "deny" || x === "ask";
    if (v.default !== undefined && !action(v.default)) throw new ConfigError("permissions: `default` must be allow, deny or ask");
    if (v.fallback !== undefined && v.fallback !== "deny" && v.fallback !== "fail") throw new ConfigError("permissions: `fallback` must be deny or fail");
    let rules: ClientPermissionRule[];
    try {
      rules = v.rules === undefined ? [] : parseRules(v.rules);
    } catch (e) {
      throw new ConfigError(`permissions: ${e instanceof Error ? e.message : String(e)}`);
    }
    return new ClientPermissionPolicy({
      rules,
      default: v.default as PermissionAction | undefined,
      fallback: v.fallback as "deny" | "fail" | undefined,
      remember: v.remember === true,
      ask,
    });
  }

  static fromFile(path: string, ask?: PermissionHandler): ClientPermissionPolicy {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(path, "utf8"));
    } catch (e) {
      throw new ConfigError(`cannot read permissions file ${path}: ${e instanceof Error ? e.message : String(e)}`);
    }
    return ClientPermissionPolicy.fromJson(parsed, ask);
  }

  /** The same policy with another ask handler (e.g. the CLI's terminal dialog). */
  withAsk(ask: PermissionHandler | undefined): ClientPermissionPolicy {
    return new ClientPermissionPolicy({ ...this.#options, ask, remember: this.#memory ?? false });
  }

  get interactive(): boolean {
    return this.#ask !== undefined;
  }

  /** Decides one `session/request_permission`. `known` is the client's view of the tool call so far. */
  async resolveToolPermission(
    request: acp.RequestPermissionRequest,
    context: { roots: string[]; known?: acp.ToolCallUpdate; signal: AbortSignal },
  ): Promise<PermissionResolution> {
    const call = { ...(context.known ?? {}), ...stripNullish(request.toolCall) };
    const rawInput = call.rawInput;
    const subject: PermissionSubject = {
      source: "tool_call",
      sessionId: request.sessionId,
      toolCallId: request.toolCall.toolCallId,
      title: call.title ?? "(untitled tool call)",
      kind: call.kind ?? "other",
      rawInput,
      paths: extractPaths(call.locations, rawInput, context.roots[0]),
      command: extractCommand(rawInput),
      roots: context.roots,
    };
    const answer = await this.#decide(subject, request.options, context.signal);
    if (answer.cancelled) return { outcome: { outcome: "cancelled" }, decision: "cancelled", source: "cancel", reason: "the turn was cancelled" };
    if (answer.failure) {
      return { outcome: { outcome: "cancelled" }, decision: "cancelled", source: "fallback", reason: answer.reason, cancelTurn: true, failure: answer.failure };
    }
    if (answer.choice === "cancel") return { outcome: { outcome: "cancelled" }, decision: "cancelled", source: answer.source, reason: answer.reason, cancelTurn: true };
    const mapped = answer.option ? { option: answer.option, note: undefined } : choiceToOutcome(answer.choice, request.options);
    if (mapped.option) {
      const decision = mapped.option.kind.startsWith("allow") ? "allow" : "deny";
      this.#remember(subject, mapped.option.kind);
      return { outcome: { outcome: "selected", optionId: mapped.option.optionId }, decision, optionKind: mapped.option.kind, source: answer.source, reason: mapped.note ?? answer.reason };
    }
    // Nothing offered can express a denial: ACP's only other answer is `cancelled` (turn ends).
    return {
      outcome: { outcome: "cancelled" },
      decision: "deny",
      source: answer.source,
      reason: `${answer.reason}; the agent offered no reject option, so the request is answered "cancelled" and the turn is cancelled`,
      noRejectOption: true,
      cancelTurn: true,
    };
  }

  /** Gates a host-service call (fs read/write, terminal) with the same rules, memory and handler. */
  async checkHostRequest(request: HostPermissionRequest, signal: AbortSignal = new AbortController().signal): Promise<HostPermissionResult> {
    const roots = request.roots ?? [];
    const kind = HOST_KIND[request.kind];
    const path = request.resolvedPath ?? request.path;
    const command = request.command === undefined ? undefined : [request.command, ...(request.args ?? [])].join(" ");
    const verb = request.kind === "fs_read" ? "Read" : request.kind === "fs_write" ? "Write" : "Run";
    const subject: PermissionSubject = {
      source: "host",
      sessionId: request.sessionId,
      toolCallId: undefined,
      title: `${verb} ${request.kind === "terminal" ? (command ?? "") : (path ?? "")}`.trim(),
      kind,
      rawInput: request,
      paths: path === undefined ? [] : extractPaths(undefined, { path }, roots[0]),
      command,
      roots,
    };
    const answer = await this.#decide(subject, [], signal);
    if (answer.cancelled) return { allowed: false, reason: "cancelled", source: "cancel" };
    if (answer.failure) return { allowed: false, reason: answer.reason, source: "fallback" };
    const choice = typeof answer.choice === "string" ? answer.choice : "reject_once";
    const allowed = choice === "allow_once" || choice === "allow_always";
    if (choice === "allow_always" || choice === "reject_always") this.#remember(subject, choice);
    return { allowed, reason: answer.reason, source: answer.source };
  }

  /** `checkHostRequest` as the host services' `authorize` option: `createFileSystemHost({ authorize: policy.hostAuthorizer() })`. */
  hostAuthorizer(): (request: HostPermissionRequest) => Promise<"allow" | "deny"> {
    return async (request) => ((await this.checkHostRequest(request)).allowed ? "allow" : "deny");
  }

  async #decide(
    subject: PermissionSubject,
    options: acp.PermissionOption[],
    signal: AbortSignal,
  ): Promise<Decided> {
    const remembered = this.#memory?.get(memoryKey(subject));
    if (remembered) return { choice: remembered === "allow" ? "allow_always" : "reject_always", source: "memory", reason: `remembered "always ${remembered}"` };
    const rule = this.#rules.find((r) => ruleMatches(r, subject));
    const action = rule?.action ?? this.#default;
    const source = rule ? "rule" : "default";
    const reason = rule ? `rule ${rule.name ? `"${rule.name}"` : `#${this.#rules.indexOf(rule) + 1}`} says ${action}` : `no rule matched; default is ${action}`;
    if (action === "allow") return { choice: rule?.always ? "allow_always" : "allow_once", source, reason };
    if (action === "deny") return { choice: rule?.always ? "reject_always" : "reject_once", source, reason };
    if (!this.#ask) {
      if (this.#fallback === "fail") return { choice: "cancel", source: "fallback", reason: `${reason}, but nobody can be asked (fallback: fail)`, failure: new PermissionRequiredError(subject.title, subject.toolCallId) };
      return { choice: "reject_once", source: "fallback", reason: `${reason}, but nobody can be asked (fallback: deny)` };
    }
    if (signal.aborted) return { choice: "cancel", source: "cancel", reason: "cancelled", cancelled: true };
    let answer: RaceAbortOutcome<PermissionAnswer | (string & {})>;
    try {
      answer = await raceAbort(Promise.resolve().then(() => this.#ask?.({ ...subject, options, reason }, signal) ?? "deny"), signal);
    } catch (e) {
      return { choice: "reject_once", source: "handler", reason: `the permission handler failed (${e instanceof Error ? e.message : String(e)}); rejected` };
    }
    if (answer.aborted) return { choice: "cancel", source: "cancel", reason: "cancelled", cancelled: true };
    const mapped = answerToChoice(answer.value, options);
    return { choice: mapped.choice, option: mapped.option, source: "handler", reason: mapped.note ?? "answered by the permission handler" };
  }

  #remember(subject: PermissionSubject, kind: acp.PermissionOptionKind): void {
    if (!this.#memory) return;
    if (kind === "allow_always") this.#memory.set(memoryKey(subject), "allow");
    else if (kind === "reject_always") this.#memory.set(memoryKey(subject), "deny");
  }
}

interface Decided {
  choice: PermissionChoice | "cancel";
  /** The exact option a handler picked by id. */
  option?: acp.PermissionOption;
  source: PermissionResolution["source"];
  reason: string;
  cancelled?: boolean;
  failure?: PermissionRequiredError;
}

/** Kind plus normalized target; never call ids or free model text beyond the title fallback. */
function memoryKey(subject: PermissionSubject): string {
  if (subject.command !== undefined) return `${subject.kind}|cmd|${subject.command}`;
  if (subject.paths.length > 0) return `${subject.kind}|paths|${[...subject.paths].sort().join("\u0000")}`;
  return `${subject.kind}|title|${subject.title}`;
}

function stripNullish<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null && v !== undefined)) as Partial<T>;
}

