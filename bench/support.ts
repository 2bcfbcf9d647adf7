/** What the benchmarks read off a process and how they summarise runs (Linux: /proc). */
import { readFileSync, readdirSync } from "node:fs";

/** CPU time of every thread of a process so far, in ms (schedstat: ns resolution, unlike getrusage's ticks). */
export function cpuMs(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // the thread ended meanwhile
    }
  }
  return ns / 1e6;
}

function statusKb(pid: number, field: "VmHWM" | "VmRSS"): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) : NaN;
}

/** Peak resident set so far, in MB. */
export function peakRssMb(pid: number): number {
  return statusKb(pid, "VmHWM") / 1024;
}

/** Resident set now, in KiB. */
export function currentRssKb(pid: number): number {
  return statusKb(pid, "VmRSS");
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

/** The value below which `p` percent of the values lie (nearest rank). */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/** The median, and the lowest and highest value. */
export function spread(values: number[]): { median: number; low: number; high: number } {
  return { median: median(values), low: Math.min(...values), high: Math.max(...values) };
}
