import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { agentLaunch, agentPresets } from "../acp/client/index.js";
import {
  agentTracingEnv,
  DriveController,
  PortInUseError,
  readTrace,
  recordedCwds,
  replayTrace,
  savedSpan,
  startRecording,
  startRecordingWorker,
  startTap,
  type DriveAction,
  type ReadTrace,
  type LocalRecorder,
  type Recorder,
  type RecorderOptions,
  type StatusInfo,
  type TraceHeader,
} from "../inspect/index.js";
import { packageRoot } from "../core/package-files.js";
import { absolutePath } from "./argv.js";
import { parseCommandLine, read, renderHelp, switchOption, textOption, withDefault, type CommandSchema, type OptionValues } from "./options.js";
import { UsageError } from "./usage.js";
import { processIo, type CliIo } from "./io.js";

/**
 * The page outlives the tap by this much (or until it is closed): the editor (or `prompt`) ends
 * the tap with everything in its process group when the turn is done, often before the user opened it.
 */
const LINGER_MS = 600_000;

const options = {
  port: withDefault(
    textOption("port", "P", `listen on this port (default: a random free port)`, {
      parse: (text, flag) => {
        if (!/^\d+$/.test(text) || Number(text) > 65535) throw new UsageError(`${flag} must be a number 0–65535, got "${text}"`);
        return Number(text);
      },
    }),
    0,
  ),
  host: withDefault(textOption("host", "H", `listen on this address (default {default}; anything else exposes the traffic)`), "127.0.0.1"),
  trace: textOption("trace", "FILE", `write the JSONL trace here (tap, drive, replay; default: a new file in the temp dir)`, { parse: (text) => resolve(text) }),
  noRedact: switchOption("no-redact", `keep secrets (MCP env/header values, authenticate params, key-shaped text) in the page and trace`),
  agent: textOption("agent", "AGENT", `a preset (${Object.keys(agentPresets()).join(", ")}) or a whole command line`),
  cwd: textOption("cwd", "DIR", `drive mode: default session cwd; replay: the sessions' cwd instead of the recorded one;
all modes: the agent's working directory`, { parse: (text) => absolutePath(text, process.cwd()) }),
  // Shown in the usage lines above the options.
  open: textOption("open", "FILE", "view a saved trace", { hidden: true, parse: (text) => resolve(text) }),
  replay: textOption("replay", "FILE", "send a trace's client messages again", { hidden: true, parse: (text) => resolve(text) }),
  verbose: switchOption("verbose", `drive/replay: show the agent's stderr`),
  linger: textOption("linger", "MS", `tap: keep the page served this long after the relay ends (a fast turn ends it
at once), in a process of its own, or until the page is closed (default ${LINGER_MS};
0: close with the relay; with --port P it always closes, freeing P for the next tap).
view: exit after MS or once the page is closed (default, and 0: run until Ctrl-C)`, {
    parse: read.whole(0, "milliseconds"),
    env: { name: "AGENTKIT_INSPECT_LINGER", help: "the default of --linger" },
  }),
  help: switchOption("help", `show this help`, { short: "h" }),
};

export const inspectSchema: CommandSchema<typeof options> = {
  command: "inspect",
  intro: `Usage:
  agentkit-acp inspect [options] -- AGENT_CMD [ARGS…]   tap: relay an editor ↔ agent, show and record it
  agentkit-acp inspect [options] --agent AGENT          drive: the page is the client
  agentkit-acp inspect [options] --open FILE            view a saved trace
  agentkit-acp inspect [options] --replay FILE --agent AGENT
                                                        send a trace's client messages again, show the differences

The page's URL (with its access token) is printed on stderr; stdout carries only the relayed protocol.

`,
  options,
  sections: { main: "Options:" },
  column: 20,
  outro: `Exit codes: 0 ok; 1 the agent could not be started (or a replay differs); 2 usage error or port in use.
Tap mode exits when either side ends (the agent's process group is ended); the other modes run until Ctrl-C.
Tap, drive and replay start the agent with its traces sent to the page (OTEL_TRACES_EXPORTER,
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the Timing view's span timeline) unless the environment says where
traces go; OTEL_TRACES_EXPORTER=none keeps the agent from tracing.
`,
};

export const inspectHelp = renderHelp(inspectSchema);

interface InspectArgs extends Omit<OptionValues<typeof options>, "noRedact" | "cwd" | "help"> {
  redact: boolean;
  cwd: string;
  /** Whether --cwd was given (replay remaps the recorded session directories to it). */
  cwdGiven: boolean;
  /** The agent's command line after `--` (tap mode). */
  command: string[] | undefined;
}

