import { isAbsolute, resolve } from "node:path";
import type { CancellationHandle, Logger, LoopObserver, TranscriptObserver } from "../core/index.js";
import { CancellationController, ConfigError, createStderrLogger, newId } from "../core/index.js";
import type { ModelAdapter, ThinkingLevel } from "../model/types.js";
import type { CommandRunner, FileOperations, PermissionPolicy } from "../tools/index.js";
import { LocalCommandRunner, LocalFileOperations, ToolRegistry, defaultPermissionPolicy } from "../tools/index.js";
import { LoopDriver } from "./driver.js";
import { ObserverHub } from "./observers.js";
import type { SessionConfig } from "./types.js";

interface AgentSettings {
  model: ModelAdapter;
  tools: ToolRegistry;
  permissions: PermissionPolicy;
  observers: LoopObserver[];
  transcriptObservers: TranscriptObserver[];
  cancellation: CancellationHandle | undefined;
  files: FileOperations | undefined;
  commands: CommandRunner | undefined;
  logger: Logger;
  systemPrompt: string | undefined;
  maxTurns: number;
  maxOutputTokens: number | undefined;
  thinking: ThinkingLevel | undefined;
}

/**
 * Model calls one prompt may make (each tool round is one) unless `maxTurns` says otherwise; past it the turn ends
 * `max_turns`.
 */
export const DEFAULT_MAX_TURNS = 50;

/** A configured agent: model, tools, policy, observers. `start()` opens a session. */
export class Agent {
  readonly #settings: AgentSettings;

  private constructor(settings: AgentSettings) {
    this.#settings = settings;
  }

  static builder(): AgentBuilder {
    return new AgentBuilder((settings) => new Agent(settings));
  }

  get model(): ModelAdapter {
    return this.#settings.model;
  }

  start(config: SessionConfig = {}): LoopDriver {
    const s = this.#settings;
    const sessionId = config.snapshot?.sessionId ?? config.sessionId ?? newId("sess");
    const cwd = resolve(config.cwd ?? process.cwd());
    if (config.cwd !== undefined && !isAbsolute(config.cwd)) throw new ConfigError(`session cwd must be absolute, got "${config.cwd}"`);
    const roots = [cwd, ...(config.additionalDirectories ?? []).map((d) => resolve(cwd, d))];
    const hub = new ObserverHub(sessionId, s.observers, [...s.transcriptObservers, ...(config.transcriptObservers ?? [])], s.logger);
    return new LoopDriver(
      { sessionId, cwd, roots },
      {
        model: s.model,
        tools: s.tools,
        permissions: s.permissions,
        files: s.files ?? new LocalFileOperations(),
        commands: s.commands ?? new LocalCommandRunner(),
        cancellation: s.cancellation ?? new CancellationController().handle(),
        hub,
        logger: s.logger,
        systemPrompt: s.systemPrompt,
        maxTurns: s.maxTurns,
        maxOutputTokens: s.maxOutputTokens,
        thinking: s.thinking,
        metadata: { ...config.snapshot?.metadata, ...config.metadata },
      },
      config.snapshot ? structuredClone(config.snapshot.items) : [],
    );
  }
}

/**
 * Configures an `Agent` step by step (from `Agent.builder()`): model, tools, permission policy, observers, limits;
 * `build()` checks that a model was given.
 */
export class AgentBuilder {
  #model: ModelAdapter | undefined;
  #tools = new ToolRegistry();
  #permissions: PermissionPolicy | undefined;
  readonly #observers: LoopObserver[] = [];
  readonly #transcriptObservers: TranscriptObserver[] = [];
  #cancellation: CancellationHandle | undefined;
  #files: FileOperations | undefined;
  #commands: CommandRunner | undefined;
  #logger: Logger | undefined;
  #systemPrompt: string | undefined;
  #maxTurns = DEFAULT_MAX_TURNS;
  #maxOutputTokens: number | undefined;
  #thinking: ThinkingLevel | undefined;
  readonly #create: (settings: AgentSettings) => Agent;

  /** @internal */
  constructor(create: (settings: AgentSettings) => Agent) {
    this.#create = create;
  }

  model(model: ModelAdapter): this {
    this.#model = model;
    return this;
  }
  tools(tools: ToolRegistry): this {
    this.#tools = tools;
    return this;
  }
  /** Default: reads inside the roots allowed, edits and commands ask, outside the roots denied. */
  permissions(policy: PermissionPolicy): this {
    this.#permissions = policy;
    return this;
  }
  observer(observer: LoopObserver): this {
    this.#observers.push(observer);
    return this;
  }
  transcriptObserver(observer: TranscriptObserver): this {
    this.#transcriptObservers.push(observer);
    return this;
  }
  cancellation(handle: CancellationHandle): this {
    this.#cancellation = handle;
    return this;
  }
  /** Where file tools read and write (default: the local disk; an ACP client's fs/* can back it). */
  fileOperations(files: FileOperations): this {
    this.#files = files;
    return this;
  }
  /** Where the shell tool runs commands (default: local process groups; an ACP client terminal can back it). */
  commandRunner(commands: CommandRunner): this {
    this.#commands = commands;
    return this;
  }
  logger(logger: Logger): this {
    this.#logger = logger;
    return this;
  }
  systemPrompt(prompt: string): this {
    this.#systemPrompt = prompt;
    return this;
  }
  /** Model calls allowed in one turn before it ends with `max_turns`. */
  maxTurns(count: number): this {
    if (!Number.isInteger(count) || count < 1) throw new ConfigError(`maxTurns must be a positive integer, got ${count}`);
    this.#maxTurns = count;
    return this;
  }
  maxOutputTokens(count: number): this {
    this.#maxOutputTokens = count;
    return this;
  }
  thinking(level: ThinkingLevel): this {
    this.#thinking = level;
    return this;
  }

  build(): Agent {
    if (!this.#model) throw new ConfigError("Agent.builder(): a model is required (call .model(adapter))");
    return this.#create({
      model: this.#model,
      tools: this.#tools,
      permissions: this.#permissions ?? defaultPermissionPolicy(),
      observers: [...this.#observers],
      transcriptObservers: [...this.#transcriptObservers],
      cancellation: this.#cancellation,
      files: this.#files,
      commands: this.#commands,
      logger: this.#logger ?? createStderrLogger("warn"),
      systemPrompt: this.#systemPrompt,
      maxTurns: this.#maxTurns,
      maxOutputTokens: this.#maxOutputTokens,
      thinking: this.#thinking,
    });
  }
}
