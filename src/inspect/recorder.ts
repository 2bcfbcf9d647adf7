import { Worker } from "node:worker_threads";
import { builtFile } from "../core/package-files.js";
import { settledWithin } from "../core/process/group.js";
import { Analyzer, MAX_SPANS, MAX_SPANS_PER_TRACE } from "./analyze.js";
import { parseLine } from "./lines.js";
import { redactMessage, redactSecrets, redactSecretsIn } from "../core/redact.js";
import { PageServer, PortInUseError, type DriveAction } from "./server.js";
import { startOtlpReceiver, type OtlpReceiver } from "./otlp.js";
import { TraceWriter } from "./trace.js";
import type { Direction, PendingAsk, ReplayDiffLine, StatusInfo, TraceHeader, TraceNote, TraceSpan } from "./types.js";

export interface RecorderOptions {
  host: string;
  port: number;
  status: StatusInfo;
  /** Where to write the trace (none: view mode). */
  trace?: { path: string; header: TraceHeader };
  redact: boolean;
  /** The page's access token (default: random). */
  token?: string;
  /** Run an OTLP/HTTP receiver for the agent's spans (modes that start an agent). */
  otlp?: boolean;
}

/** Every mode's recording pipeline: redact, write the trace, analyze, serve the page. */
export interface Recorder {
  readonly url: string;
  /** Where the agent is to export its traces (with `otlp`): see otlp.ts agentTracingEnv. */
  readonly otlpEndpoint: string | undefined;
  /** A wire line as read (parsed here). */
  line(ts: number, from: Direction, line: string): void;
  message(ts: number, from: Direction, message: unknown): void;
  note(note: TraceNote): void;
  /** Spans the agent exported (or a trace file kept). */
  spans(ts: number, spans: TraceSpan[]): void;
  setStatus(status: Partial<StatusInfo>): void;
  setAsks(asks: PendingAsk[]): void;
  setReplay(diff: ReplayDiffLine[]): void;
  close(): Promise<void>;
}

/** The pipeline on this thread also knows when the user closed the page. */
export interface LocalRecorder extends Recorder {
  /** See PageServer.closedByUser. */
  closedByUser(graceMs: number): Promise<void>;
}

/** The pipeline on this thread; `drive` takes the page's drive-mode actions. */
export async function startRecording(options: RecorderOptions & { drive?: DriveAction }): Promise<LocalRecorder> {
  const analyzer = new Analyzer();
  // The agent's command line may carry a key (`--api-key sk-…`): shown and saved redacted too.
  const text = (s: string): string => (options.redact ? redactSecrets(s) : s);
  const status = (s: Partial<StatusInfo>): Partial<StatusInfo> => (s.agent === undefined ? s : { ...s, agent: text(s.agent) });
  const trace = options.trace ? new TraceWriter(options.trace.path, { ...options.trace.header, agent: text(options.trace.header.agent) }) : undefined;
  let server: PageServer;
  let receiver: OtlpReceiver | undefined;
  const spans = (ts: number, list: TraceSpan[]): void => {
    const dropped = analyzer.droppedSpans;
    const kept = analyzer.addSpans(options.redact ? redactSecretsIn(list) : list);
    if (kept.length > 0) trace?.spans(ts, kept);
    if (dropped === 0 && analyzer.droppedSpans > 0) note({ ts, note: { level: "warning", text: `spans beyond ${MAX_SPANS_PER_TRACE} per trace or ${MAX_SPANS} in all are not kept` } });
  };
  try {
    if (options.otlp) receiver = await startOtlpReceiver((list) => spans(Date.now(), list));
    server = await PageServer.start({ analyzer, host: options.host, port: options.port, status: { ...options.status, ...status(options.status) }, ...(options.drive ? { drive: options.drive } : {}), ...(options.token ? { token: options.token } : {}) });
  } catch (e) {
    trace?.close();
    await receiver?.close();
    throw e;
  }
  const message = (ts: number, from: Direction, raw: unknown): void => {
    // Structural (MCP env/headers, authenticate, terminal env), then secret-shaped text anywhere.
    const m = options.redact ? redactSecretsIn(redactMessage(raw)) : raw;
    trace?.message(ts, from, m);
    analyzer.add(ts, from, m);
  };
  function note(raw: TraceNote): void {
    const redacted = { ...raw, note: { ...raw.note, text: text(raw.note.text) } };
    trace?.note(redacted);
    analyzer.note(redacted);
  }
  return {
    url: server.url,
    otlpEndpoint: receiver?.endpoint,
    line: (ts, from, line) => message(ts, from, parseLine(line)),
    message,
    note,
    spans,
    setStatus: (s) => server.setStatus(status(s)),
    setAsks: (asks) => server.setAsks(asks),
    setReplay: (diff) => server.setReplay(diff),
    closedByUser: (graceMs) => server.closedByUser(graceMs),
    async close() {
      await receiver?.close();
      trace?.close();
      await server.close();
    },
  };
}

type FromWorker = { type: "ready"; url: string; otlpEndpoint?: string } | { type: "error"; portInUse?: { host: string; port: number }; message: string } | { type: "closed" };

/**
 * The recording pipeline on a worker thread, so that parsing, validation and the page never
 * delay the relay: the tap's thread only forwards bytes and posts whole lines.
 */
export async function startRecordingWorker(options: RecorderOptions): Promise<Recorder> {
  const worker = new Worker(builtFile("inspect", "recorder-worker.js"), { workerData: options });
  const next = (): Promise<FromWorker> =>
    new Promise((resolve, reject) => {
      const onError = (e: Error): void => reject(e);
      worker.once("error", onError);
      worker.once("message", (m: FromWorker) => {
        worker.off("error", onError);
        resolve(m);
      });
    });
  const first = await next();
  if (first.type === "error") {
    await worker.terminate();
    throw first.portInUse ? new PortInUseError(first.portInUse.host, first.portInUse.port) : new Error(first.message);
  }
  return {
    url: first.type === "ready" ? first.url : "",
    otlpEndpoint: first.type === "ready" ? first.otlpEndpoint : undefined,
    line: (ts, from, line) => worker.postMessage({ type: "line", ts, from, line }),
    message: (ts, from, message) => worker.postMessage({ type: "message", ts, from, message }),
    note: (note) => worker.postMessage({ type: "note", note }),
    spans: (ts, spans) => worker.postMessage({ type: "spans", ts, spans }),
    setStatus: (status) => worker.postMessage({ type: "status", status }),
    setAsks: (asks) => worker.postMessage({ type: "asks", asks }),
    setReplay: (diff) => worker.postMessage({ type: "replay", diff }),
    async close() {
      const closed = next().catch(() => undefined);
      worker.postMessage({ type: "close" });
      await settledWithin(closed, 5_000); // the trace is written line by line: nothing is lost by not waiting longer
      await worker.terminate();
    },
  };
}