function parseArgs(argv: string[]): InspectArgs | "help" {
  const { values, afterDashes } = parseCommandLine(inspectSchema, argv, process.env, { splitAtDashes: true });
  if (values.help) return "help";
  const { noRedact, help: _help, ...rest } = values;
  const args: InspectArgs = { ...rest, redact: !noRedact, cwd: values.cwd ?? process.cwd(), cwdGiven: values.cwd !== undefined, command: afterDashes };
  const modes = [args.command !== undefined, args.open !== undefined, args.replay !== undefined, args.agent !== undefined && args.replay === undefined].filter(Boolean).length;
  if (modes !== 1) throw new UsageError("choose one mode: `-- AGENT_CMD …` (tap), --agent (drive), --open FILE (view) or --replay FILE --agent AGENT");
  if (args.command?.length === 0) throw new UsageError("no agent command after --");
  if (args.replay !== undefined && args.agent === undefined) throw new UsageError("--replay needs --agent AGENT");
  return args;
}

const say = (text: string): void => void process.stderr.write(`agentkit-acp inspect: ${text}\n`);

/** How long a closed page may take to come back (a reload) before a lingering view exits. */
const RELOAD_GRACE_MS = 5_000;

/**
 * Tap mode, once the relay ended: a view of the trace takes over the page at the same address
 * and token (the open page's event stream reconnects to it), in a process group of its own so the
 * editor's ending of ours leaves it, bounded by `lingerMs` and ended when the page is closed.
 */
function handOverPage(url: string, trace: string, lingerMs: number): void {
  const page = new URL(url);
  const token = page.searchParams.get("t") ?? "";
  const child = spawn(process.execPath, [join(packageRoot(), "bin", "agentkit-acp.js"), "inspect", "--open", trace, "--host", page.hostname.replace(/^\[|\]$/g, ""), "--port", page.port, "--linger", String(lingerMs)], {
    detached: true,
    stdio: "ignore",
    env: { ...process.env, AGENTKIT_INSPECT_TOKEN: token },
  });
  child.on("error", () => undefined); // the page then closes with the tap, as it did before
  child.unref();
}

/** A lingering view's end: a signal, its lifetime, or the user closing the page. */
function untilLingerEnds(recorder: LocalRecorder, lingerMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const lifetime = new Promise<void>((done) => (timer = setTimeout(done, lingerMs)));
  return Promise.race([untilSignal(), lifetime, recorder.closedByUser(RELOAD_GRACE_MS)]).finally(() => clearTimeout(timer));
}

/**
 * Replay: the recorded session directories, remapped to --cwd when it is given; a recorded one
 * that is gone otherwise gets a hint (the agent refuses it, and every later request of that
 * session then names a session that was never made).
 */
function replayCwds(read: ReadTrace, args: InspectArgs, recorder: Recorder): Map<string, string> {
  const recorded = recordedCwds(read.lines);
  if (args.cwdGiven) return new Map(recorded.filter((cwd) => cwd !== args.cwd).map((cwd) => [cwd, args.cwd]));
  for (const cwd of recorded.filter((dir) => !existsSync(dir))) {
    const text = `the trace's session directory ${cwd} is gone: the agent will refuse it; replay in another one with --cwd DIR`;
    say(text);
    recorder.note({ ts: Date.now(), note: { level: "warning", text } });
  }
  return new Map();
}

/**
 * The environment that sends the agent's spans to the recorder's OTLP receiver (the page's span
 * timeline), unless the user's environment already says where traces go: then the page says so.
 */
function tracingEnv(recorder: Recorder): Record<string, string> {
  if (!recorder.otlpEndpoint) return {};
  const { add, userSet } = agentTracingEnv(recorder.otlpEndpoint, process.env);
  if (userSet) recorder.note({ ts: Date.now(), note: { level: "info", text: `${userSet} is set: the agent's traces go where it says, so the Timing view shows no spans` } });
  return add;
}

/** Resolves on the first SIGINT/SIGTERM (a human ends the page-serving modes). */
function untilSignal(): Promise<void> {
  return new Promise((done) => {
    process.once("SIGINT", () => done());
    process.once("SIGTERM", () => done());
  });
}


