import { constants as fsConstants } from "node:fs";
import { AgentKitError } from "../errors.js";

/**
 * What this package can promise on each operating system, in one place. Linux and macOS are
 * supported (package.json `os`); elsewhere the kit runs, but a safety feature that cannot work
 * there is refused with `PlatformFeatureError` or named at start (`platformLimits`), never
 * dropped silently.
 */

/** The platforms this package supports (the same list as package.json `os`). */
export const SUPPORTED_PLATFORMS: readonly NodeJS.Platform[] = ["linux", "darwin"];

/** Thrown where a safety feature cannot work on this platform (rather than running without it). */
export class PlatformFeatureError extends AgentKitError {
  readonly feature: string;
  readonly platform: NodeJS.Platform;
  constructor(feature: string, platform: NodeJS.Platform, message: string) {
    super("platform", message);
    this.name = "PlatformFeatureError";
    this.feature = feature;
    this.platform = platform;
  }
}

/** What the process seam can rely on for `platform`. */
export interface PlatformTraits {
  /** POSIX process groups: a signal to `-pgid` reaches a whole tree (else: `taskkill /T`). */
  processGroups: boolean;
  /** Linux /proc: process start times (pid reuse), group members, zombies, open descriptors. */
  procfs: boolean;
  /** `O_NOFOLLOW` opens: a symlink in the last component is refused by the kernel. */
  noFollow: boolean;
}

/** The traits of `platform` (the running one by default). `noFollowFlag` is the running Node's `O_NOFOLLOW`. */
export function platformTraits(platform: NodeJS.Platform = process.platform, noFollowFlag: number | undefined = fsConstants.O_NOFOLLOW): PlatformTraits {
  return {
    processGroups: platform !== "win32",
    procfs: platform === "linux",
    noFollow: platform !== "win32" && (noFollowFlag ?? 0) !== 0,
  };
}

/**
 * `O_NOFOLLOW` for an open that must not follow a symlink; throws `PlatformFeatureError` where the
 * flag does not exist (it would be 0: the open would follow links without a word).
 */
export function noFollowFlag(what: string, platform: NodeJS.Platform = process.platform, flag: number | undefined = fsConstants.O_NOFOLLOW): number {
  if (!platformTraits(platform, flag).noFollow || flag === undefined) {
    throw new PlatformFeatureError("no-follow", platform, `${what} needs O_NOFOLLOW opens (refusing symlinks race-free), which ${platform} does not have: supported are ${SUPPORTED_PLATFORMS.join(" and ")}`);
  }
  return flag;
}

/**
 * Sentences naming what does not work on `platform`, for a long-running command to log once at
 * start (empty on Linux, where everything does).
 */
export function platformLimits(platform: NodeJS.Platform = process.platform): string[] {
  const traits = platformTraits(platform);
  const limits: string[] = [];
  if (!SUPPORTED_PLATFORMS.includes(platform)) limits.push(`${platform} is not a supported platform (${SUPPORTED_PLATFORMS.join(", ")})`);
  if (!traits.procfs) {
    limits.push(
      `no /proc on ${platform}: a process group whose leader exited cannot be told from a new one that reused its id, ` +
        "zombies count as running, and the orphan watchdog ends only the groups it was told of",
    );
  }
  if (!traits.processGroups) limits.push(`no process groups on ${platform}: trees are ended with taskkill /T /F, and the orphan watchdog does not run`);
  if (!traits.noFollow) limits.push(`no O_NOFOLLOW on ${platform}: the file-system host service is refused`);
  return limits;
}
