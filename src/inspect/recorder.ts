import { Worker } from "node:worker_threads";
import { Analyzer } from "./analyze.js";
import { parseLine } from "./lines.js";
import { redactMessage } from "./redact.js";
import { PageServer, PortInUseError } from "./server.js";
import { TraceWriter } from "./trace.js";
import type { Direction, StatusInfo, TraceHeader, TraceNote } from "./types.js";

export interface RecorderOptions {
  host: string;
  port: number;
  status: StatusInfo;
  tracePath: string;
  header: TraceHeader;
  redact: boolean;
}

/** What runs beside a tap: trace file, analyzer and page server, fed whole wire lines. */
export interface Recorder {
  readonly url: string;
  line(ts: number, from: Direction, line: string): void;
  note(note: TraceNote): void;
  setStatus(status: Partial<StatusInfo>): void;
  close(): Promise<void>;
}

/** The recording pipeline itself (parse, redact, write the trace, analyze, serve the page). */
export async function startRecording(options: RecorderOptions): Promise<Recorder> {
  const analyzer = new Analyzer();
  const trace = new TraceWriter(options.tracePath, options.header);
  let server: PageServer;
  try {
    server = await PageServer.start({ analyzer, host: options.host, port: options.port, status: options.status });
  } catch (e) {
    trace.close();
    throw e;
  }
  return {
    url: server.url,
    line(ts, from, line) {
      const raw = parseLine(line);
      const message = options.redact ? redactMessage(raw) : raw;
      trace.message(ts, from, message);
      analyzer.add(ts, from, message);
    },
    note(note) {
      trace.note(note);
      analyzer.note(note);
    },
    setStatus: (status) => server.setStatus(status),
    async close() {
      trace.close();
      await server.close();
    },
  };
}

type FromWorker = { type: "ready"; url: string } | { type: "error"; portInUse?: { host: string; port: number }; message: string } | { type: "closed" };

/**
 * The recording pipeline on a worker thread, so that parsing, validation and the page never
 * delay the relay: the tap's thread only forwards bytes and posts whole lines.
 */
export async function startRecordingWorker(options: RecorderOptions): Promise<Recorder> {
  const worker = new Worker(new URL("./recorder-worker.js", import.meta.url), { workerData: options });
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
  const url = first.type === "ready" ? first.url : "";
  return {
    url,
    line: (ts, from, line) => worker.postMessage({ type: "line", ts, from, line }),
    note: (note) => worker.postMessage({ type: "note", note }),
    setStatus: (status) => worker.postMessage({ type: "status", status }),
    async close() {
      const closed = next().catch(() => undefined);
      worker.postMessage({ type: "close" });
      await closed;
      await worker.terminate();
    },
  };
}