/** Tap mode: the relay runs here; recording, analysis and the page run on a worker thread. */
async function runTap(args: InspectArgs, argv: string[], options: RecorderOptions): Promise<number> {
  const [command = "", ...rest] = argv;
  let recorder: Recorder;
  try {
    recorder = await startRecordingWorker(options);
  } catch (e) {
    say(e instanceof PortInUseError ? `${e.message}: choose another with --port, or leave --port out for a free one` : `cannot start: ${e instanceof Error ? e.message : String(e)}`);
    return 2;
  }
  say(`page ${recorder.url}`);
  say(`trace ${options.trace?.path ?? ""}`);
  let sawAgent = false;
  const tap = startTap({
    command,
    args: rest,
    cwd: args.cwd,
    env: { ...process.env, ...tracingEnv(recorder) },
    input: process.stdin,
    output: process.stdout,
    onLine: (ts, from, line) => {
      if (from === "agent") sawAgent = true;
      recorder.line(ts, from, line);
    },
  });
  recorder.setStatus({ state: "running" });
  const stop = (): void => void tap.stop();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const end = await tap.done;
  process.stdout.end();
  if (end.spawnError || (end.endedBy === "agent" && !sawAgent && end.code !== 0)) {
    const text = end.spawnError ? `the agent could not be started: ${command}: ${end.spawnError.message}` : `the agent exited (${end.signal ?? `code ${end.code}`}) before sending anything: ${argv.join(" ")}`;
    say(text);
    recorder.note({ ts: Date.now(), note: { level: "error", text } });
    recorder.setStatus({ state: "failed", detail: text });
    // The page keeps saying why until the editor lets go of us (bounded).
    await new Promise<void>((done) => {
      const t = setTimeout(done, 30_000);
      const finish = (): void => {
        clearTimeout(t);
        done();
      };
      if (process.stdin.readableEnded) return finish();
      process.stdin.once("close", finish).once("end", finish).resume();
    });
    await recorder.close();
    return 1;
  }
  const lingerMs = args.port === 0 && options.trace ? (args.linger ?? LINGER_MS) : 0;
  recorder.setStatus({ state: "ended", detail: `ended by the ${end.endedBy}${lingerMs > 0 ? `; the page stays for ${Math.ceil(lingerMs / 60_000)} min or until it is closed` : ""}` });
  await recorder.close();
  if (lingerMs > 0) handOverPage(recorder.url, options.trace!.path, lingerMs);
  return end.endedBy === "client" ? 0 : (end.code ?? 1);
}

/** `io.stdout` carries `--help` (in-process callers); the rest of inspect uses the process's own streams. */
export async function runInspect(argv: string[], io: CliIo = processIo()): Promise<number> {
  let args: InspectArgs;
  try {
    const parsed = parseArgs(argv);
    if (parsed === "help") {
      io.stdout.write(inspectHelp);
      return 0;
    }
    args = parsed;
  } catch (e) {
    say(`${e instanceof Error ? e.message : String(e)}\nRun \`agentkit-acp inspect --help\` for the options.`);
    return 2;
  }
  const mode: StatusInfo["mode"] = args.command ? "tap" : args.open ? "view" : args.replay ? "replay" : "drive";
  const agent = args.command?.join(" ") ?? args.agent ?? "";
  const tracePath = args.trace ?? join(tmpdir(), `agentkit-inspect-${new Date().toISOString().replace(/[:.]/g, "-")}-${process.pid}.jsonl`);
  const trace = mode === "view" ? undefined : { path: tracePath, header: { agentkitInspect: 1, startedAt: Date.now(), mode, agent, redacted: args.redact } satisfies TraceHeader };
  // A view taking over a tap's page keeps its token (handOverPage); from the environment, never the command line.
  const token = mode === "view" ? process.env.AGENTKIT_INSPECT_TOKEN : undefined;
  const options: RecorderOptions = { host: args.host, port: args.port, redact: args.redact, otlp: mode !== "view", status: { mode, agent, state: "starting", ...(trace ? { trace: trace.path } : {}) }, ...(trace ? { trace } : {}), ...(token ? { token } : {}) };
  if (mode === "tap") return runTap(args, args.command as string[], options);

  const actions: { drive: DriveAction } = { drive: () => Promise.reject(new Error("only drive mode takes actions")) };
  let recorder: LocalRecorder;
  try {
    recorder = await startRecording({ ...options, drive: (action, body) => actions.drive(action, body) });
  } catch (e) {
    say(e instanceof PortInUseError ? `${e.message}: choose another with --port, or leave --port out for a free one` : `cannot start: ${e instanceof Error ? e.message : String(e)}`);
    return 2;
  }
  say(`page ${recorder.url}`);
  if (trace) say(`trace ${trace.path}`);
  const run = new PageRun(recorder);
  if (mode === "view") return run.view(args.open as string, args.linger);
  if (mode === "replay") return run.replay(args);
  return run.drive(args, actions);
}

/** A page being served (view, replay or drive mode), with what every mode does to it. */
class PageRun {
  constructor(readonly recorder: LocalRecorder) {}

  fail(text: string): void {
    say(text);
    this.recorder.note({ ts: Date.now(), note: { level: "error", text } });
    this.recorder.setStatus({ state: "failed", detail: text });
  }

  async finish(code: number): Promise<number> {
    await this.recorder.close();
    return code;
  }

