// Worker side of startRecordingWorker (see recorder.ts).
import { parentPort, workerData } from "node:worker_threads";
import { startRecording, type Recorder, type RecorderOptions } from "./recorder.js";
import { PortInUseError } from "./server.js";
import type { Direction, PendingAsk, ReplayDiffLine, StatusInfo, TraceNote, TraceSpan } from "./types.js";

type ToWorker =
  | { type: "line"; ts: number; from: Direction; line: string }
  | { type: "message"; ts: number; from: Direction; message: unknown }
  | { type: "note"; note: TraceNote }
  | { type: "spans"; ts: number; spans: TraceSpan[] }
  | { type: "status"; status: Partial<StatusInfo> }
  | { type: "asks"; asks: PendingAsk[] }
  | { type: "replay"; diff: ReplayDiffLine[] }
  | { type: "close" };

const port = parentPort;
if (port) {
  let recorder: Recorder | undefined;
  try {
    recorder = await startRecording(workerData as RecorderOptions);
    port.postMessage({ type: "ready", url: recorder.url, ...(recorder.otlpEndpoint ? { otlpEndpoint: recorder.otlpEndpoint } : {}) });
  } catch (e) {
    port.postMessage({ type: "error", message: e instanceof Error ? e.message : String(e), ...(e instanceof PortInUseError ? { portInUse: { host: e.host, port: e.port } } : {}) });
  }
  port.on("message", (m: ToWorker) => {
    if (!recorder) return;
    if (m.type === "line") recorder.line(m.ts, m.from, m.line);
    else if (m.type === "message") recorder.message(m.ts, m.from, m.message);
    else if (m.type === "note") recorder.note(m.note);
    else if (m.type === "spans") recorder.spans(m.ts, m.spans);
    else if (m.type === "status") recorder.setStatus(m.status);
    else if (m.type === "asks") recorder.setAsks(m.asks);
    else if (m.type === "replay") recorder.setReplay(m.diff);
    else void recorder.close().then(() => port.postMessage({ type: "closed" }));
  });
}
