// Preload of bench/gc-probe.ts (node --import): moves the protocol's stdout to fd 3, so that V8's
// --trace-gc output (written to fd 1) stays apart from it, and marks each prompt in that output on
// SIGUSR2. With GC_PROBE_SURVIVORS=PREFIX, the first SIGUSR2 also starts V8's sampling heap
// profiler (objects dropped as GCs collect them), stopped after the first young-generation GC that
// follows: PREFIX-PID.json holds what the first prompt allocated that survived that scavenge.
import { writeFileSync, writeSync } from "node:fs";
import { Session } from "node:inspector";
import net from "node:net";
import { PerformanceObserver, constants } from "node:perf_hooks";

const out = new net.Socket({ fd: 3, readable: false, writable: true });
Object.defineProperty(process, "stdout", { configurable: true, enumerable: true, get: () => out });

const survivors = process.env.GC_PROBE_SURVIVORS;
let sampling = survivors ? "idle" : "off";
const session = survivors ? new Session() : undefined;
session?.connect();
process.on("SIGUSR2", () => {
  writeSync(1, "MARK\n");
  if (sampling !== "idle") return;
  sampling = "on";
  session.post("HeapProfiler.startSampling", { samplingInterval: 256, includeObjectsCollectedByMajorGC: false, includeObjectsCollectedByMinorGC: false });
});
if (session) {
  new PerformanceObserver((list) => {
    if (sampling !== "on" || !list.getEntries().some((entry) => entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR)) return;
    sampling = "done";
    session.post("HeapProfiler.stopSampling", (error, result) => {
      if (!error) writeFileSync(`${survivors}-${process.pid}.json`, JSON.stringify(result.profile));
    });
  }).observe({ entryTypes: ["gc"] });
}