  open(file: string): ReadTrace | undefined {
    try {
      const read = readTrace(file);
      for (const w of read.warnings) {
        say(`warning: ${file}: ${w}`);
        this.recorder.note({ ts: Date.now(), note: { level: "warning", text: w } });
      }
      return read;
    } catch (e) {
      say(`cannot read ${file}: ${e instanceof Error ? e.message : String(e)}`);
      return undefined;
    }
  }

  /** A recorded trace, shown until a signal (or, lingering after a tap, until its lifetime ends or the page is closed). */
  async view(file: string, lingerMs: number | undefined): Promise<number> {
    const read = this.open(file);
    if (!read) return this.finish(2);
    for (const l of read.lines) {
      if ("note" in l) this.recorder.note(l);
      else if ("spans" in l) this.recorder.spans(l.ts, l.spans.map(savedSpan).filter((s) => s !== undefined));
      else this.recorder.message(l.ts, l.from, l.message);
    }
    this.recorder.setStatus({ agent: read.header?.agent ?? "(unknown agent)", state: "ended", trace: file });
    await (lingerMs ? untilLingerEnds(this.recorder, lingerMs) : untilSignal());
    return this.finish(0);
  }

  /** A trace's client messages sent again to an agent; the page shows how its answers differ. */
  async replay(args: InspectArgs): Promise<number> {
    const read = this.open(args.replay as string);
    if (!read) return this.finish(2);
    const recorder = this.recorder;
    recorder.setStatus({ state: "running" });
    const result = await replayTrace({ ...agentLaunch(args.agent as string), cwd: args.cwd, env: { ...process.env, ...tracingEnv(recorder) }, lines: read.lines, cwdMap: replayCwds(read, args, recorder), onMessage: (ts, from, m) => recorder.message(ts, from, m) });
    recorder.setReplay(result.diff);
    if (result.error) this.fail(result.error);
    else {
      recorder.setStatus({ state: "ended", detail: `${result.differences} differing line(s)` });
      say(result.differences === 0 ? "replay: the agent answered the same (ids and timestamps ignored)" : `replay: ${result.differences} differing message line(s); the page shows the diff`);
    }
    await untilSignal();
    return this.finish(result.error || result.differences > 0 ? 1 : 0);
  }

  /** Drive mode: this package's client does the work; the page posts actions. */
  async drive(args: InspectArgs, actions: { drive: DriveAction }): Promise<number> {
    const recorder = this.recorder;
    const controller = new DriveController({
      config: { ...agentLaunch(args.agent as string), cwd: args.cwd, env: tracingEnv(recorder), stderr: args.verbose ? "inherit" : "ignore" },
      onMessage: (ts, from, m) => recorder.message(ts, from, m),
      onAsks: (asks) => recorder.setAsks(asks),
    });
    actions.drive = (action, body) => driveAction(controller, action, body);
    let failed = false;
    try {
      const client = await controller.start();
      client.onLifecycle((e) => {
        if (e.type !== "agent_exited") return;
        const text = `the agent ended: ${e.error.message}`;
        say(text);
        recorder.note({ ts: Date.now(), note: { level: "error", text } });
        recorder.setStatus({ state: "ended", detail: text });
      });
      recorder.setStatus({ state: "running", drive: { cwd: args.cwd, loadSession: controller.canLoad } });
    } catch (e) {
      failed = true;
      this.fail(`the agent could not be started: ${e instanceof Error ? e.message : String(e)}`);
    }
    await untilSignal();
    await controller.close().catch(() => undefined);
    return this.finish(failed ? 1 : 0);
  }
}

/** The page's drive-mode actions (`POST /api/<action>`). */
async function driveAction(controller: DriveController, action: string, body: Record<string, unknown>): Promise<unknown> {
  const str = (k: string): string => {
    const v = body[k];
    if (typeof v !== "string" || v === "") throw new Error(`"${k}" is required`);
    return v;
  };
  const opt = (k: string): string | undefined => (typeof body[k] === "string" && body[k] !== "" ? (body[k] as string) : undefined);
  switch (action) {
    case "new":
      return { sessionId: await controller.newSession(opt("cwd")) };
    case "load":
      return { sessionId: await controller.loadSession(str("sessionId"), opt("cwd")) };
    case "prompt":
      return controller.prompt(str("sessionId"), str("text"));
    case "cancel":
      return controller.cancel(str("sessionId"));
    case "permission":
      return controller.answer(str("key"), str("optionId"));
    case "mode":
      return controller.setMode(str("sessionId"), str("modeId"));
    case "config":
      return controller.setConfigOption(str("sessionId"), str("configId"), typeof body.value === "boolean" ? body.value : str("value"));
    default:
      throw new Error(`unknown action ${action}`);
  }
}
