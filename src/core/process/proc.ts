import { existsSync, readdirSync, readFileSync } from "node:fs";
import { readlink } from "node:fs/promises";
import { join } from "node:path";

/**
 * The one reader of Linux /proc. Every answer is `undefined` ("unknown") where /proc cannot
 * say: off Linux, for a process that is gone or not ours to read. Callers decide what unknown
 * means for them (see group.ts: an unknown start time never counts as proof of reuse).
 */
export interface ProcReader {
  /** Whether /proc is there to read (Linux). */
  readonly available: boolean;
  /** When `pid` started (clock ticks since boot): with the pid, it names one process even after the pid is reused. */
  startTime(pid: number): string | undefined;
  /** Whether `pid` runs, is a zombie (exited, not reaped) or is gone. */
  state(pid: number): "running" | "zombie" | "gone" | undefined;
  /** Pids of running (non-zombie) processes whose process group is `pgid`. */
  groupMembers(pgid: number): number[] | undefined;
  /** The process groups of the processes whose environment holds the entry `NAME=value`. */
  groupsWithEnv(entry: string): number[] | undefined;
  /** `pid`'s command line, arguments joined by spaces. */
  commandLine(pid: number): string | undefined;
  /** CPU time (user + system) of this process's children it has reaped so far, in ms (clock ticks of 10 ms); for measurement. */
  reapedChildrenCpuMs(): number | undefined;
  /** The soft RLIMIT_NOFILE of this process; undefined also when unlimited. */
  openFileLimit(): number | undefined;
  /** Where this process's open descriptor `fd` really points. */
  descriptorPath(fd: number): Promise<string | undefined>;
}

export interface ProcReaderOptions {
  /** Default: the running platform; anything but "linux" reads nothing (tests inject it). */
  platform?: NodeJS.Platform;
  /** Default /proc (tests point it at a fake tree). */
  root?: string;
}

/** Fields of /proc/PID/stat after the parenthesised command (which may hold spaces and ")"). */
function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}
const STATE = 0;
const PGRP = 2;
const CHILDREN_USER = 13;
const CHILDREN_SYSTEM = 14;
const START_TIME = 19;
/** USER_HZ, the unit of /proc's CPU times: 100 on every Linux architecture Node runs on. */
const MS_PER_TICK = 10;

/** A reader of `root` (default /proc) on `platform` (default the running one). */
export function procReader(options: ProcReaderOptions = {}): ProcReader {
  const platform = options.platform ?? process.platform;
  const root = options.root ?? "/proc";
  let available: boolean | undefined;
  const isAvailable = (): boolean => (available ??= platform === "linux" && existsSync(join(root, "self", "stat")));
  const read = (pid: number | string, file: string, encoding: BufferEncoding = "utf8"): string | undefined => {
    if (!isAvailable()) return undefined;
    try {
      return readFileSync(join(root, String(pid), file), encoding);
    } catch {
      return undefined;
    }
  };
  const fields = (pid: number | string): string[] | undefined => {
    const stat = read(pid, "stat");
    return stat === undefined ? undefined : statFields(stat);
  };
  const pids = (): string[] | undefined => {
    if (!isAvailable()) return undefined;
    try {
      return readdirSync(root).filter((entry) => /^\d+$/.test(entry));
    } catch {
      return undefined;
    }
  };
  const running = (stat: string[]): boolean => stat[STATE] !== "Z" && stat[STATE] !== "X";
  return {
    get available() {
      return isAvailable();
    },
    startTime: (pid) => fields(pid)?.[START_TIME],
    state(pid) {
      if (!isAvailable()) return undefined;
      const stat = fields(pid);
      if (stat === undefined) return "gone";
      return running(stat) ? "running" : "zombie";
    },
    groupMembers(pgid) {
      return pids()?.filter((pid) => {
        const stat = fields(pid);
        return stat !== undefined && running(stat) && Number(stat[PGRP]) === pgid;
      }).map(Number);
    },
    groupsWithEnv(entry) {
      const needle = `\0${entry}\0`;
      const groups = new Set<number>();
      for (const pid of pids() ?? []) {
        // latin1: one char per byte, so any environment (not only UTF-8) is searched as it is.
        const environ = read(pid, "environ", "latin1");
        if (environ === undefined || !`\0${environ}`.includes(needle)) continue;
        const pgid = Number(fields(pid)?.[PGRP]);
        if (Number.isInteger(pgid) && pgid > 1) groups.add(pgid);
      }
      return isAvailable() ? [...groups] : undefined;
    },
    commandLine(pid) {
      return read(pid, "cmdline")?.split("\0").filter(Boolean).join(" ");
    },
    reapedChildrenCpuMs() {
      const stat = fields("self");
      return stat === undefined ? undefined : (Number(stat[CHILDREN_USER]) + Number(stat[CHILDREN_SYSTEM])) * MS_PER_TICK;
    },
    openFileLimit() {
      const line = /^Max open files\s+(\d+)/m.exec(read("self", "limits") ?? "");
      return line?.[1] === undefined ? undefined : Number(line[1]);
    },
    async descriptorPath(fd) {
      if (!isAvailable()) return undefined;
      try {
        return await readlink(join(root, "self", "fd", String(fd)));
      } catch {
        return undefined;
      }
    },
  };
}

/** The reader of this machine's /proc. */
export const proc: ProcReader = procReader();
