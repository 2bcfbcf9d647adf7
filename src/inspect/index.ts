// agentkit-acp inspect: tap, trace, analyzer and the page's server.
export { Analyzer } from "./analyze.js";
export { DriveController, type DriveOptions } from "./drive.js";
export { redactMessage, REDACTED } from "../core/redact.js";
export { diffLines } from "./diff.js";
export { normalize, recordedCwds, replayTrace, type ReplayOptions, type ReplayResult } from "./replay.js";
export { PageServer, PortInUseError, type DriveAction, type PageServerOptions } from "./server.js";
export { startTap, type Tap, type TapEnd, type TapLaunch, type TapOptions } from "./tap.js";
export { startRecording, startRecordingWorker, type LocalRecorder, type Recorder, type RecorderOptions } from "./recorder.js";
export { readTrace, TraceWriter, type ReadTrace } from "./trace.js";
export { agentTracingEnv, decodeTraces, savedSpan, startOtlpReceiver, type OtlpReceiver } from "./otlp.js";
export type * from "./types.js";
