import { statSync } from "node:fs";
import {
  AcpClient,
  ClientClosedError,
  ClientPermissionPolicy,
  agentLaunch,
  isAgentUrl,
  type AcpAgentConfig,
  type AcpSession,
  type PermissionHandler,
  type PermissionPreset,
  type PromptResult,
} from "../acp/client/index.js";
import { createStderrLogger, enableOrphanWatchdog, platformLimits, verifySandbox } from "../core/index.js";
import { routeConsoleToLogger } from "./console-route.js";
import { withCommandTracing } from "./tracing.js";
import { AuditTrail } from "./prompt-audit.js";
import { EXIT, exitCodeFor, parsePromptArgs, promptHelp, type PromptArgs } from "./prompt-args.js";
import { stripControls } from "./terminal-safe.js";
import { UsageError } from "./usage.js";
import { agentEnvFor, processIo, type CliIo } from "./io.js";
import { terminalAsk } from "./prompt-ask.js";
import { hostOptionsFromArgs } from "./prompt-host.js";
import { agentSandboxLine, agentSandboxReport } from "./prompt-sandbox.js";
import { JsonRenderer, TextRenderer, describeFailure } from "./prompt-render.js";
import { continueSessionWhenFree, runSessionAction } from "./prompt-sessions.js";
import { declineForms, terminalForm } from "./prompt-form.js";
import { declineUrls, oneAtATime, terminalUrl } from "./prompt-url.js";

export { EXIT, exitCodeFor } from "./prompt-args.js";

const PRESET_POLICIES = new Set(["deny", "ask", "allow-reads", "allow-all"]);

/** Everything a prompt run needs; `demo` builds one of these too. */
export interface PromptFlow {
  args: PromptArgs;
  /** Prompts sent one after another in the same session. */
  prompts: string[];
  /** Extra environment for the agent. */
  agentEnv?: Record<string, string>;
  /** Replaces the `--permissions` policy (the demo's non-interactive auto-answer). */
  policy?: ClientPermissionPolicy;
  /** Called before each prompt is sent (the demo prints what it sends). */
  announce?: (prompt: string, index: number) => void;
}

export async function runPrompt(argv: string[], io: CliIo = processIo()): Promise<number> {
  let args: PromptArgs;
  try {
    args = parsePromptArgs(argv, io.cwd);
  } catch (error) {
    return usage(io, error);
  }
  if (args.help) {
    io.stdout.write(promptHelp);
    return EXIT.endTurn;
  }
  if (args.list || args.archive !== undefined || args.unarchive !== undefined) {
    let launch: AcpAgentConfig;
    try {
      launch = agentConfig(args.agent, args.cwd, io);
    } catch (error) {
      return usage(io, error);
    }
    return runSessionAction(io, args, { ...launch, protocol: args.protocol, stderr: args.verbose ? "inherit" : "ignore", clientInfo: { name: "agentkit-acp prompt", version: "0.1.0" } });
  }
  let text = args.text;
  if (text === "-" || (text === undefined && !io.stdin.isTTY)) text = (await readStdin(io.stdin)).trim();
  if (!text) return usage(io, new UsageError("no prompt text: pass TEXT, or - to read it from stdin"));
  return withCommandTracing("agentkit-acp prompt", io, () => runPromptFlow({ args, prompts: [text] }, text === args.text, io));
}

function usage(io: CliIo, error: unknown): number {
  io.stderr.write(`agentkit-acp prompt: ${error instanceof Error ? error.message : String(error)}\nRun \`agentkit-acp prompt --help\` for the options.\n`);
  return EXIT.usage;
}

/** Launch config for `--agent`: a URL (token from AGENTKIT_ACP_TOKEN), a preset name or a whole command line. */
export function agentConfig(agent: string, cwd: string, io: CliIo, env?: Record<string, string>): AcpAgentConfig {
  if (/^(https?|wss?):/i.test(agent)) {
    if (!isAgentUrl(agent)) throw new UsageError(`--agent "${agent}" is not a valid URL; e.g. http://127.0.0.1:8080/acp or ws://127.0.0.1:8080/acp`);
    const token = io.env.AGENTKIT_ACP_TOKEN?.trim();
    return { url: agent, cwd, ...(token ? { token } : {}) };
  }
  checkLocalCwd(cwd);
  return { ...agentLaunch(agent), cwd, ...agentEnvFor(io, env) };
}

/** `--model` for another agent: its "model" session option (category model), if it offers one. */
async function chooseModel(session: AcpSession, model: string): Promise<void> {
  const option = session.configOptions?.find((o) => o.category === "model" || o.id === "model");
  if (!option) throw new UsageError(`--model: the agent offers no model choice (no "model" session option)`);
  const values = option.type === "select" ? option.options.flatMap((o) => ("options" in o ? o.options : [o])).map((o) => o.value) : [];
  if (!values.includes(model)) throw new UsageError(`--model: the agent has no model "${model}" (it has: ${values.join(", ") || "none"})`);
  await session.setConfigOption(option.id, model);
}

/** A local agent starts in `cwd`: a missing one would surface as the spawn failing on node (ENOENT). */
function checkLocalCwd(cwd: string): void {
  const stat = statSync(cwd, { throwIfNoEntry: false });
  if (stat === undefined) throw new UsageError(`--cwd ${cwd}: no such directory`);
  if (!stat.isDirectory()) throw new UsageError(`--cwd ${cwd}: not a directory`);
}

/**
 * What Ctrl-C, SIGTERM / SIGHUP and a closed stdout do to a running prompt: the first Ctrl-C
 * cancels the turn, the second ends the agent; a termination signal ends the agent's group and
 * exits 128+n; a reader of stdout that went away cancels the turn (like SIGPIPE).
 */
class PromptSignals {
  client: AcpClient | undefined;
  handle: { cancel(): Promise<void> } | undefined;
  interrupts = 0;
  killed = false;
  readerGone = false;
  #terminating = false;
  readonly #io: CliIo;

  constructor(io: CliIo) {
    this.#io = io;
    io.stdout.on("error", this.#onStdoutError);
  }

  readonly onInterrupt = (): void => {
    this.interrupts += 1;
    if (this.interrupts === 1) {
      this.#io.stderr.write("\n(cancelling the turn … press Ctrl-C again to end the agent)\n");
      void this.handle?.cancel();
    } else if (!this.killed) {
      this.killed = true;
      this.#io.stderr.write("\n(ending the agent)\n");
      void this.client?.kill();
    }
  };

  /** The orderly path gets 3 s; process.exit's hook SIGKILLs any group still tracked, so the bound is firm. */
  readonly #onTerminate = (signal: NodeJS.Signals): void => {
    if (this.#terminating) return;
    this.#terminating = true;
    this.#io.stderr.write(`\n(${signal}: ending the agent)\n`);
    const code = 128 + (signal === "SIGHUP" ? 1 : 15);
    setTimeout(() => process.exit(code), 3_000).unref();
    void (this.client ? this.client.kill() : Promise.resolve()).finally(() => process.exit(code));
  };

  /** Later writes fail quietly instead of crashing. */
  readonly #onStdoutError = (error: NodeJS.ErrnoException): void => {
    if (this.readerGone) return;
    this.readerGone = true;
    this.#io.stderr.write(`\n(stdout closed${error.code ? ` (${error.code})` : ""}: cancelling the turn)\n`);
    void this.handle?.cancel();
  };

  readonly #onSigterm = (): void => this.#onTerminate("SIGTERM");
  readonly #onSighup = (): void => this.#onTerminate("SIGHUP");

  /** The process's signals (only when the command owns the process). */
  listen(): void {
    process.on("SIGINT", this.onInterrupt);
    process.on("SIGTERM", this.#onSigterm);
    process.on("SIGHUP", this.#onSighup);
  }

  /** Ctrl-C goes back to its default before the agent is closed. */
  stopInterrupts(): void {
    process.off("SIGINT", this.onInterrupt);
  }

  /** Removed only after the close: a signal during it still ends everything. */
  stop(): void {
    this.stopInterrupts();
    process.off("SIGTERM", this.#onSigterm);
    process.off("SIGHUP", this.#onSighup);
    this.#io.stdout.off("error", this.#onStdoutError);
  }
}

type Renderer = JsonRenderer | TextRenderer;

/** The client's configuration, permission policy and audit trail from the flags; a UsageError names a bad one. */
function preparePrompt(flow: PromptFlow, io: CliIo, interactive: boolean, out: Renderer, signals: PromptSignals): { config: AcpAgentConfig; policy: ClientPermissionPolicy; audit: AuditTrail; terminals: (id: string) => string | undefined } {
  const { args } = flow;
  // Permission questions, forms and pages to open share the terminal: one at a time.
  const questions = oneAtATime();
  const policy = flow.policy ?? choosePolicy(args.permissions, interactive ? terminalAsk(io.stdin, io.stderr, signals.onInterrupt, args.raw, questions) : undefined, interactive, io.stderr);
  let audit: AuditTrail;
  try {
    audit = new AuditTrail(out instanceof JsonRenderer ? (line) => out.line(line) : undefined, args.auditLog);
  } catch (error) {
    throw new UsageError(`--audit-log: cannot append to ${args.auditLog ?? ""}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const { terminalOutput, ...host } = hostOptionsFromArgs(args, policy, effectivePermissions(flow, interactive), audit.host, io.env.PATH);
  let launch = agentConfig(args.agent, args.cwd, io, flow.agentEnv);
  // Our own agent takes the model on its command line (serve's model selection, key checks included).
  if (args.model !== undefined && args.agent === "self" && "args" in launch && launch.args) launch = { ...launch, args: [...launch.args, "--model", args.model] };
  const config: AcpAgentConfig = {
    ...launch,
    ...host,
    // Agent questions (ask_user) and pages to open (a key page): on the terminal, one at a time,
    // or declined with the reason when there is none.
    elicitation: interactive ? terminalForm(io.stdin, io.stderr, signals.onInterrupt, true, questions) : declineForms,
    urlElicitation: interactive ? terminalUrl(io.stdin, io.stderr, signals.onInterrupt, questions) : declineUrls,
    // --verbose shows the agent's stderr, cleaned like everything else it sends unless --raw.
    // Hidden otherwise, but for an inspect tap's page and trace (`--agent "agentkit-acp inspect -- AGENT"`): they are for the user.
    stderr: !args.verbose ? (line: string) => void (inspectTapLine(line) && io.stderr.write(`${line}\n`)) : args.raw ? "inherit" : (line: string) => void io.stderr.write(`${stripControls(line)}\n`),
    clientInfo: { name: "agentkit-acp prompt", version: "0.1.0" },
    protocol: args.protocol,
  };
  if (config.sandbox && config.url !== undefined) {
    audit.close();
    throw new UsageError("--sandbox runs a local agent process; a URL agent runs elsewhere");
  }
  return { config, policy, audit, terminals: terminalOutput };
}

/** A new, forked or continued session, as the flags ask; its id said on stderr (or as a JSON line). */
async function openSession(client: AcpClient, flow: PromptFlow, io: CliIo, out: Renderer, safe: (text: string) => string): Promise<AcpSession> {
  const { args } = flow;
  await applyProviders(client, args.providers);
  const waiting = (until: string): boolean => io.stderr.write(`(session ${safe(args.session ?? "")} is still leased by another instance until ${until}; waiting for it)\n`);
  const session = args.fork !== undefined ? await client.forkSession(args.fork) : args.session === undefined ? await client.newSession() : await continueSessionWhenFree(client, args.session, waiting);
  if (args.model !== undefined && args.agent !== "self") await chooseModel(session, args.model);
  if (args.title !== undefined) await session.setTitle(args.title);
  if (args.json && out instanceof JsonRenderer) {
    out.line({ type: "session", sessionId: session.sessionId, agent: client.agentInfo ?? null, pid: client.pid ?? null, cwd: args.cwd, protocolVersion: client.protocolVersion });
  } else if (args.fork) {
    io.stderr.write(`(forked session ${safe(args.fork)} into ${safe(session.sessionId)})\n`);
  } else if (args.session) {
    io.stderr.write(`(continuing session ${safe(session.sessionId)})\n`);
  }
  return session;
}

/** Each prompt in turn, streamed to the renderer and the audit trail, until one does not end its turn. */
async function runPrompts(flow: PromptFlow, session: AcpSession, out: Renderer, audit: AuditTrail, signals: PromptSignals): Promise<PromptResult | undefined> {
  let result: PromptResult | undefined;
  for (const [index, prompt] of flow.prompts.entries()) {
    flow.announce?.(prompt, index);
    signals.handle = session.cancellationHandle();
    signals.interrupts = 0;
    if (signals.readerGone) break;
    const stream = session.stream(prompt);
    for await (const event of stream) {
      audit.session(event);
      out.event(event);
    }
    result = await stream.result;
    if (result.stopReason !== "end_turn") break;
  }
  return result;
}

export async function runPromptFlow(flow: PromptFlow, stdinFree = true, io: CliIo = processIo()): Promise<number> {
  const { args } = flow;
  if (io.ownsProcess) {
    // The agent's group and hosted terminals end with us even when we are SIGKILLed.
    enableOrphanWatchdog();
    routeConsoleToLogger(createStderrLogger("warn", "agentkit-acp prompt"));
    // What cannot work on this platform is said at start (nothing on Linux).
    for (const limit of platformLimits()) io.stderr.write(`agentkit-acp prompt: ${limit}\n`);
  }
  const interactive = stdinFree && io.stdin.isTTY === true && io.stderr.isTTY === true;
  const terminals: { output: (id: string) => string | undefined } = { output: () => undefined };
  const out = args.json ? new JsonRenderer(io.stdout) : new TextRenderer(io.stdout, io.stdout.isTTY === true && !io.env.NO_COLOR, (id) => terminals.output(id), args.raw);
  const safe = (text: string): string => (args.raw ? text : stripControls(text));
  const signals = new PromptSignals(io);
  let prepared: ReturnType<typeof preparePrompt>;
  try {
    prepared = preparePrompt(flow, io, interactive, out, signals);
    const { config: { sandbox }, audit } = prepared;
    // Installed is not enough: one empty command proves the sandbox runs here before the agent starts.
    if (sandbox) await verifySandbox(sandbox.sandbox).catch((error: unknown) => {
      audit.close();
      throw error;
    });
  } catch (error) {
    signals.stop();
    return usage(io, error);
  }
  const { config, policy, audit } = prepared;
  terminals.output = prepared.terminals;
  if (config.sandbox) io.stderr.write(`${agentSandboxLine(config)}\n`);
  if (io.ownsProcess) signals.listen();
  let session: AcpSession | undefined;
  try {
    const client = (signals.client = await AcpClient.start(config, policy));
    const reported = agentSandboxReport(client.initializeResponse._meta);
    if (reported !== undefined) io.stderr.write(`${reported}\n`);
    session = await openSession(client, flow, io, out, safe);
    const result = await runPrompts(flow, session, out, audit, signals);
    // On stderr also when piped (stdout stays the answer alone): how to continue is always worth knowing.
    if (!args.json) io.stderr.write(`session: ${safe(session.sessionId)} (continue with --session ${safe(session.sessionId)})\n`);
    return exitCodeFor(signals.readerGone ? "cancelled" : (result?.stopReason ?? "end_turn"));
  } catch (error) {
    // A bad --provider value found once the agent answered is a usage error; a missing capability is an error (1), as for --add-dir.
    const code = signals.killed && error instanceof ClientClosedError ? EXIT.interrupted : error instanceof UsageError ? EXIT.usage : EXIT.error;
    if (out instanceof JsonRenderer) out.error(error, code);
    io.stderr.write(`agentkit-acp prompt: ${safe(describeFailure(error))}\n`);
    if (!args.json && session && code !== EXIT.usage) io.stderr.write(`session: ${safe(session.sessionId)} (continue with --session ${safe(session.sessionId)})\n`);
    return code;
  } finally {
    signals.stopInterrupts();
    await signals.client?.close();
    audit.close();
    signals.stop();
  }
}

/** `--provider`: providers/set keeps the provider's current protocol (else its first supported one). */
async function applyProviders(client: AcpClient, wanted: PromptArgs["providers"]): Promise<void> {
  if (wanted.length === 0) return;
  const known = await client.listProviders();
  for (const { providerId, baseUrl } of wanted) {
    const info = known.find((p) => p.providerId === providerId);
    if (!info) throw new UsageError(`--provider: the agent has no provider "${providerId}" (it has: ${known.map((p) => p.providerId).join(", ") || "none"})`);
    if (baseUrl === undefined) {
      await client.disableProvider(providerId);
      continue;
    }
    const apiType = info.current?.apiType ?? info.supported[0];
    if (apiType === undefined) throw new UsageError(`--provider: provider "${providerId}" names no protocol it supports`);
    await client.setProvider(providerId, { apiType, baseUrl });
  }
}

/** What `--permissions` amounts to for the host gate: the policy's default (ask on a terminal, else deny); a flow's own policy gates nothing more. */
function effectivePermissions(flow: PromptFlow, interactive: boolean): string | undefined {
  if (flow.policy) return undefined;
  return flow.args.permissions ?? (interactive ? "ask" : "deny");
}

/** `--permissions`: a preset or a JSON file; default `ask` with a terminal, else `deny`. */
export function choosePolicy(value: string | undefined, ask: PermissionHandler | undefined, interactive: boolean, stderr: NodeJS.WritableStream = process.stderr): ClientPermissionPolicy {
  const name = value ?? (interactive ? "ask" : "deny");
  if (PRESET_POLICIES.has(name)) {
    if (!interactive && (name === "ask" || name === "allow-reads")) {
      stderr.write(`(no terminal to ask on: permission questions are denied)\n`);
    }
    return ClientPermissionPolicy.preset(name as PermissionPreset, ask);
  }
  // A mistyped preset ("allow-read") would otherwise be reported as an unreadable file.
  if (statSync(name, { throwIfNoEntry: false }) === undefined) {
    throw new UsageError(`--permissions ${name}: neither a preset (${[...PRESET_POLICIES].join(", ")}) nor an existing policy file`);
  }
  return ClientPermissionPolicy.fromFile(name, ask);
}

async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * The lines an inspect tap announces itself with (`agentkit-acp inspect: page URL`, `… trace FILE`).
 * Only a loopback page address passes, so an agent cannot put a link of its choosing before the user.
 */
export function inspectTapLine(line: string): boolean {
  if (stripControls(line) !== line) return false;
  return /^agentkit-acp inspect: (page http:\/\/(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]|localhost):\d{1,5}\/\?t=[\w-]+|trace \/.*)$/.test(line);
}
